import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import {
  call,
  drain,
  expectKeyFree,
  expectOk,
  expectOrderRejected,
  expectRejected,
  getOrder,
  newKey,
  postOrder,
  quiesce,
  type Res,
  seedLiveOrder,
  STARS_50,
  waitForStatus,
} from '../support/http.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const BASE = { product: 'stars', recipient: '@Durov', quantity: 50, external_id: 'inv-7' };

function expectFirst(res: Res) {
  expectOk(res, 201);
  expect(res.headers['idempotent-replayed']).toBeUndefined();
}

/** A replay: 201, Idempotent-Replayed: true, the same order, nothing written. */
async function expectReplay(send: () => Promise<Res>, original: { id: string }) {
  await quiesce(h);
  const before = await h.counts();
  const res = await send();
  expectOk(res, 201);
  expect(res.headers['idempotent-replayed']).toBe('true');
  expect(res.body.id).toBe(original.id);
  expect(await h.counts(), 'a replay writes nothing').toEqual(before);
  return res;
}

describe('replay', () => {
  test('same key, same parameters → 201 replay with the same order; only the first lacks the header', async () => {
    const a = await h.account({ test: '10' });
    const key = newKey();
    const first = await postOrder(h, a.testKey, BASE, key);
    expectFirst(first);
    const replay = await expectReplay(() => postOrder(h, a.testKey, BASE, key), first.body);
    const { status, updated_at, ...rest } = replay.body;
    const { status: _s, updated_at: _u, ...firstRest } = first.body;
    expect(rest).toEqual(firstRest);
    expect(replay.body).not.toHaveProperty('events');
    // Charged once, not twice (whether still reserved or already delivered).
    expect((await call(h, { path: '/balance', key: a.testKey })).body.balance.value).toBe('9.75');
  });

  test('a replay returns the order in its current state (delivered), still without events', async () => {
    const a = await h.account({ test: '10' });
    const key = newKey();
    const first = await postOrder(h, a.testKey, STARS_50, key);
    expectFirst(first);
    await waitForStatus(h, a.testKey, first.body.id, ['delivered']);
    const replay = await expectReplay(() => postOrder(h, a.testKey, STARS_50, key), first.body);
    expect(replay.body.status).toBe('delivered');
    expect(replay.body).not.toHaveProperty('events');
  });

  test.each([
    { name: 'recipient without "@"', change: { recipient: 'Durov' } },
    { name: 'recipient in another case', change: { recipient: '@DUROV' } },
    { name: 'recipient lower-case without "@"', change: { recipient: 'durov' } },
    { name: 'quantity 50.0', change: { quantity: 50.0 } },
    { name: 'fields in another order', change: {}, reorder: true },
  ])('the same fingerprint: $name → replay (recipient shown as first supplied)', async ({ change, reorder }) => {
    const a = await h.account({ test: '10' });
    const key = newKey();
    const first = await postOrder(h, a.testKey, BASE, key);
    expectFirst(first);
    const body = { ...BASE, ...change };
    const again = reorder ? Object.fromEntries(Object.entries(body).reverse()) : body;
    const replay = await expectReplay(() => postOrder(h, a.testKey, again, key), first.body);
    expect(replay.body.recipient).toBe('@Durov');
  });

  test('external_id absent and null are the same fingerprint', async () => {
    const a = await h.account({ test: '10' });
    const key = newKey();
    const first = await postOrder(h, a.testKey, STARS_50, key);
    expectFirst(first);
    await expectReplay(() => postOrder(h, a.testKey, { ...STARS_50, external_id: null }, key), first.body);
  });

  test('concurrent requests with one key create one order; the others replay it', async () => {
    const a = await h.account({ test: '10' });
    const key = newKey();
    await quiesce(h);
    const before = await h.counts();
    const results = await Promise.all(Array.from({ length: 6 }, () => postOrder(h, a.testKey, STARS_50, key)));
    for (const res of results) expectOk(res, 201);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(results.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(results.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(5);
    expect((await h.counts()).orders).toBe(before.orders + 1);
  });
});

describe('conflict: same key, different parameters → 409 idempotency_conflict', () => {
  test.each([
    { name: 'product (and the quantity it needs)', change: { product: 'premium', quantity: 3 } },
    { name: 'recipient', change: { recipient: '@Durov2' } },
    { name: 'quantity', change: { quantity: 51 } },
    { name: 'external_id', change: { external_id: 'inv-8' } },
    { name: 'external_id in another case', change: { external_id: 'INV-7' } },
    { name: 'external_id removed', change: { external_id: undefined } },
    { name: 'external_id null', change: { external_id: null } },
  ])('$name differs', async ({ change }) => {
    const a = await h.account({ test: '10' });
    const key = newKey();
    expectFirst(await postOrder(h, a.testKey, BASE, key));
    const res = await expectRejected(h, () => postOrder(h, a.testKey, { ...BASE, ...change }, key), 409, 'idempotency_conflict');
    expect(res.headers['idempotent-replayed']).toBeUndefined();
  });

  test('external_id added where the first had none', async () => {
    const a = await h.account({ test: '10' });
    const key = newKey();
    expectFirst(await postOrder(h, a.testKey, STARS_50, key));
    await expectRejected(h, () => postOrder(h, a.testKey, { ...STARS_50, external_id: 'x' }, key), 409, 'idempotency_conflict');
  });

  test('a conflict leaves the original order intact and replayable', async () => {
    const a = await h.account({ test: '10' });
    const key = newKey();
    const first = await postOrder(h, a.testKey, BASE, key);
    await expectRejected(h, () => postOrder(h, a.testKey, { ...BASE, quantity: 99 }, key), 409, 'idempotency_conflict');
    await expectReplay(() => postOrder(h, a.testKey, BASE, key), first.body);
    expect((await getOrder(h, a.testKey, first.body.id)).body.quantity).toBe(50);
  });
});

describe('scope: account and mode', () => {
  test('the same key on another account creates an independent order', async () => {
    const a = await h.account({ test: '10' });
    const b = await h.account({ test: '10' });
    const key = newKey();
    const first = await postOrder(h, a.testKey, STARS_50, key);
    expectFirst(first);
    const second = await postOrder(h, b.testKey, { ...STARS_50, quantity: 60 }, key);
    expectFirst(second);
    expect(second.body.id).not.toBe(first.body.id);
  });

  test('the same key with the live key is independent of the test order: 503 live_unavailable, not a replay or conflict', async () => {
    const a = await h.account({ test: '10', live: '10' });
    const key = newKey();
    expectFirst(await postOrder(h, a.testKey, STARS_50, key));
    await expectRejected(h, () => postOrder(h, a.liveKey, STARS_50, key), 503, 'live_unavailable');
    await expectRejected(h, () => postOrder(h, a.liveKey, { ...STARS_50, quantity: 70 }, key), 503, 'live_unavailable');
  });

  test('a live order does not bind the key in test mode', async () => {
    const a = await h.account({ test: '10', live: '10' });
    const key = newKey();
    await seedLiveOrder(h, a.accountId, { idempotencyKey: key, product: 'stars', username: 'durov', quantity: 100 });
    await expectKeyFree(h, a.testKey, key);
  });

  test('keys are compared exactly as sent: case and surrounding characters matter', async () => {
    const a = await h.account({ test: '10' });
    const key = `Key-${newKey()}`;
    const first = await postOrder(h, a.testKey, STARS_50, key);
    expectFirst(first);
    const lower = await postOrder(h, a.testKey, STARS_50, key.toLowerCase());
    expectFirst(lower);
    const suffixed = await postOrder(h, a.testKey, STARS_50, `${key}.`);
    expectFirst(suffixed);
    expect(new Set([first.body.id, lower.body.id, suffixed.body.id]).size).toBe(3);
  });
});

describe('only a request that created an order binds its key', () => {
  test('after a 400 the same key works, with the same or new parameters', async () => {
    const a = await h.account({ test: '10' });
    const key = newKey();
    await expectOrderRejected(h, a.testKey, { ...STARS_50, quantity: 49 }, 400, 'invalid_quantity', 'quantity', { idempotencyKey: key });
    // expectOrderRejected just created an order with `key`; prove that it is now bound.
    await expectRejected(h, () => postOrder(h, a.testKey, { ...STARS_50, quantity: 49 }, key), 400, 'invalid_quantity');
    await expectRejected(h, () => postOrder(h, a.testKey, { ...STARS_50, quantity: 51 }, key), 409, 'idempotency_conflict');
  });

  test('after a 402 the same key works once the balance allows it', async () => {
    const a = await h.account({ test: '0.1' });
    const key = newKey();
    const res = await expectRejected(h, () => postOrder(h, a.testKey, STARS_50, key), 402, 'insufficient_balance');
    expect(res.body.error.details).toEqual({ available: '0.1', required: '0.25' });
    await h.credit(a.accountId, 'test', '0.15');
    const second = await postOrder(h, a.testKey, STARS_50, key);
    expectFirst(second);
  });

  test('after a 402 the same key works with new parameters', async () => {
    const a = await h.account({ test: '0.3' });
    const key = newKey();
    await expectRejected(h, () => postOrder(h, a.testKey, { ...STARS_50, quantity: 100 }, key), 402, 'insufficient_balance');
    expectFirst(await postOrder(h, a.testKey, STARS_50, key));
  });

  test('after a 503 live_unavailable the key is not bound (a live order can then be created with it)', async () => {
    const a = await h.account({ live: '10' });
    const key = newKey();
    await expectRejected(h, () => postOrder(h, a.liveKey, STARS_50, key), 503, 'live_unavailable');
    const seeded = await seedLiveOrder(h, a.accountId, { idempotencyKey: key, product: 'stars', username: 'durov', quantity: 60 });
    expect(seeded.replayed).toBe(false);
  });

  test('after a 409 conflict the original binding is unchanged', async () => {
    const a = await h.account({ test: '10' });
    const key = newKey();
    const first = await postOrder(h, a.testKey, STARS_50, key);
    await expectRejected(h, () => postOrder(h, a.testKey, { ...STARS_50, quantity: 51 }, key), 409, 'idempotency_conflict');
    await expectRejected(h, () => postOrder(h, a.testKey, { ...STARS_50, quantity: 51 }, key), 409, 'idempotency_conflict');
    await expectReplay(() => postOrder(h, a.testKey, STARS_50, key), first.body);
  });

  test('after a 401 nothing is bound', async () => {
    const a = await h.account({ test: '10' });
    const key = newKey();
    await expectRejected(h, () => call(h, { method: 'POST', path: '/orders', json: STARS_50, headers: { 'idempotency-key': key } }), 401, 'missing_api_key');
    await expectKeyFree(h, a.testKey, key);
  });
});

describe('the Idempotency-Key header', () => {
  test('missing → 400 idempotency_key_required', async () => {
    const a = await h.account({ test: '10' });
    await expectRejected(h, () => postOrder(h, a.testKey, STARS_50, null), 400, 'idempotency_key_required');
  });

  test('empty → 400 idempotency_key_invalid', async () => {
    const a = await h.account({ test: '10' });
    await expectRejected(h, () => postOrder(h, a.testKey, STARS_50, ''), 400, 'idempotency_key_invalid');
  });

  test('256 characters → 400 idempotency_key_invalid; 255 characters work', async () => {
    const a = await h.account({ test: '10' });
    const long = 'k'.repeat(256);
    await expectRejected(h, () => postOrder(h, a.testKey, STARS_50, long), 400, 'idempotency_key_invalid');
    const ok = 'k'.repeat(255);
    const first = await postOrder(h, a.testKey, STARS_50, ok);
    expectFirst(first);
    await expectReplay(() => postOrder(h, a.testKey, STARS_50, ok), first.body);
  });

  test('a 1-character key works', async () => {
    const a = await h.account({ test: '10' });
    expectFirst(await postOrder(h, a.testKey, STARS_50, 'x'));
  });

  test('the header is ignored on other endpoints (even an invalid one)', async () => {
    const a = await h.account({ test: '10' });
    const order = await postOrder(h, a.testKey, STARS_50);
    for (const value of ['', 'k'.repeat(300), order.headers['request-id'] as string]) {
      const headers = { 'idempotency-key': value };
      expectOk(await call(h, { path: '/balance', key: a.testKey, headers }));
      expectOk(await call(h, { path: '/quote?product=stars&quantity=50', key: a.testKey, headers }));
      expectOk(await call(h, { path: `/orders/${order.body.id}`, key: a.testKey, headers }));
      expectOk(await call(h, { method: 'POST', path: '/recipients/validate', key: a.testKey, json: STARS_50, headers }));
    }
  });

  test('the key of a validate call is not bound to anything', async () => {
    const a = await h.account({ test: '10' });
    const key = newKey();
    expectOk(await call(h, { method: 'POST', path: '/recipients/validate', key: a.testKey, json: STARS_50, headers: { 'idempotency-key': key } }));
    await expectKeyFree(h, a.testKey, key);
  });
});

describe('insufficient balance does not disturb replays', () => {
  test('drained balance: the replay answers 201, a new key answers 402', async () => {
    const a = await h.account({ test: '10' });
    const key = newKey();
    const first = await postOrder(h, a.testKey, STARS_50, key);
    expectFirst(first);
    await drain(h, a.accountId, 'test');
    await expectReplay(() => postOrder(h, a.testKey, STARS_50, key), first.body);
    await expectRejected(h, () => postOrder(h, a.testKey, STARS_50), 402, 'insufficient_balance');
  });
});
