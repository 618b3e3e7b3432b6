import { describe, expect, it } from 'vitest';
import { formatTon, MoneyFormatError, NANOTONS_PER_TON, parseTon, tonAmount } from '../../src/domain/money.js';

describe('parseTon', () => {
  it.each([
    ['12.5', 12_500_000_000n],
    ['0.000000001', 1n],
    ['0', 0n],
    ['10', 10_000_000_000n],
    ['1.100000000', 1_100_000_000n],
    ['0.999999999', 999_999_999n],
    ['123456789.123456789', 123_456_789_123_456_789n],
  ])('parses %s', (text, nanotons) => {
    expect(parseTon(text)).toBe(nanotons);
  });

  it('has 10^9 nanotons per TON', () => {
    expect(NANOTONS_PER_TON).toBe(1_000_000_000n);
    expect(parseTon('1')).toBe(NANOTONS_PER_TON);
  });

  it.each(['1e2', '1.', '.5', '', ' 1', '1 ', '1.0000000001', '+1', '1,5', 'abc', '0x10', '--5', '١'])('rejects %j', (text) => {
    expect(() => parseTon(text)).toThrow(MoneyFormatError);
  });

  it('rejects negative amounts unless allowNegative', () => {
    expect(() => parseTon('-1')).toThrow(MoneyFormatError);
    expect(() => parseTon('-0.5')).toThrow(MoneyFormatError);
  });

  it('accepts negative amounts with allowNegative', () => {
    expect(parseTon('-5', { allowNegative: true })).toBe(-5_000_000_000n);
    expect(parseTon('-0.000000001', { allowNegative: true })).toBe(-1n);
    expect(parseTon('7', { allowNegative: true })).toBe(7_000_000_000n);
  });

  it('still rejects malformed negatives with allowNegative', () => {
    for (const text of ['-', '--5', '-1e2', '-.5', '-1.0000000001']) {
      expect(() => parseTon(text, { allowNegative: true })).toThrow(MoneyFormatError);
    }
  });
});

describe('formatTon', () => {
  it.each([
    [12_500_000_000n, '12.5'],
    [1n, '0.000000001'],
    [0n, '0'],
    [10_000_000_000n, '10'],
    [1_100_000_000n, '1.1'],
    [250_000_000n, '0.25'],
    [3_996_666_667n, '3.996666667'],
  ])('formats %s as %s', (nanotons, text) => {
    expect(formatTon(nanotons)).toBe(text);
  });

  it('formats negative amounts with a leading minus', () => {
    expect(formatTon(-5_000_000_000n)).toBe('-5');
    expect(formatTon(-1n)).toBe('-0.000000001');
    expect(formatTon(-12_500_000_000n)).toBe('-12.5');
  });

  it('never uses an exponent for large amounts', () => {
    expect(formatTon(10n ** 30n)).toBe(`1${'0'.repeat(21)}`);
  });
});

describe('round trips', () => {
  it.each(['12.5', '0.000000001', '0', '10', '1.1', '999999.999999999', '0.1'])('%s survives parse → format', (text) => {
    expect(formatTon(parseTon(text))).toBe(text);
  });

  it('normalises trailing zeros', () => {
    expect(formatTon(parseTon('1.100000000'))).toBe('1.1');
    expect(formatTon(parseTon('5.0'))).toBe('5');
    expect(formatTon(parseTon('007'))).toBe('7');
  });

  it('bigint → string → bigint is the identity', () => {
    for (const n of [0n, 1n, 9n, 10n, 999_999_999n, 1_000_000_000n, 1_000_000_001n, 123_456_789_012n, -42n]) {
      expect(parseTon(formatTon(n), { allowNegative: true })).toBe(n);
    }
  });
});

describe('tonAmount', () => {
  it('returns {value, currency: "TON"}', () => {
    expect(tonAmount(250_000_000n)).toEqual({ value: '0.25', currency: 'TON' });
    expect(tonAmount(0n)).toEqual({ value: '0', currency: 'TON' });
  });

  it('has exactly the two keys', () => {
    expect(Object.keys(tonAmount(1n)).sort()).toEqual(['currency', 'value']);
  });
});
