import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { call, expectOk, expectRejected, getQuote, MONEY, quiesce, TIMESTAMP } from '../support/http.js';

/** GET /quote (docs/api.md "GET /quote"), with the default price list. */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

async function quote(query: string, key?: string) {
  const k = key ?? (await h.account({ test: '10' })).testKey;
  await quiesce(h);
  const before = await h.counts();
  const res = await getQuote(h, k, query);
  expectOk(res);
  expect(await h.counts(), 'a quote writes nothing').toEqual(before);
  return res.body;
}

async function rejected(query: string, code: string, param: string) {
  const a = await h.account({ test: '10' });
  return expectRejected(h, () => getQuote(h, a.testKey, query), 400, code, param);
}

describe('prices (docs/api.md defaults)', () => {
  test.each([
    { product: 'stars', quantity: 50, value: '0.25' },
    { product: 'stars', quantity: 51, value: '0.255' },
    { product: 'stars', quantity: 333, value: '1.665' },
    { product: 'stars', quantity: 10000, value: '50' },
    { product: 'premium', quantity: 3, value: '3.996666667' },
    { product: 'premium', quantity: 6, value: '5.33' },
    // 9.6633333333… rounded UP to the nanoton.
    { product: 'premium', quantity: 12, value: '9.663333334' },
  ])('$product $quantity → $value TON', async ({ product, quantity, value }) => {
    const body = await quote(`?product=${product}&quantity=${quantity}`);
    expect(body).toEqual({
      ok: true,
      id: expect.stringMatching(/^quo_[0-9A-Za-z]{63}$/),
      product,
      quantity,
      amount: { value, currency: 'TON' },
      expires_at: expect.stringMatching(TIMESTAMP),
    });
    expect(body.amount.value).toMatch(MONEY);
  });

  test('expires_at ≈ now + 60 s (QUOTE_TTL_SECONDS default), RFC 3339 ms Z', async () => {
    const a = await h.account();
    const before = Date.now();
    const body = await quote('?product=stars&quantity=50', a.testKey);
    const after = Date.now();
    expect(body.expires_at).toMatch(TIMESTAMP);
    const expiresAt = Date.parse(body.expires_at);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 60_000);
    expect(expiresAt).toBeLessThanOrEqual(after + 60_000);
  });

  test('the live key gets the same quote (mode "live")', async () => {
    const a = await h.account();
    const live = await quote('?product=premium&quantity=3', a.liveKey);
    expect(live.amount).toEqual({ value: '3.996666667', currency: 'TON' });
  });

  test('the quote is what an order then costs', async () => {
    const a = await h.account({ test: '100' });
    const q = await quote('?product=premium&quantity=12', a.testKey);
    const order = await call(h, {
      method: 'POST',
      path: '/orders',
      key: a.testKey,
      json: { product: 'premium', recipient: 'durov', quantity: 12 },
      headers: { 'idempotency-key': 'quote-then-order' },
    });
    expectOk(order, 201);
    expect(order.body.amount).toEqual(q.amount);
  });
});

describe('quantity rules', () => {
  test.each([
    { product: 'stars', quantity: '49' },
    { product: 'stars', quantity: '10001' },
    { product: 'stars', quantity: '0' },
    { product: 'premium', quantity: '1' },
    { product: 'premium', quantity: '2' },
    { product: 'premium', quantity: '50' },
  ])('$product $quantity → 400 invalid_quantity', async ({ product, quantity }) => {
    await rejected(`?product=${product}&quantity=${quantity}`, 'invalid_quantity', 'quantity');
  });

  test.each(['50.0', '1e2', '%2B50', '-50', '%2050', '50%20', '', 'abc', '0x32', '5_0', '99999999999999999999999'])(
    'quantity=%s is not ^[0-9]+$ (or out of range) → invalid_quantity',
    async (quantity) => {
      await rejected(`?product=stars&quantity=${quantity}`, 'invalid_quantity', 'quantity');
    },
  );

  test('leading zeros match ^[0-9]+$: 0050 is 50', async () => {
    const body = await quote('?product=stars&quantity=0050');
    expect(body.quantity).toBe(50);
    expect(body.amount.value).toBe('0.25');
  });
});

describe('parameters', () => {
  test('missing product / quantity → invalid_request naming it; product first', async () => {
    await rejected('?quantity=50', 'invalid_request', 'product');
    await rejected('?product=stars', 'invalid_request', 'quantity');
    await rejected('', 'invalid_request', 'product');
    await rejected('?', 'invalid_request', 'product');
  });

  test('missing beats malformed', async () => {
    await rejected('?product=gold', 'invalid_request', 'quantity');
    await rejected('?quantity=1e2', 'invalid_request', 'product');
  });

  test('malformed product beats malformed quantity', async () => {
    await rejected('?product=gold&quantity=1e2', 'invalid_product', 'product');
  });

  test.each(['gold', 'Stars', 'PREMIUM', '', '%20stars'])('product=%s → invalid_product', async (product) => {
    await rejected(`?product=${product}&quantity=50`, 'invalid_product', 'product');
  });

  test('a repeated parameter → invalid_request naming it', async () => {
    await rejected('?product=stars&quantity=50&quantity=60', 'invalid_request', 'quantity');
    await rejected('?product=stars&product=stars&quantity=50', 'invalid_request', 'product');
  });

  test('unknown query parameters are ignored', async () => {
    const body = await quote('?product=stars&quantity=50&currency=USD&foo=bar&recipient=%40x');
    expect(body.amount).toEqual({ value: '0.25', currency: 'TON' });
  });

  test('a body on GET is not read', async () => {
    const a = await h.account();
    const res = await call(h, { path: '/quote?product=stars&quantity=50', key: a.testKey, raw: '{not json', headers: { 'content-type': 'application/json' } });
    expectOk(res);
  });
});
