import { describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { parseDecimal } from '../../src/domain/decimal.js';
import { formatDecimal, formatUsdt, MAINNET_USDT_MASTER, parseUsdt, UsdtFormatError, usdtToNanotons } from '../../src/domain/usdt.js';
import { jettonTransferLink, parseUsdtAmountInput } from '../../src/ton/transfer-link.js';

const d = (text: string) => parseDecimal(text) as NonNullable<ReturnType<typeof parseDecimal>>;

describe('USDT amounts and conversion', () => {
  test('USDT decimals in and out, 6 places at most', () => {
    expect(parseUsdt('25')).toBe(25_000_000n);
    expect(parseUsdt('0.000001')).toBe(1n);
    expect(formatUsdt(12_345_678n)).toBe('12.345678');
    expect(formatUsdt(25_000_000n)).toBe('25');
    for (const bad of ['', '-1', '1e3', '1.0000001', '1,5']) expect(() => parseUsdt(bad), bad).toThrow(UsdtFormatError);
    expect(formatDecimal(d('2.870'))).toBe('2.87');
    expect(formatDecimal(d('0.05'))).toBe('0.05');
  });

  test('TON = USDT ÷ rate × (1 − spread/100), rounded down to the nanoton, in integers', () => {
    expect(usdtToNanotons(25_000_000n, d('2.5'), d('1'))).toBe(9_900_000_000n);
    // 12.345678 ÷ 3.07 × 0.99 = 3.98117955048…
    expect(usdtToNanotons(12_345_678n, d('3.07'), d('1'))).toBe(3_981_179_550n);
    // 1 unit at a high rate: less than a nanoton is nothing, never rounded up.
    expect(usdtToNanotons(1n, d('1000001'), d('0'))).toBe(0n);
    expect(usdtToNanotons(1_000_000n, d('3'), d('0'))).toBe(333_333_333n);
    expect(usdtToNanotons(1_000_000n, d('3'), d('0.5'))).toBe(331_666_666n);
    // The largest Coins amount converts without overflow or loss.
    const max = 2n ** 120n - 1n;
    expect(usdtToNanotons(max, d('1'), d('0'))).toBe(max * 1000n);
    expect(() => usdtToNanotons(1n, d('0'), d('1'))).toThrow(RangeError);
  });

  test('the top-up link and amount field', () => {
    expect(jettonTransferLink('UQabc', 'EQmaster', 'K7QM3ZP8WD9', 25_500_000n)).toBe('ton://transfer/UQabc?jetton=EQmaster&amount=25500000&text=K7QM3ZP8WD9');
    expect(jettonTransferLink('UQabc', 'EQmaster', 'K7QM3ZP8WD9', undefined)).toBe('ton://transfer/UQabc?jetton=EQmaster&text=K7QM3ZP8WD9');
    expect(parseUsdtAmountInput(' 12,5 ')).toEqual({ ok: true, units: 12_500_000n });
    expect(parseUsdtAmountInput('')).toEqual({ ok: true, units: undefined });
    expect(parseUsdtAmountInput('0')).toMatchObject({ ok: false });
    expect(parseUsdtAmountInput('20000000')).toMatchObject({ ok: false, message: 'Enter at most 10000000 USDT.' });
  });
});

describe('USDT settings', () => {
  test('defaults: the mainnet master on mainnet, off on testnet, 1 % and 1 USDT', () => {
    expect(loadConfig({}).usdt).toEqual({ master: MAINNET_USDT_MASTER, spreadPercent: d('1'), minUnits: 1_000_000n });
    expect(loadConfig({ TON_NETWORK: 'testnet' }).usdt.master).toBeUndefined();
    expect(loadConfig({ USDT_MASTER: 'off' }).usdt.master).toBeUndefined();
    expect(loadConfig({ USDT_DEPOSIT_SPREAD_PERCENT: '2.5', USDT_DEPOSIT_MIN: '0.5' }).usdt).toMatchObject({ spreadPercent: d('2.5'), minUnits: 500_000n });
  });

  test('bad values are refused with the setting named', () => {
    expect(() => loadConfig({ USDT_MASTER: 'tether' })).toThrow(ConfigError);
    expect(() => loadConfig({ USDT_MASTER: 'tether' })).toThrow(/USDT_MASTER/);
    expect(() => loadConfig({ USDT_DEPOSIT_SPREAD_PERCENT: '100' })).toThrow(/USDT_DEPOSIT_SPREAD_PERCENT/);
    expect(() => loadConfig({ USDT_DEPOSIT_SPREAD_PERCENT: '-1' })).toThrow(/USDT_DEPOSIT_SPREAD_PERCENT/);
    expect(() => loadConfig({ USDT_DEPOSIT_MIN: '1.0000001' })).toThrow(/USDT_DEPOSIT_MIN/);
  });
});
