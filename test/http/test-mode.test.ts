import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { balanceOf, type Body, EVENT_ID, expectOk, getOrder, postOrder, TIMESTAMP, waitForStatus } from '../support/http.js';

/**
 * Test-mode fulfilment end to end (docs/api.md "Test mode", "Events", "Orders and statuses", "GET /balance"), with
 * the harness timings: TEST_FULFILMENT_DELAY_MS=100, TEST_SLOW_DELAY_MS=1500. Orders are
 * polled every 50 ms against a deadline; nothing sleeps a fixed time.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

async function place(key: string, body: Record<string, unknown>) {
  const res = await postOrder(h, key, body);
  expectOk(res, 201);
  expect(res.body.status).toBe('fulfillment_pending');
  expect(res.body.failure_reason).toBeNull();
  return res.body;
}

/** Events: evt_ ids, RFC 3339 timestamps, oldest first, each with the status it led to. */
function expectEventShape(events: Body[]) {
  expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  let previous = 0;
  for (const event of events) {
    expect(Object.keys(event).sort()).toEqual(['created_at', 'data', 'id', 'status', 'type']);
    expect(event.id).toMatch(EVENT_ID);
    expect(event.created_at).toMatch(TIMESTAMP);
    const at = Date.parse(event.created_at);
    expect(at).toBeGreaterThanOrEqual(previous);
    previous = at;
  }
}

