import { type Decimal, parseDecimal, pow10 } from './decimal.js';
import { formatTon, MoneyFormatError, parseTon } from './money.js';
import type { PriceRule } from './pricing.js';
import { PREMIUM_MONTHS, type PremiumMonths } from './products.js';
import { formatDecimal } from './usdt.js';

/**
 * Price plans (docs/operations.md "Price plans"): what an account pays instead of the global
 * PRICE_MARKUP_PERCENT. A plan is either a markup over the list price (`markup`) or its own USD
 * price per product (`prices`: per star, per Premium period), and has one or more tiers chosen
 * by the account's delivered volume over the last 30 days, in TON. The first tier starts at 0.
 * Everything is exact decimals and bigint nanotons; nothing here touches floating point.
 */
export type PlanKind = 'markup' | 'prices';

interface UsdPrices {
  starUsd: Decimal;
  premiumUsd: Record<PremiumMonths, Decimal>;
}

export type PlanTier = { fromNanotons: bigint; markupPercent: Decimal } | { fromNanotons: bigint; prices: UsdPrices };

export interface PricePlan {
  name: string;
  kind: PlanKind;
  /** Ascending by `fromNanotons`; the first starts at 0. */
  tiers: PlanTier[];
}

/** A refused plan definition: the message names the value and what is allowed. */
export class PlanError extends Error {}

/** The name `plan assign` takes for "no plan": the global PRICE_MARKUP_PERCENT. */
export const DEFAULT_PLAN = 'default';
const PLAN_NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;
const MAX_TIERS = 10;
/** Bounds of a sane plan; beyond them the number is a typo (docs/operations.md "Price plans"). */
const MAX_MARKUP_PERCENT = 1000n;
const STAR_USD = { min: '0.0001', max: '1' };
const PREMIUM_USD = { min: '0.01', max: '1000' };
const MAX_DECIMALS = 9;

function checkPlanName(name: string): string {
  if (!PLAN_NAME.test(name)) throw new PlanError(`a plan name is 1 to 40 lowercase letters, digits, - or _, starting with a letter or digit; got "${name}"`);
  if (name === DEFAULT_PLAN) throw new PlanError(`"${DEFAULT_PLAN}" is the global PRICE_MARKUP_PERCENT, not a plan that can be defined`);
  return name;
}

function compare(a: Decimal, b: Decimal): number {
  const scale = Math.max(a.scale, b.scale);
  const x = a.units * pow10(scale - a.scale);
  const y = b.units * pow10(scale - b.scale);
  return x < y ? -1 : x > y ? 1 : 0;
}

function decimalIn(label: string, text: string, bounds: { min: string; max: string }): Decimal {
  const value = parseDecimal(text);
  if (!value || text.trim() !== text) throw new PlanError(`${label} must be a non-negative decimal number, got "${text}"`);
  if (value.scale > MAX_DECIMALS) throw new PlanError(`${label} has at most ${MAX_DECIMALS} decimal places, got ${text}`);
  const [min, max] = [parseDecimal(bounds.min)!, parseDecimal(bounds.max)!];
  if (compare(value, min) < 0 || compare(value, max) > 0) throw new PlanError(`${label} must be from ${bounds.min} to ${bounds.max}, got ${text}`);
  return value;
}

/** A markup percentage: 0 to 1000 (a negative one is refused as not a number of this form). */
export function parseMarkupPercent(text: string, label = 'markup'): Decimal {
  if (/^\s*-/.test(text)) throw new PlanError(`${label} must not be negative, got ${text}`);
  return decimalIn(`${label} (percent)`, text, { min: '0', max: MAX_MARKUP_PERCENT.toString() });
}

export function parseStarUsd(text: string, label = 'star price'): Decimal {
  if (/^\s*-/.test(text)) throw new PlanError(`${label} must not be negative, got ${text}`);
  return decimalIn(`${label} (USD per star)`, text, STAR_USD);
}

export function parsePremiumUsd(text: string, months: PremiumMonths, label = `premium ${months} months price`): Decimal {
  if (/^\s*-/.test(text)) throw new PlanError(`${label} must not be negative, got ${text}`);
  return decimalIn(`${label} (USD)`, text, PREMIUM_USD);
}

/** A tier's threshold: a TON amount of delivered orders over the last 30 days. */
export function parseVolume(text: string): bigint {
  try {
    return parseTon(text.trim());
  } catch (error) {
    if (error instanceof MoneyFormatError) throw new PlanError(`a tier's volume must be a TON amount such as 1000 or 2.5, got "${text}"`);
    throw error;
  }
}

/** Checks the tiers' order and kind; returns the plan. */
export function definePricePlan(name: string, kind: PlanKind, tiers: PlanTier[]): PricePlan {
  checkPlanName(name);
  if (tiers.length === 0) throw new PlanError('a plan needs a price');
  if (tiers.length > MAX_TIERS) throw new PlanError(`a plan has at most ${MAX_TIERS} tiers, got ${tiers.length}`);
  if (tiers[0]!.fromNanotons !== 0n) throw new PlanError('the first tier starts at a volume of 0');
  for (let i = 1; i < tiers.length; i++) {
    if (tiers[i]!.fromNanotons <= tiers[i - 1]!.fromNanotons) {
      throw new PlanError(`tier volumes must increase: ${formatTon(tiers[i]!.fromNanotons)} TON follows ${formatTon(tiers[i - 1]!.fromNanotons)} TON`);
    }
  }
  for (const tier of tiers) {
    if ('markupPercent' in tier !== (kind === 'markup')) throw new PlanError(`every tier of a ${kind} plan gives ${kind === 'markup' ? 'a markup' : 'prices'}`);
  }
  return { name, kind, tiers };
}

