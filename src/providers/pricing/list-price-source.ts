import type { Decimal } from '../../domain/decimal.js';
import type { Mode } from '../../domain/api-key.js';
import { listPriceUsd, type PriceList, type PriceRule, priceInNanotons } from '../../domain/pricing.js';
import type { Product } from '../../domain/products.js';
import type { PriceSource, RateFeed } from '../ports.js';

/** The default price source: a USD price list with markup, converted at the feed's rate. */
export class ListPriceSource implements PriceSource {
  constructor(
    private readonly prices: PriceList,
    private readonly rates: RateFeed,
  ) {}

  async priceNanotons(product: Product, quantity: number, _mode?: Mode, rule?: PriceRule): Promise<bigint> {
    const rate = await this.rates.tonUsdRate();
    const usd = listPriceUsd(rule?.usd ?? this.prices, product, quantity);
    return priceInNanotons(usd, rule ? rule.markupPercent : this.prices.markupPercent, rate);
  }
}

/** The default rate feed: TON_USD_RATE from the configuration. */
export class FixedRateFeed implements RateFeed {
  constructor(private rate: Decimal) {}

  async tonUsdRate(): Promise<Decimal> {
    return this.rate;
  }

  /** A configured rate is always current. */
  async tonUsdRateAt(): Promise<{ rate: Decimal; asOf: number }> {
    return { rate: this.rate, asOf: Date.now() };
  }

  /** Changes the rate at run time (tests: a locked quote must hold when the rate moves). */
  setRate(rate: Decimal): void {
    this.rate = rate;
  }
}
