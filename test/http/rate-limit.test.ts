import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';

describe('per-key rate limit', () => {
  let h: Harness;
  beforeAll(async () => {
    // This node's share of 100: a burst of 3 and one token back every 100 s, so that however
    // slow the machine, no token comes back while a test spends the burst.
    h = await startHarness({ RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '300', RATE_LIMIT_NODES: '100' });
  });
  afterAll(() => h.close());

  test('over the burst a key gets 429 rate_limited with Retry-After; other keys are unaffected', async () => {
    const a = await h.account();
    const b = await h.account();
    const get = (key: string) => h.inject({ method: 'GET', url: '/api/v1/balance', headers: { authorization: `Bearer ${key}` } });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await get(a.testKey)).statusCode);
    expect(statuses).toEqual([200, 200, 200]);
    const limited = await get(a.testKey);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error.code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited.headers['ratelimit-policy']).toBe('"default";q=3;w=300');
    expect((await get(b.testKey)).statusCode).toBe(200);
  });

  test('authenticated responses, errors included, carry the RateLimit headers; unauthenticated ones do not', async () => {
    const a = await h.account();
    const bad = await h.inject({ method: 'GET', url: '/api/v1/quote', headers: { authorization: `Bearer ${a.testKey}` } });
    expect(bad.statusCode).toBe(400);
    expect(bad.headers.ratelimit).toMatch(/^"default";r=\d+;t=\d+$/);
    const anonymous = await h.inject({ method: 'GET', url: '/api/v1/balance' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers.ratelimit).toBeUndefined();
  });
});

describe('RATE_LIMIT_RPS=0', () => {
  test('turns the limit and its headers off', async () => {
    const h = await startHarness({ RATE_LIMIT_RPS: '0' });
    try {
      const a = await h.account();
      const response = await h.inject({ method: 'GET', url: '/api/v1/balance', headers: { authorization: `Bearer ${a.testKey}` } });
      expect(response.statusCode).toBe(200);
      expect(response.headers.ratelimit).toBeUndefined();
      expect(response.headers['ratelimit-policy']).toBeUndefined();
    } finally {
      await h.close();
    }
  });
});
