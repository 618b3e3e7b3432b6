import { describe, expect, it } from 'vitest';
import {
  definePricePlan,
  type PlanTier,
  parseMarkupPercent,
  parsePremiumUsd,
  parseStarUsd,
  parseTierSpec,
  tierIndex,
  tierJson,
  tiersFromJson,
} from '../../src/domain/price-plan.js';

/** Price plan definitions (src/domain/price-plan.ts): the refusals name the number; tiers pick by volume. */

const markup = (percent: string, from = 0n): PlanTier => ({ fromNanotons: from, markupPercent: parseMarkupPercent(percent) });

describe('validation refuses, naming the value', () => {
  it.each([
    [() => parseMarkupPercent('-5'), 'markup must not be negative, got -5'],
    [() => parseMarkupPercent('1000.5'), 'markup (percent) must be from 0 to 1000, got 1000.5'],
    [() => parseMarkupPercent('abc'), 'markup (percent) must be a non-negative decimal number, got "abc"'],
    [() => parseMarkupPercent('1e3'), 'got "1e3"'],
    [() => parseMarkupPercent('5.0000000001'), 'at most 9 decimal places, got 5.0000000001'],
    [() => parseStarUsd('2'), 'star price (USD per star) must be from 0.0001 to 1, got 2'],
    [() => parseStarUsd('0'), 'must be from 0.0001 to 1, got 0'],
    [() => parsePremiumUsd('5000', 3), 'premium 3 months price (USD) must be from 0.01 to 1000, got 5000'],
    [() => parseTierSpec('markup', '1000', undefined), 'a tier is VOLUME_TON:KEY=VALUE'],
    [() => parseTierSpec('markup', 'lots:markup=3', undefined), `a tier's volume must be a TON amount such as 1000 or 2.5, got "lots"`],
    [() => parseTierSpec('markup', '10:star=0.01', undefined), `the tier from 10 TON: a markup plan's tier takes markup, not "star"`],
    [() => parseTierSpec('markup', '10:markup=-1', undefined), `the tier from 10 TON's markup must not be negative, got -1`],
    [() => parseTierSpec('prices', '10:premium3=5', undefined), 'the tier from 10 TON needs star=USD'],
    [() => definePricePlan('Gold!', 'markup', [markup('1')]), 'a plan name is 1 to 40 lowercase letters'],
    [() => definePricePlan('default', 'markup', [markup('1')]), '"default" is the global PRICE_MARKUP_PERCENT'],
    [() => definePricePlan('gold', 'markup', [markup('1', 5n)]), 'the first tier starts at a volume of 0'],
    [() => definePricePlan('gold', 'markup', [markup('2'), markup('1', 10n), markup('0', 10n)]), 'tier volumes must increase: 0.00000001 TON follows 0.00000001 TON'],
    [() => definePricePlan('gold', 'prices', [markup('2')]), 'every tier of a prices plan gives prices'],
  ])('%#', (make, message) => {
    expect(make).toThrow(message);
  });

  it('accepts the bounds themselves', () => {
    expect(parseMarkupPercent('0')).toEqual({ units: 0n, scale: 0 });
    expect(parseMarkupPercent('1000')).toEqual({ units: 1000n, scale: 0 });
    expect(parseStarUsd('0.0001')).toEqual({ units: 1n, scale: 4 });
  });
});

describe('tiers', () => {
  const plan = definePricePlan('tiered', 'markup', [markup('5'), markup('3', 1000_000_000_000n), markup('1.5', 5000_000_000_000n)]);

  it.each([
    [0n, 0],
    [999_999_999_999n, 0],
    [1000_000_000_000n, 1],
    [4999_999_999_999n, 1],
    [5000_000_000_000n, 2],
    [10n ** 18n, 2],
  ])('%s nanotons → tier %s', (volume, tier) => {
    expect(tierIndex(plan, volume)).toBe(tier);
  });

  it('a prices tier keeps what it leaves out from the tier before; the stored form reads back the same', () => {
    const base = parseTierSpec('prices', '0:star=0.012,premium3=10,premium6=14,premium12=25', undefined);
    const next = parseTierSpec('prices', '100:star=0.011', base);
    expect(tierJson(next)).toEqual({ from_ton: '100', star_usd: '0.011', premium_3_usd: '10', premium_6_usd: '14', premium_12_usd: '25' });
    const stored = JSON.parse(JSON.stringify([base, next].map(tierJson)));
    expect(tiersFromJson('prices', stored)).toEqual([base, next]);
  });
});
