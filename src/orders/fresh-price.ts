import { ApiError } from '../domain/api-error.js';
import type { Mode } from '../domain/api-key.js';
import type { PriceRule } from '../domain/pricing.js';
import type { Product } from '../domain/products.js';
import { type PriceSource, PriceUnavailableError } from '../providers/ports.js';

/** The current price, or 503 price_unavailable when no fresh rate can be had (nothing charged). */
export async function freshPrice(prices: PriceSource, product: Product, quantity: number, mode?: Mode, rule?: PriceRule): Promise<bigint> {
  try {
    return await prices.priceNanotons(product, quantity, mode, rule);
  } catch (error) {
    if (error instanceof PriceUnavailableError) {
      throw new ApiError('price_unavailable');
    }
    throw error;
  }
}
