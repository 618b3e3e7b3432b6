import { describe, expect, test } from 'vitest';
import { RateLimiter } from '../../src/http/api/rate-limit.js';

describe('RateLimiter (token bucket per key)', () => {
  test('allows a burst, then refuses with Retry-After, then refills at the rate', () => {
    let now = 0;
    const limiter = new RateLimiter(10, 3, () => now);
    expect([1, 2, 3].map(() => limiter.take('k').allowed)).toEqual([true, true, true]);
    const refused = limiter.take('k');
    expect(refused.allowed).toBe(false);
    expect(refused.headers['Retry-After']).toBe('1');
    now += 100; // 0.1 s at 10/s = one token
    expect(limiter.take('k').allowed).toBe(true);
    expect(limiter.take('k').allowed).toBe(false);
  });

  test('keys have separate buckets', () => {
    const limiter = new RateLimiter(1, 1, () => 0);
    expect(limiter.take('a').allowed).toBe(true);
    expect(limiter.take('a').allowed).toBe(false);
    expect(limiter.take('b').allowed).toBe(true);
  });

  test('headers follow the IETF draft: policy quota and window, remaining and reset', () => {
    const now = 0;
    const limiter = new RateLimiter(100, 200, () => now);
    const { headers } = limiter.take('k');
    expect(headers['RateLimit-Policy']).toBe('"default";q=200;w=2');
    expect(headers.RateLimit).toBe('"default";r=199;t=1');
    expect(headers['Retry-After']).toBeUndefined();
  });
});
