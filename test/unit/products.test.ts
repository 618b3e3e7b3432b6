import { describe, expect, it } from 'vitest';
import { isProduct, isValidQuantity, quantityRule } from '../../src/domain/products.js';

describe('isValidQuantity — stars', () => {
  it.each([50, 51, 100, 9_999, 10_000, 50.0])('accepts %s', (q) => {
    expect(isValidQuantity('stars', q)).toBe(true);
  });

  it.each([49, 10_001, 50.5, 0, -50, NaN, Infinity, 1e5])('rejects %s', (q) => {
    expect(isValidQuantity('stars', q)).toBe(false);
  });

  it.each(['100', '50', null, undefined, true, [100], { value: 100 }, 100n])('rejects the non-number %s', (q) => {
    expect(isValidQuantity('stars', q)).toBe(false);
  });
});

describe('isValidQuantity — premium', () => {
  it.each([3, 6, 12])('accepts %i months', (q) => {
    expect(isValidQuantity('premium', q)).toBe(true);
  });

  it.each([1, 2, 4, 24, 0, 3.5, -3])('rejects %s months', (q) => {
    expect(isValidQuantity('premium', q)).toBe(false);
  });

  it('rejects "3" as a string', () => {
    expect(isValidQuantity('premium', '3')).toBe(false);
  });
});

describe('isProduct', () => {
  it('accepts only stars and premium', () => {
    expect(isProduct('stars')).toBe(true);
    expect(isProduct('premium')).toBe(true);
    for (const v of ['Stars', 'STARS', 'star', '', null, 1, {}]) expect(isProduct(v)).toBe(false);
  });
});

describe('quantityRule', () => {
  it('describes each product', () => {
    expect(quantityRule('stars')).toContain('50');
    expect(quantityRule('stars')).toContain('10000');
    expect(quantityRule('premium')).toMatch(/3, 6, 12/);
  });
});
