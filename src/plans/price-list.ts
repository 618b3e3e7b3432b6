import type { Kysely } from 'kysely';
import { PREMIUM_MONTHS, type Product, quantityRule, STARS_MAX, STARS_MIN } from '../domain/products.js';
import type { Database } from '../db/schema.js';
import { freshPrice } from '../orders/fresh-price.js';
import type { PriceSource } from '../providers/ports.js';
import { accountPricing, type PricedAccount } from './account-price.js';

/**
 * GET /prices (docs/api.md "GET /prices"): what the account pays now in a mode, per product,
 * with the tier of its plan its delivered volume puts it in and what the next tier needs.
 * Priced exactly as GET /quote prices (account-price.ts), so a quote of a Premium period is
 * its `unitPrice`; a quote of N stars is the N stars' price rounded up once, which is at most
 * N × the one-star `unitPrice`.
 */
interface PriceLine {
  product: Product;
  quantityRule: string;
  minQuantity: number;
  maxQuantity: number;
  /** Stars: one star; Premium: the period. Nanotons. */
  unitPrice: bigint;
}

interface PriceListing {
  lines: PriceLine[];
  /** Delivered orders of the mode created in the last 30 UTC days, nanotons. */
  volume: bigint;
  /** 1-based; a plan of one tier, or none, is tier 1 of 1. */
  tier: number;
  tiers: number;
  /** The threshold of the next tier and what is left to reach it, when there is one. */
  nextTier: { from: bigint; needs: bigint } | null;
}

export async function priceListing(deps: { db: Kysely<Database>; prices: PriceSource }, ref: PricedAccount, now = Date.now()): Promise<PriceListing> {
  const pricing = await accountPricing(deps.db, ref, now, { volume: true });
  const price = (product: Product, quantity: number) => freshPrice(deps.prices, product, quantity, ref.mode, pricing.rule);
  const lines: PriceLine[] = [{ product: 'stars', quantityRule: quantityRule('stars'), minQuantity: STARS_MIN, maxQuantity: STARS_MAX, unitPrice: await price('stars', 1) }];
  for (const months of PREMIUM_MONTHS) {
    lines.push({ product: 'premium', quantityRule: `${months} (months)`, minQuantity: months, maxQuantity: months, unitPrice: await price('premium', months) });
  }
  const tiers = pricing.plan?.tiers ?? [];
  const next = tiers[pricing.tier + 1];
  return {
    lines,
    volume: pricing.volumeNanotons,
    tier: pricing.tier + 1,
    tiers: Math.max(tiers.length, 1),
    nextTier: next ? { from: next.fromNanotons, needs: next.fromNanotons - pricing.volumeNanotons } : null,
  };
}
