import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatTimestamp, readableTime } from '../../src/domain/time.js';

describe('formatTimestamp', () => {
  it.each([
    [0, '1970-01-01T00:00:00.000Z'],
    [951_782_400_000, '2000-02-29T00:00:00.000Z'],
    [1_709_251_199_999, '2024-02-29T23:59:59.999Z'],
    [1_798_761_600_007, '2027-01-01T00:00:00.007Z'],
    [4_107_542_400_000, '2100-03-01T00:00:00.000Z'],
    [253_402_300_799_999, '9999-12-31T23:59:59.999Z'],
  ])('writes %d as %s', (epochMs, text) => {
    expect(formatTimestamp(epochMs)).toBe(text);
  });

  it('writes what Date#toISOString writes, for any millisecond of years 1970–9999', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), (epochMs) => {
        expect(formatTimestamp(epochMs)).toBe(new Date(epochMs).toISOString());
      }),
      { numRuns: 20_000 },
    );
  });

  it('leaves times outside those years to Date (an expanded or negative year)', () => {
    for (const epochMs of [-1, 253_402_300_800_000, 1.5]) expect(formatTimestamp(epochMs)).toBe(new Date(epochMs).toISOString());
  });
});

describe('readableTime', () => {
  it('reads as the dashboard shows times, in UTC, seconds only when asked', () => {
    expect(readableTime(Date.UTC(2026, 10, 29, 7, 7, 9))).toBe('29 Nov 2026, 07:07 UTC');
    expect(readableTime(Date.UTC(2027, 0, 1, 0, 0, 5), true)).toBe('1 Jan 2027, 00:00:05 UTC');
  });
});
