import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { call, drain, expectOk, expectOrderRejected, expectRejected, newKey, postOrder, quiesce, seedLiveOrder, STARS_50 } from '../support/http.js';

/**
 * docs/api.md "Order of checks": unknown route 404 → authentication 401 → (429) → body size 413 →
 * content type 415 → invalid_json → Idempotency-Key header → body fields (missing, then
 * malformed, each in the order product, recipient, quantity, external_id, then unknown fields)
 * → idempotency replay / conflict → live_unavailable → insufficient_balance.
 * One test per adjacent pair: the request fails both checks and the earlier one must answer.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const OVERSIZED = 'x'.repeat(16 * 1024 + 1);

function rawOrder(options: { key?: string; contentType?: string; payload: string; idempotencyKey?: string | null }) {
  return call(h, {
    method: 'POST',
    path: '/orders',
    ...(options.key !== undefined && { key: options.key }),
    raw: options.payload,
    headers: {
      ...(options.contentType !== undefined && { 'content-type': options.contentType }),
      ...(options.idempotencyKey !== null && { 'idempotency-key': options.idempotencyKey ?? newKey() }),
    },
  });
}

describe('404 → 401', () => {
  test('an unknown route without a key is 404, not 401', async () => {
    await expectRejected(h, () => call(h, { method: 'POST', path: '/order', json: STARS_50 }), 404, 'not_found');
  });
});

describe('401 → 413 / 415 / invalid_json', () => {
  test('no key and an oversized body → 401', async () => {
    await expectRejected(h, () => rawOrder({ contentType: 'application/json', payload: OVERSIZED }), 401, 'missing_api_key');
  });

  test('an unknown key and an oversized body → 401', async () => {
    await expectRejected(h, () => rawOrder({ key: 'sk_test_nope', contentType: 'text/plain', payload: OVERSIZED }), 401, 'invalid_api_key');
  });

  test('no key and a non-JSON content type → 401', async () => {
    await expectRejected(h, () => rawOrder({ contentType: 'text/plain', payload: 'hello' }), 401, 'missing_api_key');
  });

  test('no key and invalid JSON → 401', async () => {
    await expectRejected(h, () => rawOrder({ contentType: 'application/json', payload: '{"product":' }), 401, 'missing_api_key');
  });

  test('no key and an invalid body on validate → 401', async () => {
    await expectRejected(h, () => call(h, { method: 'POST', path: '/recipients/validate', raw: '[1,', headers: { 'content-type': 'application/json' } }), 401, 'missing_api_key');
  });
});

describe('413 → 415 → invalid_json → Idempotency-Key', () => {
  test('an oversized text/plain body → 413, not 415', async () => {
    const a = await h.account({ test: '10' });
    await expectOrderRejected(h, a.testKey, undefined, 413, 'payload_too_large', null, { raw: { payload: OVERSIZED, contentType: 'text/plain' } });
  });

  test('an oversized body without Idempotency-Key → 413', async () => {
    const a = await h.account({ test: '10' });
    await expectRejected(h, () => rawOrder({ key: a.testKey, contentType: 'application/json', payload: OVERSIZED, idempotencyKey: null }), 413, 'payload_too_large');
  });

  test('invalid JSON sent as text/plain → 415, not invalid_json', async () => {
    const a = await h.account({ test: '10' });
    await expectOrderRejected(h, a.testKey, undefined, 415, 'unsupported_media_type', null, { raw: { payload: '{"product":', contentType: 'text/plain' } });
  });

  test('invalid JSON without Idempotency-Key → invalid_json, not idempotency_key_required', async () => {
    const a = await h.account({ test: '10' });
    await expectRejected(h, () => rawOrder({ key: a.testKey, contentType: 'application/json', payload: '{"product":', idempotencyKey: null }), 400, 'invalid_json');
  });

  test('a non-object JSON body without Idempotency-Key → invalid_json', async () => {
    const a = await h.account({ test: '10' });
    await expectRejected(h, () => rawOrder({ key: a.testKey, contentType: 'application/json', payload: '[]', idempotencyKey: null }), 400, 'invalid_json');
  });
});

describe('Idempotency-Key → body fields', () => {
  test('a missing Idempotency-Key beats a missing / malformed body field', async () => {
    const a = await h.account({ test: '10' });
    await expectRejected(h, () => postOrder(h, a.testKey, {}, null), 400, 'idempotency_key_required');
    await expectRejected(h, () => postOrder(h, a.testKey, { product: 'gold', recipient: 1, quantity: 'x', zz: 1 }, null), 400, 'idempotency_key_required');
  });

  test('an invalid Idempotency-Key beats body fields', async () => {
    const a = await h.account({ test: '10' });
    await expectRejected(h, () => postOrder(h, a.testKey, { product: 'gold' }, ''), 400, 'idempotency_key_invalid');
    await expectRejected(h, () => postOrder(h, a.testKey, { quantity: 1 }, 'k'.repeat(256)), 400, 'idempotency_key_invalid');
  });
});

describe('body fields: missing → malformed → unknown, each in field order', () => {
  const cases: Array<{ name: string; body: Record<string, unknown>; code: string; param: string }> = [
    { name: 'missing beats malformed (recipient missing, product malformed)', body: { product: 'gold', quantity: 50 }, code: 'invalid_request', param: 'recipient' },
    { name: 'missing beats malformed (quantity missing, all else malformed)', body: { product: 1, recipient: '!', external_id: '' }, code: 'invalid_request', param: 'quantity' },
    { name: 'missing fields in order: product first', body: {}, code: 'invalid_request', param: 'product' },
    { name: 'missing fields in order: recipient before quantity', body: { product: 'stars' }, code: 'invalid_request', param: 'recipient' },
    { name: 'missing fields in order: quantity last', body: { product: 'stars', recipient: 'durov' }, code: 'invalid_request', param: 'quantity' },
    { name: 'malformed product before recipient', body: { product: 'gold', recipient: '1bad', quantity: 50 }, code: 'invalid_product', param: 'product' },
    { name: 'malformed product before everything', body: { product: null, recipient: 5, quantity: 'x', external_id: 7 }, code: 'invalid_product', param: 'product' },
    { name: 'malformed recipient before quantity', body: { product: 'stars', recipient: '1bad', quantity: 49 }, code: 'recipient_invalid', param: 'recipient' },
    { name: 'malformed recipient before external_id', body: { product: 'stars', recipient: 'ab', quantity: 50, external_id: '' }, code: 'recipient_invalid', param: 'recipient' },
    { name: 'malformed quantity before external_id', body: { product: 'premium', recipient: 'durov', quantity: 50, external_id: '' }, code: 'invalid_quantity', param: 'quantity' },
    { name: 'malformed external_id alone', body: { product: 'stars', recipient: 'durov', quantity: 50, external_id: 12 }, code: 'invalid_external_id', param: 'external_id' },
    { name: 'malformed beats unknown field', body: { zz: 1, product: 'stars', recipient: 'durov', quantity: 10001 }, code: 'invalid_quantity', param: 'quantity' },
    {
      name: 'malformed external_id beats unknown field',
      body: { product: 'stars', recipient: 'durov', quantity: 50, external_id: '', extra: true },
      code: 'invalid_external_id',
      param: 'external_id',
    },
    { name: 'missing beats unknown field', body: { product: 'stars', quantity: 50, recipent: 'durov' }, code: 'invalid_request', param: 'recipient' },
    { name: 'unknown field last', body: { product: 'stars', recipient: 'durov', quantity: 50, amount: '0.25' }, code: 'invalid_request', param: 'amount' },
  ];
  test.each(cases)('$name → $code ($param)', async ({ body, code, param }) => {
    const a = await h.account({ test: '10' });
    await expectOrderRejected(h, a.testKey, body, 400, code, param);
  });

  test('body fields beat replay: a bound key with an invalid body → 400, not the order', async () => {
    const a = await h.account({ test: '10' });
    const key = newKey();
    expectOk(await postOrder(h, a.testKey, STARS_50, key), 201);
    await expectRejected(h, () => postOrder(h, a.testKey, { ...STARS_50, quantity: 49 }, key), 400, 'invalid_quantity', 'quantity');
    await expectRejected(h, () => postOrder(h, a.testKey, { ...STARS_50, zz: 1 }, key), 400, 'invalid_request', 'zz');
  });
});

describe('replay / conflict → live_unavailable → insufficient_balance', () => {
  test('a replay beats live_unavailable: a live order replays with the live key', async () => {
    const a = await h.account({ live: '10' });
    const key = newKey();
    const seeded = await seedLiveOrder(h, a.accountId, { idempotencyKey: key, product: 'stars', username: 'durov', quantity: 50 });
    const res = await postOrder(h, a.liveKey, { product: 'stars', recipient: '@durov', quantity: 50 }, key);
    expectOk(res, 201);
    expect(res.headers['idempotent-replayed']).toBe('true');
    expect(res.body.id).toBe(seeded.order.id);
  });

  test('a conflict beats live_unavailable', async () => {
    const a = await h.account({ live: '10' });
    const key = newKey();
    await seedLiveOrder(h, a.accountId, { idempotencyKey: key, product: 'stars', username: 'durov', quantity: 50 });
    await expectRejected(h, () => postOrder(h, a.liveKey, { product: 'stars', recipient: '@durov', quantity: 51 }, key), 409, 'idempotency_conflict');
  });

  test('live_unavailable beats insufficient_balance (live balance 0)', async () => {
    const a = await h.account();
    await expectRejected(h, () => postOrder(h, a.liveKey, STARS_50), 503, 'live_unavailable');
  });

  test('a replay beats insufficient_balance: drained balance, replay → 201 with Idempotent-Replayed', async () => {
    const a = await h.account({ test: '10' });
    const key = newKey();
    const first = await postOrder(h, a.testKey, STARS_50, key);
    expectOk(first, 201);
    await drain(h, a.accountId, 'test');
    // A new key now cannot pay …
    await expectRejected(h, () => postOrder(h, a.testKey, STARS_50), 402, 'insufficient_balance');
    // … but the replay still answers with the order, and writes nothing.
    const replay = await expectReplayWritesNothing(() => postOrder(h, a.testKey, STARS_50, key));
    expect(replay.body.id).toBe(first.body.id);
  });

  test('a conflict beats insufficient_balance', async () => {
    const a = await h.account({ test: '10' });
    const key = newKey();
    expectOk(await postOrder(h, a.testKey, STARS_50, key), 201);
    await drain(h, a.accountId, 'test');
    await expectRejected(h, () => postOrder(h, a.testKey, { ...STARS_50, quantity: 60 }, key), 409, 'idempotency_conflict');
  });
});

async function expectReplayWritesNothing(send: () => ReturnType<typeof postOrder>) {
  await quiesce(h);
  const before = await h.counts();
  const res = await send();
  expectOk(res, 201);
  expect(res.headers['idempotent-replayed']).toBe('true');
  expect(await h.counts()).toEqual(before);
  return res;
}
