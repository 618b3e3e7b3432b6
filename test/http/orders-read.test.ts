import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { EVENT_ID, expectOk, expectRejected, getOrder, newKey, ORDER_ID, postOrder, seedLiveOrder, STARS_50, TIMESTAMP } from '../support/http.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

async function orderOf(key: string, body: Record<string, unknown> = STARS_50) {
  const res = await postOrder(h, key, body);
  expectOk(res, 201);
  return res.body;
}

describe('GET /orders/{id}', () => {
  test('200: the order object as created, plus events; status_url is PUBLIC_URL (the bound address) + the path', async () => {
    const a = await h.account({ test: '10' });
    const order = await orderOf(a.testKey, { product: 'premium', recipient: '@SomeUser', quantity: 6, external_id: 'abc-1' });
    const res = await getOrder(h, a.testKey, order.id);
    expectOk(res);
    expect(Object.keys(res.body).sort()).toEqual([...Object.keys(order), 'events'].sort());
    const { status, updated_at, failure_reason, events, ...stable } = res.body;
    expect(stable).toEqual({
      ok: true,
      id: order.id,
      external_id: 'abc-1',
      product: 'premium',
      recipient: '@SomeUser',
      quantity: 6,
      amount: { value: '5.33', currency: 'TON' },
      created_at: order.created_at,
      status_url: `${h.url}/api/v1/orders/${order.id}`,
    });
    expect(['fulfillment_pending', 'processing', 'delivered']).toContain(status);
    expect(failure_reason).toBeNull();
    expect(updated_at).toMatch(TIMESTAMP);
    expect(Date.parse(updated_at)).toBeGreaterThanOrEqual(Date.parse(order.created_at));
    expect(h.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    expect(Array.isArray(events)).toBe(true);
    expect(events[0]).toEqual({
      id: expect.stringMatching(EVENT_ID),
      type: 'order.created',
      status: 'fulfillment_pending',
      created_at: order.created_at,
      data: { amount: '5.33' },
    });
    for (const event of events) expect(event.created_at).toMatch(TIMESTAMP);
  });

  test('the status_url really answers (over the network, with the key)', async () => {
    const a = await h.account({ test: '10' });
    const order = await orderOf(a.testKey);
    const response = await fetch(order.status_url, { headers: { authorization: `Bearer ${a.testKey}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get('request-id')).toMatch(/^req_/);
    const body = (await response.json()) as { ok: boolean; id: string };
    expect(body).toMatchObject({ ok: true, id: order.id });
  });

  test('events are only in GET: the 201 and a replay have none', async () => {
    const a = await h.account({ test: '10' });
    const key = newKey();
    const first = await postOrder(h, a.testKey, STARS_50, key);
    expect(first.body).not.toHaveProperty('events');
    const replay = await postOrder(h, a.testKey, STARS_50, key);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).not.toHaveProperty('events');
    expect((await getOrder(h, a.testKey, first.body.id)).body.events.length).toBeGreaterThanOrEqual(1);
  });

  test('a live order is readable with the live key', async () => {
    const a = await h.account({ live: '10' });
    const { order } = await seedLiveOrder(h, a.accountId, { idempotencyKey: newKey(), product: 'stars', username: 'LiveUser', quantity: 100, externalId: 'L-1' });
    const res = await getOrder(h, a.liveKey, order.id);
    expectOk(res);
    expect(res.body).toMatchObject({
      id: order.id,
      recipient: '@LiveUser',
      quantity: 100,
      external_id: 'L-1',
      amount: { value: '0.5', currency: 'TON' },
      status: 'fulfillment_pending',
    });
    expect(res.body.events.map((e: { type: string }) => e.type)).toEqual(['order.created']);
  });
});

describe('404 order_not_found', () => {
  const notFound = (key: string, id: string) => expectRejected(h, () => getOrder(h, key, id), 404, 'order_not_found');

  test('an unknown, well-formed id', async () => {
    const a = await h.account();
    const id = 'ord_AAAAAAAAAAAAAAAAAAAAAA';
    expect(id).toMatch(ORDER_ID);
    await notFound(a.testKey, id);
  });

  test.each(['nope', 'ord_', 'ORD_AAAAAAAAAAAAAAAAAAAAAA', 'evt_AAAAAAAAAAAAAAAAAAAAAA', "ord_x'%20OR%20'1'='1", '%00', 'ord_AAAA.AAAA', 'ord_%F0%9F%98%80', '%25'])(
    'a malformed id %s',
    async (id) => {
      const a = await h.account();
      await notFound(a.testKey, id);
    },
  );

  test('a very long id (over the router parameter limit) is still a contract 404', async () => {
    const a = await h.account();
    await notFound(a.testKey, `ord_${'A'.repeat(200)}`);
  });

  test("another account's order", async () => {
    const owner = await h.account({ test: '10' });
    const other = await h.account({ test: '10' });
    const order = await orderOf(owner.testKey);
    await notFound(other.testKey, order.id);
    await notFound(other.liveKey, order.id);
    expectOk(await getOrder(h, owner.testKey, order.id));
  });

  test("a test order with the same account's live key", async () => {
    const a = await h.account({ test: '10' });
    const order = await orderOf(a.testKey);
    await notFound(a.liveKey, order.id);
  });

  test("a live order with the same account's test key", async () => {
    const a = await h.account({ live: '10' });
    const { order } = await seedLiveOrder(h, a.accountId, { idempotencyKey: newKey(), product: 'stars', username: 'durov', quantity: 50 });
    await notFound(a.testKey, order.id);
    expectOk(await getOrder(h, a.liveKey, order.id));
  });
});
