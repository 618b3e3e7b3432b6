import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { parseDecimal } from '../../src/domain/decimal.js';
import { formatTon } from '../../src/domain/money.js';
import { listPriceUsd, priceInNanotons } from '../../src/domain/pricing.js';
import type { Product } from '../../src/domain/products.js';

function dec(text: string) {
  const d = parseDecimal(text);
  if (!d) throw new Error(`bad decimal ${text}`);
  return d;
}

function price(product: Product, quantity: number, env: Record<string, string> = {}): bigint {
  const config = loadConfig(env);
  return priceInNanotons(listPriceUsd(config.prices, product, quantity), config.prices.markupPercent, config.tonUsdRate);
}

describe('pricing with the default configuration', () => {
  it.each([
    ['stars', 50, '0.25'],
    ['stars', 10_000, '50'],
    ['stars', 51, '0.255'],
    ['premium', 3, '3.996666667'], // 11.99 / 3 = 3.99666…  rounded up
    ['premium', 6, '5.33'], // 15.99 / 3 = 5.33 exactly
    ['premium', 12, '9.663333334'], // 28.99 / 3 = 9.66333…  rounded up
  ] as const)('%s × %i costs %s TON', (product, quantity, expected) => {
    const nanotons = price(product, quantity);
    expect(typeof nanotons).toBe('bigint');
    expect(formatTon(nanotons)).toBe(expected);
  });

  it('prices in exact nanotons', () => {
    expect(price('stars', 50)).toBe(250_000_000n);
    expect(price('premium', 3)).toBe(3_996_666_667n);
    expect(price('premium', 12)).toBe(9_663_333_334n);
  });
});

describe('markup and rate', () => {
  it('applies a 10% markup: 50 stars → 0.275', () => {
    expect(formatTon(price('stars', 50, { PRICE_MARKUP_PERCENT: '10' }))).toBe('0.275');
  });

  it('applies a fractional markup: 2.5% on 10000 stars → 51.25', () => {
    expect(formatTon(price('stars', 10_000, { PRICE_MARKUP_PERCENT: '2.5' }))).toBe('51.25');
  });

  it('rounds up with a rate of 3.1: 50 stars = 0.75/3.1 = 0.24193548387… → 0.241935484', () => {
    const nanotons = price('stars', 50, { TON_USD_RATE: '3.1' });
    expect(nanotons).toBe(241_935_484n);
    expect(formatTon(nanotons)).toBe('0.241935484');
  });

  it('rounds up even the smallest remainder', () => {
    // 1 USD / 3 = 0.333333333(3) → 0.333333334
    expect(priceInNanotons(dec('1'), dec('0'), dec('3'))).toBe(333_333_334n);
    // exact result: no rounding
    expect(priceInNanotons(dec('1'), dec('0'), dec('4'))).toBe(250_000_000n);
  });

  it('is independent of how decimals are written', () => {
    expect(priceInNanotons(dec('0.750'), dec('10.00'), dec('3.000'))).toBe(275_000_000n);
  });

  it('prices zero as zero', () => {
    expect(priceInNanotons(dec('0'), dec('0'), dec('3'))).toBe(0n);
  });

  it('refuses a zero rate', () => {
    expect(() => priceInNanotons(dec('1'), dec('0'), dec('0'))).toThrow(RangeError);
  });
});

describe('listPriceUsd', () => {
  it('multiplies the star price by the quantity', () => {
    const { prices } = loadConfig({});
    const usd = listPriceUsd(prices, 'stars', 100);
    expect(Number(usd.units) / 10 ** usd.scale).toBeCloseTo(1.5, 12);
  });

  it('uses the per-plan premium price', () => {
    const { prices } = loadConfig({ PRICE_PREMIUM_6_USD: '20' });
    expect(listPriceUsd(prices, 'premium', 6)).toEqual({ units: 20n, scale: 0 });
  });
});
