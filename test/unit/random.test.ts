import { describe, expect, it } from 'vitest';
import { BASE62, newId, randomBase62 } from '../../src/domain/random.js';

describe('BASE62', () => {
  it('is 0-9A-Za-z in order', () => {
    expect(BASE62).toBe('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz');
  });
});

describe('randomBase62', () => {
  it.each([0, 1, 6, 32, 100])('returns %i base62 characters', (n) => {
    const s = randomBase62(n);
    expect(s).toHaveLength(n);
    expect(s).toMatch(/^[0-9A-Za-z]*$/);
  });

  it('uses the whole alphabet', () => {
    const seen = new Set(randomBase62(20_000));
    expect(seen.size).toBe(62);
  });
});

describe('newId', () => {
  it.each(['ord', 'evt', 'req', 'acct', 'key'] as const)('makes %s_ ids with 22 base62 characters', (prefix) => {
    const id = newId(prefix);
    expect(id).toMatch(new RegExp(`^${prefix}_[0-9A-Za-z]{22}$`));
    expect(id).toHaveLength(prefix.length + 1 + 22);
  });

  it('has at least 96 bits of entropy', () => {
    expect(22 * Math.log2(62)).toBeGreaterThanOrEqual(96);
  });

  it('is URL-safe', () => {
    const id = newId('ord');
    expect(encodeURIComponent(id)).toBe(id);
  });

  it('gives 1000 distinct ids', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newId('ord')));
    expect(ids.size).toBe(1000);
  });
});
