import type { Mode } from '../../domain/api-key.js';
import { type Decimal, divideRoundingUp, pow10 } from '../../domain/decimal.js';
import { listPriceUsd, type PriceRule, priceInNanotons } from '../../domain/pricing.js';
import type { Product } from '../../domain/products.js';
import { type PriceSource, PriceUnavailableError, type RateFeed } from '../../providers/ports.js';
import type { FragmentClient } from '../fragment/client.js';

/**
 * PRICE_SOURCE=fragment: Fragment's own TON price × (1 + PRICE_MARKUP_PERCENT/100), rounded up
 * to the nanoton. Stars: the price of STARS_REFERENCE stars (updateStarsPrices) scaled to the
 * quantity, so one upstream call per refresh serves every quantity (Fragment prices stars
 * linearly in USD; the 4-decimal rounding of one reference quote is far below a nanoton per
 * star). Premium: the /premium/gift page's period prices. Reused for RATE_REFRESH_SECONDS,
 * served up to RATE_MAX_AGE_SECONDS when refreshing fails, then 503 price_unavailable.
 * An account whose price plan gives its own USD prices is priced from them at the RATE_FEED
 * rate (`rates`) instead; a plan's markup replaces PRICE_MARKUP_PERCENT over Fragment's price.
 */
const STARS_REFERENCE = 1000;

export interface FragmentPriceOptions {
  client: FragmentClient;
  markupPercent: Decimal;
  /** USD per TON, for plans with their own USD prices. */
  rates: RateFeed;
  refreshMs: number;
  maxAgeMs: number;
  now?: () => number;
}

interface Snapshot {
  starsReference: bigint;
  premium: Partial<Record<number, bigint>>;
  fetchedAt: number;
}

export class FragmentPriceSource implements PriceSource {
  private last: Snapshot | undefined;
  private inflight: Promise<void> | undefined;

  constructor(private readonly options: FragmentPriceOptions) {}

  async priceNanotons(product: Product, quantity: number, _mode?: Mode, rule?: PriceRule): Promise<bigint> {
    if (rule?.usd) return priceInNanotons(listPriceUsd(rule.usd, product, quantity), rule.markupPercent, await this.options.rates.tonUsdRate());
    const snapshot = await this.snapshot();
    const base = product === 'stars' ? divideRoundingUp(snapshot.starsReference * BigInt(quantity), BigInt(STARS_REFERENCE)) : snapshot.premium[quantity];
    if (base === undefined) throw new PriceUnavailableError(`Fragment shows no price for ${quantity} months of Premium`);
    const markupPercent = rule ? rule.markupPercent : this.options.markupPercent;
    return divideRoundingUp(base * (100n * pow10(markupPercent.scale) + markupPercent.units), 100n * pow10(markupPercent.scale));
  }

  private async snapshot(): Promise<Snapshot> {
    const now = (this.options.now ?? Date.now)();
    if (!this.last || now - this.last.fetchedAt >= this.options.refreshMs) {
      this.inflight ??= this.refresh().finally(() => {
        this.inflight = undefined;
      });
      await this.inflight.catch(() => undefined);
    }
    if (!this.last || (this.options.now ?? Date.now)() - this.last.fetchedAt > this.options.maxAgeMs) {
      throw new PriceUnavailableError('no fresh Fragment price');
    }
    return this.last;
  }

  private async refresh(): Promise<void> {
    const fetchedAt = (this.options.now ?? Date.now)();
    const starsReference = await this.options.client.starsPrice(STARS_REFERENCE);
    const premium = await this.options.client.premiumPrices();
    this.last = { starsReference, premium, fetchedAt };
  }
}

/** Test orders never depend on an upstream: they are priced by `test`, live ones by `live`. */
export class PerModePriceSource implements PriceSource {
  constructor(private readonly sources: { test: PriceSource; live: PriceSource }) {}

  priceNanotons(product: Product, quantity: number, mode: Mode = 'live', rule?: PriceRule): Promise<bigint> {
    return this.sources[mode].priceNanotons(product, quantity, mode, rule);
  }
}