describe('a normal recipient', () => {
  test('created → processing → delivered; the amount is debited, reserved back to 0', async () => {
    const a = await h.account({ test: '10' });
    const order = await place(a.testKey, { product: 'stars', recipient: '@Alice_1', quantity: 100, external_id: 'e2e-1' });
    const done = await waitForStatus(h, a.testKey, order.id);

    expect(done.status).toBe('delivered');
    expect(done.failure_reason).toBeNull();
    expect(done).toMatchObject({ id: order.id, recipient: '@Alice_1', quantity: 100, external_id: 'e2e-1', amount: { value: '0.5', currency: 'TON' } });
    expect(Date.parse(done.updated_at)).toBeGreaterThanOrEqual(Date.parse(done.created_at));
    expectEventShape(done.events);
    expect(done.events.map((e: Body) => [e.type, e.status, e.data])).toEqual([
      ['order.created', 'fulfillment_pending', { amount: '0.5' }],
      ['order.processing', 'processing', {}],
      ['order.delivered', 'delivered', { amount: '0.5' }],
    ]);
    expect(done.events[0].created_at).toBe(done.created_at);
    expect(done.events[2].created_at).toBe(done.updated_at);

    expect(await balanceOf(h, a.testKey)).toEqual({ value: '9.5', reserved: '0', currency: 'TON' });
  });

  test('delivered within 5 s of the 201 (docs/api.md "Test mode"), and the order passes through processing', async () => {
    const a = await h.account({ test: '10' });
    const started = Date.now();
    const order = await place(a.testKey, { product: 'premium', recipient: 'bob_the_user', quantity: 12 });
    const done = await waitForStatus(h, a.testKey, order.id, ['delivered'], 5_000);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(done.events.map((e: Body) => e.type)).toEqual(['order.created', 'order.processing', 'order.delivered']);
    expect(await balanceOf(h, a.testKey)).toEqual({ value: '0.336666666', reserved: '0', currency: 'TON' });
  });

  test('a delivered order stays delivered: no further events', async () => {
    const a = await h.account({ test: '10' });
    const order = await place(a.testKey, { product: 'stars', recipient: 'carol', quantity: 50 });
    const done = await waitForStatus(h, a.testKey, order.id);
    // Absence of change needs an observation window: poll it for 4× the fulfilment delay.
    const until = Date.now() + 400;
    let again = done;
    while (Date.now() < until) {
      again = (await getOrder(h, a.testKey, order.id)).body;
      expect(again.status).toBe('delivered');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(again.events).toEqual(done.events);
  });
});

describe('@test_invalid', () => {
  test('created → processing → failed (recipient_invalid); the reserve is released exactly', async () => {
    const a = await h.account({ test: '10' });
    const order = await place(a.testKey, { product: 'premium', recipient: '@test_invalid', quantity: 3 });
    const done = await waitForStatus(h, a.testKey, order.id);

    expect(done.status).toBe('failed');
    expect(done.failure_reason).toBe('recipient_invalid');
    expectEventShape(done.events);
    expect(done.events.map((e: Body) => [e.type, e.status])).toEqual([
      ['order.created', 'fulfillment_pending'],
      ['order.processing', 'processing'],
      ['order.failed', 'failed'],
    ]);
    expect(done.events[0].data).toEqual({ amount: '3.996666667' });
    expect(done.events[1].data).toEqual({});
    expect(done.events[2].data).toEqual({ reason: 'recipient_invalid', message: expect.any(String), amount: '3.996666667' });
    expect(done.events[2].data.message.length).toBeGreaterThan(0);

    expect(await balanceOf(h, a.testKey)).toEqual({ value: '10', reserved: '0', currency: 'TON' });
  });

  test('test recipients are case-insensitive: @TEST_Invalid fails the same way', async () => {
    const a = await h.account({ test: '1' });
    const order = await place(a.testKey, { product: 'stars', recipient: 'TEST_Invalid', quantity: 50 });
    expect(order.recipient).toBe('@TEST_Invalid');
    const done = await waitForStatus(h, a.testKey, order.id);
    expect(done).toMatchObject({ status: 'failed', failure_reason: 'recipient_invalid' });
    expect(await balanceOf(h, a.testKey)).toEqual({ value: '1', reserved: '0', currency: 'TON' });
  });
});

describe('@test_failed', () => {
  test('created → processing → failed (upstream_error); the reserve is released', async () => {
    const a = await h.account({ test: '0.25' });
    const order = await place(a.testKey, { product: 'stars', recipient: '@test_failed', quantity: 50 });
    expect(await balanceOf(h, a.testKey)).toMatchObject({ value: '0' });
    const done = await waitForStatus(h, a.testKey, order.id);
    expect(done).toMatchObject({ status: 'failed', failure_reason: 'upstream_error' });
    expectEventShape(done.events);
    expect(done.events.map((e: Body) => e.type)).toEqual(['order.created', 'order.processing', 'order.failed']);
    expect(done.events.some((e: Body) => e.type === 'order.attempt_failed')).toBe(false);
    expect(done.events[2].data).toEqual({ reason: 'upstream_error', message: expect.any(String), amount: '0.25' });
    expect(await balanceOf(h, a.testKey)).toEqual({ value: '0.25', reserved: '0', currency: 'TON' });
  });
});

describe('@test_slow', () => {
  test('stays processing while other orders are delivered, then is delivered', async () => {
    const a = await h.account({ test: '10' });
    const slow = await place(a.testKey, { product: 'stars', recipient: '@test_slow', quantity: 200 });
    const normal = await place(a.testKey, { product: 'stars', recipient: 'dave', quantity: 50 });

    await waitForStatus(h, a.testKey, normal.id, ['delivered']);
    const meanwhile = await waitForStatus(h, a.testKey, slow.id, ['processing']);
    expect(meanwhile.events.map((e: Body) => e.type)).toEqual(['order.created', 'order.processing']);
    // The slow order is still reserved; the delivered one is debited.
    expect(await balanceOf(h, a.testKey)).toEqual({ value: '8.75', reserved: '1', currency: 'TON' });

    // A third order created now is delivered before the slow one: the slow order holds no worker.
    const third = await place(a.testKey, { product: 'stars', recipient: 'erin', quantity: 50 });
    await waitForStatus(h, a.testKey, third.id, ['delivered']);
    expect((await getOrder(h, a.testKey, slow.id)).body.status).toBe('processing');

    const done = await waitForStatus(h, a.testKey, slow.id, ['delivered'], 10_000);
    expectEventShape(done.events);
    expect(done.events.map((e: Body) => [e.type, e.data])).toEqual([
      ['order.created', { amount: '1' }],
      ['order.processing', {}],
      ['order.delivered', { amount: '1' }],
    ]);
    // It took about TEST_SLOW_DELAY_MS in processing, and both later orders were delivered
    // while it was there (the database's own timestamps, independent of polling).
    const processingAt = Date.parse(done.events[1].created_at);
    const deliveredAt = Date.parse(done.events[2].created_at);
    expect(deliveredAt - processingAt).toBeGreaterThanOrEqual(1_400);
    for (const other of [normal, third]) {
      const otherDeliveredAt = Date.parse((await getOrder(h, a.testKey, other.id)).body.updated_at);
      expect(otherDeliveredAt).toBeGreaterThanOrEqual(processingAt);
      expect(otherDeliveredAt).toBeLessThan(deliveredAt);
    }
    expect(await balanceOf(h, a.testKey)).toEqual({ value: '8.5', reserved: '0', currency: 'TON' });
  });
});

describe('balance while orders are open', () => {
  test('open orders are reserved; value + reserved changes only on delivery, not on creation or failure', async () => {
    const a = await h.account({ test: '10' });
    const slow = await place(a.testKey, { product: 'premium', recipient: 'test_slow', quantity: 6 }); // 5.33
    const failing = await place(a.testKey, { product: 'stars', recipient: 'test_failed', quantity: 100 }); // 0.5
    // Both open, or the failure already released (it takes TEST_FULFILMENT_DELAY_MS): value + reserved = 10.
    expect([
      { value: '4.17', reserved: '5.83', currency: 'TON' },
      { value: '4.67', reserved: '5.33', currency: 'TON' },
    ]).toContainEqual(await balanceOf(h, a.testKey));

    await waitForStatus(h, a.testKey, failing.id, ['failed']);
    expect(await balanceOf(h, a.testKey)).toEqual({ value: '4.67', reserved: '5.33', currency: 'TON' });
    await waitForStatus(h, a.testKey, slow.id, ['delivered']);
    expect(await balanceOf(h, a.testKey)).toEqual({ value: '4.67', reserved: '0', currency: 'TON' });
  });
});

/** docs/api.md "Test mode": an order to a refused magic recipient fails with the refusal's reason, as a live order would. */
describe('refused recipients', () => {
  test.each([
    ['@test_not_found', 'stars', 50, 'not_found', /^No Telegram account @test_not_found exists\./],
    ['@Test_Not_A_User', 'premium', 3, 'not_a_user', /^@Test_Not_A_User is a bot, channel or group/],
    ['@test_already_premium', 'premium', 12, 'already_premium', /^@test_already_premium already has Telegram Premium/],
    ['@test_not_eligible', 'stars', 100, 'not_eligible', /^@test_not_eligible cannot receive Telegram Stars right now/],
  ])('%s (%s) → processing → failed with failure_reason %s; the reserve is released', async (recipient, product, quantity, reason, message) => {
    const a = await h.account({ test: '10' });
    const order = await place(a.testKey, { product, recipient, quantity });
    const done = await waitForStatus(h, a.testKey, order.id);
    expect(done).toMatchObject({ status: 'failed', failure_reason: reason, recipient });
    expectEventShape(done.events);
    expect(done.events.map((e: Body) => [e.type, e.status])).toEqual([
      ['order.created', 'fulfillment_pending'],
      ['order.processing', 'processing'],
      ['order.failed', 'failed'],
    ]);
    expect(done.events[2].data).toEqual({ reason, message: expect.stringMatching(message), amount: order.amount.value });
    expect(await balanceOf(h, a.testKey)).toEqual({ value: '10', reserved: '0', currency: 'TON' });
  });

  test('@test_already_premium still receives stars', async () => {
    const a = await h.account({ test: '10' });
    const order = await place(a.testKey, { product: 'stars', recipient: '@test_already_premium', quantity: 50 });
    const done = await waitForStatus(h, a.testKey, order.id);
    expect(done).toMatchObject({ status: 'delivered', failure_reason: null });
  });
});