/** The index of the tier a volume falls in: the last whose threshold it reaches. */
export function tierIndex(plan: PricePlan, volumeNanotons: bigint): number {
  let index = 0;
  plan.tiers.forEach((tier, i) => {
    if (volumeNanotons >= tier.fromNanotons) index = i;
  });
  return index;
}

/** What the price source applies for a tier (src/domain/pricing.ts `PriceRule`). */
export function tierRule(tier: PlanTier): PriceRule {
  if ('markupPercent' in tier) return { markupPercent: tier.markupPercent };
  return { markupPercent: { units: 0n, scale: 0 }, usd: tier.prices };
}

/** The stored form (JSON text in `price_plans.tiers`): decimals and TON amounts as strings. */
type StoredTier = { from_ton: string; markup_percent?: string; star_usd?: string; premium_3_usd?: string; premium_6_usd?: string; premium_12_usd?: string };

export function tierJson(tier: PlanTier): StoredTier {
  const from_ton = formatTon(tier.fromNanotons);
  if ('markupPercent' in tier) return { from_ton, markup_percent: formatDecimal(tier.markupPercent) };
  const p = tier.prices;
  return {
    from_ton,
    star_usd: formatDecimal(p.starUsd),
    premium_3_usd: formatDecimal(p.premiumUsd[3]),
    premium_6_usd: formatDecimal(p.premiumUsd[6]),
    premium_12_usd: formatDecimal(p.premiumUsd[12]),
  };
}

export function tiersFromJson(kind: PlanKind, stored: StoredTier[]): PlanTier[] {
  return stored.map((t) => {
    const fromNanotons = parseVolume(t.from_ton);
    if (kind === 'markup') return { fromNanotons, markupPercent: parseMarkupPercent(t.markup_percent ?? '') };
    return {
      fromNanotons,
      prices: {
        starUsd: parseStarUsd(t.star_usd ?? ''),
        premiumUsd: { 3: parsePremiumUsd(t.premium_3_usd ?? '', 3), 6: parsePremiumUsd(t.premium_6_usd ?? '', 6), 12: parsePremiumUsd(t.premium_12_usd ?? '', 12) },
      },
    };
  });
}

/**
 * A tier as the CLI writes it: `VOLUME:KEY=VALUE,…`, e.g. `1000:markup=3` or
 * `5000:star=0.013,premium3=10.5`. A prices tier may leave out a product: it keeps the price of
 * the tier before it (`base`).
 */
export function parseTierSpec(kind: PlanKind, spec: string, base: PlanTier | undefined): PlanTier {
  const colon = spec.indexOf(':');
  if (colon < 0) throw new PlanError(`a tier is VOLUME_TON:KEY=VALUE[,KEY=VALUE…], such as 1000:markup=3; got "${spec}"`);
  const fromNanotons = parseVolume(spec.slice(0, colon));
  const values = new Map<string, string>();
  for (const part of spec.slice(colon + 1).split(',')) {
    const [key, value, ...rest] = part.split('=');
    if (!key || value === undefined || rest.length > 0) throw new PlanError(`a tier's settings are KEY=VALUE pairs, got "${part}" in "${spec}"`);
    values.set(key.trim(), value.trim());
  }
  const at = `the tier from ${formatTon(fromNanotons)} TON`;
  const allowed = kind === 'markup' ? ['markup'] : ['star', ...PREMIUM_MONTHS.map((m) => `premium${m}`)];
  for (const key of values.keys()) if (!allowed.includes(key)) throw new PlanError(`${at}: a ${kind} plan's tier takes ${allowed.join(', ')}, not "${key}"`);
  if (kind === 'markup') {
    const markup = values.get('markup');
    if (markup === undefined) throw new PlanError(`${at} needs markup=PERCENT`);
    return { fromNanotons, markupPercent: parseMarkupPercent(markup, `${at}'s markup`) };
  }
  const before = base && 'prices' in base ? base.prices : undefined;
  const star = values.get('star');
  const starUsd = star !== undefined ? parseStarUsd(star, `${at}'s star price`) : before?.starUsd;
  if (!starUsd) throw new PlanError(`${at} needs star=USD`);
  const premium = (months: PremiumMonths): Decimal => {
    const text = values.get(`premium${months}`);
    const value = text !== undefined ? parsePremiumUsd(text, months, `${at}'s premium ${months} months price`) : before?.premiumUsd[months];
    if (!value) throw new PlanError(`${at} needs premium${months}=USD`);
    return value;
  };
  return { fromNanotons, prices: { starUsd, premiumUsd: { 3: premium(3), 6: premium(6), 12: premium(12) } } };
}
