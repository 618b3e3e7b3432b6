import type { Kysely } from 'kysely';
import type { Mode } from '../domain/api-key.js';
import { tierIndex, tierRule } from '../domain/price-plan.js';
import type { PriceRule } from '../domain/pricing.js';
import type { Product } from '../domain/products.js';
import { utcDay } from '../domain/time.js';
import type { Database } from '../db/schema.js';
import { orderDays } from '../orders/order-days.js';
import { freshPrice } from '../orders/fresh-price.js';
import type { PriceSource } from '../providers/ports.js';
import { findPlan, planOfAccount, type StoredPlan } from './plan-store.js';

/**
 * The price of an account (docs/operations.md "Price plans"): its plan's tier for its delivered
 * volume, or, with no plan, the global PRICE_MARKUP_PERCENT exactly as before plans existed.
 * GET /quote, POST /orders (without a quote) and GET /prices all price through here.
 */

/** The window of the volume that picks a tier: the UTC day of `now` and the 29 before it. */
const VOLUME_DAYS = 30;

interface AccountPricing {
  plan: StoredPlan | undefined;
  /** TON of the account's delivered orders of this mode created in the window (read only when it matters, or asked for). */
  volumeNanotons: bigint;
  /** Index into plan.tiers; 0 without a plan. */
  tier: number;
  /** What the price source applies; undefined: the configured markup. */
  rule: PriceRule | undefined;
}

/**
 * The delivered volume of (account, mode) over the window, from the `order_days` rollup (at
 * most 30 rows): delivered orders by the UTC day they were created.
 */
async function deliveredVolume(db: Kysely<Database>, ref: { accountId: string; mode: Mode }, now: number): Promise<bigint> {
  const today = utcDay(now);
  const days = await orderDays(db, ref, today - (VOLUME_DAYS - 1), today);
  return days.reduce((sum, day) => sum + day.deliveredAmount, 0n);
}

/**
 * Whose price: the account and mode, and, when the caller knows it already, the account's plan
 * name (an API request's key verdict carries it: src/accounts/key-verdict.ts; null: no plan).
 * Without it the plan is looked up (the dashboard, the CLI).
 */
export interface PricedAccount {
  accountId: string;
  mode: Mode;
  planName?: string | null;
}

export async function accountPricing(db: Kysely<Database>, ref: PricedAccount, now: number, options: { volume?: boolean } = {}): Promise<AccountPricing> {
  // Known to have no plan (the common case): nothing to read, so nothing to wait for either.
  const plan = ref.planName === null ? undefined : await (ref.planName === undefined ? planOfAccount(db, ref.accountId) : findPlan(db, ref.planName));
  // Without a plan, or with one tier, the price does not depend on volume: it is read only when asked for.
  const volumeNanotons = options.volume || (plan && plan.tiers.length > 1) ? await deliveredVolume(db, ref, now) : 0n;
  if (!plan) return { plan, volumeNanotons, tier: 0, rule: undefined };
  const tier = tierIndex(plan, volumeNanotons);
  return { plan, volumeNanotons, tier, rule: tierRule(plan.tiers[tier]!) };
}

/** What (product, quantity) costs this account now, or 503 price_unavailable (freshPrice). */
export async function accountPrice(deps: { db: Kysely<Database>; prices: PriceSource }, ref: PricedAccount, product: Product, quantity: number, now = Date.now()): Promise<bigint> {
  const { rule } = await accountPricing(deps.db, ref, now);
  return freshPrice(deps.prices, product, quantity, ref.mode, rule);
}
