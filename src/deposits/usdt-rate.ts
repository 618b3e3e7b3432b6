import { PriceUnavailableError, type RateFeed } from '../providers/ports.js';
import type { UsdtRate } from './store.js';

/** The rate feed as USDT conversions ask it: undefined while it has no fresh rate. */
export function usdtRateFrom(feed: RateFeed): () => Promise<UsdtRate | undefined> {
  return async () => {
    try {
      const { rate, asOf } = await feed.tonUsdRateAt();
      return { rate, at: asOf };
    } catch (error) {
      if (error instanceof PriceUnavailableError) return undefined;
      throw error;
    }
  };
}
