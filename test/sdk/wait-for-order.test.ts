import { NotFoundError, Starport, WaitTimeoutError } from '@starport/sdk';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Harness, startHarness, type TestAccount } from '../support/harness.js';

/** waitForOrder against the test-mode simulation (the harness settles test orders in ~100 ms). */

let h: Harness;
let account: TestAccount;
let starport: Starport;

beforeAll(async () => {
  h = await startHarness();
  account = await h.account({ test: '10' });
  starport = new Starport({ apiKey: account.testKey, baseUrl: h.url });
});
afterAll(async () => {
  await h.close();
});

test('an ordinary recipient: polls until delivered', async () => {
  const order = await starport.createOrder({ product: 'stars', recipient: '@durov', quantity: 50 });
  const seen: string[] = [];
  const final = await starport.waitForOrder(order.id, { timeout: 15_000, interval: 100, onPoll: (o) => seen.push(o.status) });
  expect(final.status).toBe('delivered');
  expect(final.failure_reason).toBeNull();
  expect(final.events.map((e) => e.type)).toEqual(['order.created', 'order.processing', 'order.delivered']);
  expect(seen.at(-1)).toBe('delivered');
  expect(await starport.getBalance()).toMatchObject({ balance: { value: '9.75', reserved: '0' } });
});

test('@test_failed: polls until failed, with the reason', async () => {
  const order = await starport.createOrder({ product: 'stars', recipient: '@test_failed', quantity: 50 });
  const final = await starport.waitForOrder(order.id, { timeout: 15_000 });
  expect(final.status).toBe('failed');
  expect(final.failure_reason).toBe('upstream_error');
  const failed = final.events.at(-1);
  expect(failed?.type).toBe('order.failed');
  if (failed?.type === 'order.failed') expect(failed.data.reason).toBe('upstream_error');
});

test('gives up with WaitTimeoutError carrying the last state (@test_slow)', async () => {
  const order = await starport.createOrder({ product: 'stars', recipient: '@test_slow', quantity: 50 });
  const error = await starport.waitForOrder(order.id, { timeout: 300, interval: 100 }).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(WaitTimeoutError);
  expect((error as WaitTimeoutError).order?.id).toBe(order.id);
  expect(['fulfillment_pending', 'processing']).toContain((error as WaitTimeoutError).order?.status);
});

test('an unknown order is not waited on', async () => {
  await expect(starport.waitForOrder('ord_nope', { timeout: 5_000 })).rejects.toBeInstanceOf(NotFoundError);
});

test('intervals: 0.5 s by default for test keys, 5 s for live keys, and live never faster than 5 s', () => {
  const test = new Starport({ apiKey: account.testKey, baseUrl: h.url });
  const live = new Starport({ apiKey: account.liveKey, baseUrl: h.url });
  expect(test.pollInterval()).toBe(500);
  expect(test.pollInterval(100)).toBe(100);
  expect(test.pollInterval(1)).toBe(100);
  expect(live.pollInterval()).toBe(5_000);
  expect(live.pollInterval(1_000)).toBe(5_000);
  expect(live.pollInterval(15_000)).toBe(15_000);
});
