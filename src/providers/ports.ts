import type { Mode } from '../domain/api-key.js';
import type { Decimal } from '../domain/decimal.js';
import type { PriceRule } from '../domain/pricing.js';
import type { Product } from '../domain/products.js';
import type { RecipientRefusal } from '../domain/recipient-refusal.js';

/**
 * The ports through which the core reaches the outside world (docs/architecture.md "Ports and adapters"). The core
 * depends on these interfaces only; adapters are chosen at the composition root.
 */

/** A price could not be obtained (no fresh rate, upstream down): nothing may be charged. */
export class PriceUnavailableError extends Error {}

export interface PriceSource {
  /**
   * What (product, quantity) costs right now, in nanotons, for orders of `mode` (test mode may
   * be priced without any upstream), under the account's price plan `rule` when it has one
   * (else PRICE_MARKUP_PERCENT). May throw PriceUnavailableError.
   */
  priceNanotons(product: Product, quantity: number, mode?: Mode, rule?: PriceRule): Promise<bigint>;
}

/**
 * The live upstream cannot answer now (not configured, paused by the circuit breaker, down):
 * the API answers 503 live_unavailable and nothing is written.
 */
export class UpstreamUnavailableError extends Error {}

export interface RateFeed {
  /** USD per TON. May throw PriceUnavailableError. */
  tonUsdRate(): Promise<Decimal>;
  /** The same, with the time (epoch ms) the rate is as of. May throw PriceUnavailableError. */
  tonUsdRateAt(): Promise<{ rate: Decimal; asOf: number }>;
}

/** What a recipient check found: an account able to receive the product, or why it cannot. */
export type RecipientLookup = { eligible: true; username: string; displayName: string } | { eligible: false; username: string; reason: RecipientRefusal };

export interface RecipientDirectory {
  /** May throw UpstreamUnavailableError (the upstream cannot answer now). */
  lookup(username: string, product: Product, quantity: number): Promise<RecipientLookup>;
}
