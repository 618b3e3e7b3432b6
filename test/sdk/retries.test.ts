import { ConnectionError, RateLimitError, Starport } from '@starport/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { type Harness, startHarness, type TestAccount } from '../support/harness.js';

/**
 * The SDK's retries against a real service: a response lost on the way back (a fault-injecting
 * proxy cuts the connection after the service answered) is retried with the same
 * Idempotency-Key and yields the one order that was created; a 429 is retried after
 * Retry-After.
 */

describe('a lost response to POST /orders', () => {
  let h: Harness;
  let account: TestAccount;
  let proxy: FaultProxy | undefined;

  beforeAll(async () => {
    h = await startHarness();
    account = await h.account({ test: '10' });
  });
  afterEach(async () => {
    await proxy?.close();
    proxy = undefined;
  });
  afterAll(async () => {
    await h.close();
  });

  const ordersOfAccount = async () => h.service.db.kysely.selectFrom('orders').select(['id', 'idempotency_key']).where('account_id', '=', account.accountId).execute();

  test('the retry carries the same Idempotency-Key and returns the order the first attempt created', async () => {
    proxy = await startFaultProxy(h.url, (request, index) => request.method === 'POST' && request.url === '/api/v1/orders' && index === 0);
    const starport = new Starport({ apiKey: account.testKey, baseUrl: proxy.url, initialRetryDelay: 20 });

    const order = await starport.createOrder({ product: 'stars', recipient: '@durov', quantity: 50 });

    const posts = proxy.requests.filter((r) => r.method === 'POST');
    expect(posts).toHaveLength(2);
    expect(posts[0]).toMatchObject({ dropped: true, status: 201 });
    expect(posts[1]).toMatchObject({ dropped: false, status: 201 });
    expect(posts[0]?.headers['idempotency-key']).toBeDefined();
    expect(posts[1]?.headers['idempotency-key']).toBe(posts[0]?.headers['idempotency-key']);
    expect(order.lastResponse.attempts).toBe(2);
    expect(order.lastResponse.replayed).toBe(true);
    expect(order.lastResponse.idempotencyKey).toBe(posts[0]?.headers['idempotency-key']);

    const orders = await ordersOfAccount();
    expect(orders).toEqual([{ id: order.id, idempotency_key: order.lastResponse.idempotencyKey }]);
    // Charged once: 10 − 0.25 (reserved or, if already delivered, debited).
    expect((await starport.getBalance()).balance.value).toBe('9.75');
  });

  test('when every response is lost, the SDK gives up with a ConnectionError after maxRetries', async () => {
    proxy = await startFaultProxy(h.url, (request) => request.method === 'POST');
    const starport = new Starport({ apiKey: account.testKey, baseUrl: proxy.url, initialRetryDelay: 10, maxRetries: 3 });
    const before = (await ordersOfAccount()).length;
    await expect(starport.createOrder({ product: 'stars', recipient: '@durov', quantity: 60 })).rejects.toBeInstanceOf(ConnectionError);
    const posts = proxy.requests.filter((r) => r.method === 'POST');
    expect(posts).toHaveLength(4);
    expect(new Set(posts.map((r) => r.headers['idempotency-key'])).size).toBe(1);
    // Four attempts, one order.
    expect((await ordersOfAccount()).length).toBe(before + 1);
  });

  test('a lost GET is retried too', async () => {
    proxy = await startFaultProxy(h.url, (request, index) => request.method === 'GET' && index === 0);
    const starport = new Starport({ apiKey: account.testKey, baseUrl: proxy.url, initialRetryDelay: 10 });
    const balance = await starport.getBalance();
    expect(balance.mode).toBe('test');
    expect(balance.lastResponse.attempts).toBe(2);
  });
});

describe('429 rate_limited', () => {
  let h: Harness;
  let account: TestAccount;

  beforeAll(async () => {
    h = await startHarness({ RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '1' });
    account = await h.account({ test: '10' });
  });
  afterAll(async () => {
    await h.close();
  });

  test('is retried after the Retry-After the service sent', async () => {
    const starport = new Starport({ apiKey: account.testKey, baseUrl: h.url, initialRetryDelay: 10 });
    await starport.getBalance();
    const started = Date.now();
    const order = await starport.createOrder({ product: 'stars', recipient: '@durov', quantity: 50 });
    const elapsed = Date.now() - started;
    expect(order.lastResponse.attempts).toBeGreaterThanOrEqual(2);
    expect(order.lastResponse.status).toBe(201);
    // Retry-After: 1 — the SDK waited for it rather than for its own 10 ms backoff.
    expect(elapsed).toBeGreaterThanOrEqual(900);
    expect(order.lastResponse.headers.get('ratelimit-policy')).toBe('"default";q=1;w=1');
  });

  test('without retries it surfaces as RateLimitError with retryAfter', async () => {
    const starport = new Starport({ apiKey: account.testKey, baseUrl: h.url, maxRetries: 0 });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await starport.getBalance();
    const error = await starport.getBalance().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited' });
    expect((error as RateLimitError).retryAfter).toBe(1);
  });
});
