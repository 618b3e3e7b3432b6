import { type Decimal, divideRoundingUp, pow10 } from './decimal.js';
import { NANOTONS_PER_TON } from './money.js';
import type { PremiumMonths, Product } from './products.js';

/** USD list prices and markup, as exact decimals (docs/api.md "GET /quote"). */
export interface PriceList {
  starUsd: Decimal;
  premiumUsd: Record<PremiumMonths, Decimal>;
  markupPercent: Decimal;
}

/**
 * How an account is priced when it has a price plan (src/domain/price-plan.ts): the plan's
 * markup replaces PRICE_MARKUP_PERCENT, and a plan of its own USD prices replaces the list
 * (with a markup of 0). Without a rule the configured list and markup apply.
 */
export interface PriceRule {
  markupPercent: Decimal;
  usd?: Pick<PriceList, 'starUsd' | 'premiumUsd'>;
}

/** The USD price of (product, quantity) before markup. */
export function listPriceUsd(prices: Pick<PriceList, 'starUsd' | 'premiumUsd'>, product: Product, quantity: number): Decimal {
  if (product === 'stars') {
    return { units: prices.starUsd.units * BigInt(quantity), scale: prices.starUsd.scale };
  }
  return prices.premiumUsd[quantity as PremiumMonths];
}

/**
 * price_TON = price_USD × (1 + markup/100) ÷ TON_USD_RATE, in nanotons, rounded up.
 * Everything is one fraction of bigints, so the only rounding is the final ceiling.
 */
export function priceInNanotons(priceUsd: Decimal, markupPercent: Decimal, tonUsdRate: Decimal): bigint {
  if (tonUsdRate.units <= 0n) throw new RangeError('TON/USD rate must be positive');
  const markupFactorNumerator = 100n * pow10(markupPercent.scale) + markupPercent.units;
  const numerator = priceUsd.units * markupFactorNumerator * pow10(tonUsdRate.scale) * NANOTONS_PER_TON;
  const denominator = pow10(priceUsd.scale) * 100n * pow10(markupPercent.scale) * tonUsdRate.units;
  return divideRoundingUp(numerator, denominator);
}
