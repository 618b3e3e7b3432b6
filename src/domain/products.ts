/** Products and the quantities each allows (docs/api.md "GET /quote"). */
export const PRODUCTS = ['stars', 'premium'] as const;
export type Product = (typeof PRODUCTS)[number];

export const STARS_MIN = 50;
export const STARS_MAX = 10_000;
export const PREMIUM_MONTHS = [3, 6, 12] as const;
export type PremiumMonths = (typeof PREMIUM_MONTHS)[number];

export function isProduct(value: unknown): value is Product {
  return value === 'stars' || value === 'premium';
}

export function isValidQuantity(product: Product, quantity: unknown): quantity is number {
  if (typeof quantity !== 'number' || !Number.isInteger(quantity)) return false;
  if (product === 'stars') return quantity >= STARS_MIN && quantity <= STARS_MAX;
  return (PREMIUM_MONTHS as readonly number[]).includes(quantity);
}

export function quantityRule(product: Product): string {
  return product === 'stars' ? `an integer from ${STARS_MIN} to ${STARS_MAX}` : `${PREMIUM_MONTHS.join(', ')} (months)`;
}
