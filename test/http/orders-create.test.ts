import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { call, expectOk, expectOrderRejected, MONEY, newKey, ORDER_ID, postOrder, STARS_50, TIMESTAMP } from '../support/http.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const ORDER_FIELDS = ['amount', 'created_at', 'external_id', 'failure_reason', 'id', 'ok', 'product', 'quantity', 'recipient', 'status', 'status_url', 'updated_at'];

/** Creates an order on a fresh funded test account and returns the 201 body. */
async function created(body: Record<string, unknown>, funds = '100') {
  const a = await h.account({ test: funds });
  const res = await postOrder(h, a.testKey, body);
  expectOk(res, 201);
  return res.body;
}

describe('a created order', () => {
  test('201 with the order object (no events), fulfillment_pending, formats per docs/api.md "Conventions"', async () => {
    const before = Date.now();
    const a = await h.account({ test: '10' });
    const res = await postOrder(h, a.testKey, { product: 'stars', recipient: '@durov', quantity: 50, external_id: 'inv-1' });
    const after = Date.now();
    expectOk(res, 201);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(Object.keys(res.body).sort()).toEqual(ORDER_FIELDS);
    expect(res.body).toMatchObject({
      ok: true,
      external_id: 'inv-1',
      product: 'stars',
      recipient: '@durov',
      quantity: 50,
      amount: { value: '0.25', currency: 'TON' },
      status: 'fulfillment_pending',
      failure_reason: null,
    });
    expect(res.body.id).toMatch(ORDER_ID);
    expect(res.body.status_url).toBe(`${h.url}/api/v1/orders/${res.body.id}`);
    for (const field of ['created_at', 'updated_at']) {
      expect(res.body[field]).toMatch(TIMESTAMP);
      const at = Date.parse(res.body[field]);
      expect(at).toBeGreaterThanOrEqual(before);
      expect(at).toBeLessThanOrEqual(after);
    }
  });

  test('ids are random, never sequential', async () => {
    const a = await h.account({ test: '10' });
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await postOrder(h, a.testKey, STARS_50)).body.id);
    expect(new Set(ids).size).toBe(3);
    for (const id of ids) expect(id).toMatch(ORDER_ID);
  });

  test('Content-Type "application/json; charset=utf-8" is accepted', async () => {
    const a = await h.account({ test: '10' });
    const res = await call(h, {
      method: 'POST',
      path: '/orders',
      key: a.testKey,
      raw: JSON.stringify(STARS_50),
      headers: { 'content-type': 'application/json; charset=utf-8', 'idempotency-key': newKey() },
    });
    expectOk(res, 201);
  });
});

describe('quantity rules (docs/api.md "GET /quote")', () => {
  test.each([
    { product: 'stars', quantity: 50, value: '0.25' },
    { product: 'stars', quantity: 51, value: '0.255' },
    { product: 'stars', quantity: 10000, value: '50' },
    { product: 'premium', quantity: 3, value: '3.996666667' },
    { product: 'premium', quantity: 6, value: '5.33' },
    { product: 'premium', quantity: 12, value: '9.663333334' },
  ])('$product $quantity → 201, amount $value', async ({ product, quantity, value }) => {
    const body = await created({ product, recipient: 'durov', quantity });
    expect(body.quantity).toBe(quantity);
    expect(body.amount).toEqual({ value, currency: 'TON' });
    expect(body.amount.value).toMatch(MONEY);
  });

  test.each([
    { product: 'stars', quantity: 49 },
    { product: 'stars', quantity: 10001 },
    { product: 'stars', quantity: 0 },
    { product: 'stars', quantity: -50 },
    { product: 'stars', quantity: 50.5 },
    { product: 'stars', quantity: 3 },
    { product: 'premium', quantity: 1 },
    { product: 'premium', quantity: 2 },
    { product: 'premium', quantity: 4 },
    { product: 'premium', quantity: 50 },
    { product: 'premium', quantity: 3.5 },
  ])('$product $quantity → 400 invalid_quantity', async ({ product, quantity }) => {
    const a = await h.account({ test: '100' });
    await expectOrderRejected(h, a.testKey, { product, recipient: 'durov', quantity }, 400, 'invalid_quantity', 'quantity');
  });

  test.each([{ quantity: '100' }, { quantity: '50' }, { quantity: null }, { quantity: true }, { quantity: [50] }, { quantity: { value: 50 } }])(
    'no coercion: quantity $quantity → 400 invalid_quantity',
    async ({ quantity }) => {
      const a = await h.account({ test: '10' });
      await expectOrderRejected(h, a.testKey, { product: 'stars', recipient: 'durov', quantity }, 400, 'invalid_quantity', 'quantity');
    },
  );

  test('50.0 is the integer 50 (a JSON number is judged by its value)', async () => {
    const a = await h.account({ test: '10' });
    const res = await call(h, {
      method: 'POST',
      path: '/orders',
      key: a.testKey,
      raw: '{"product":"stars","recipient":"durov","quantity":50.0}',
      headers: { 'content-type': 'application/json', 'idempotency-key': newKey() },
    });
    expectOk(res, 201);
    expect(res.body.quantity).toBe(50);
    expect(res.body.amount.value).toBe('0.25');
  });

  test('5e1 is 50; 1e400 is not an integer quantity', async () => {
    const a = await h.account({ test: '10' });
    const send = (raw: string) => call(h, { method: 'POST', path: '/orders', key: a.testKey, raw, headers: { 'content-type': 'application/json', 'idempotency-key': newKey() } });
    const res = await send('{"product":"stars","recipient":"durov","quantity":5e1}');
    expectOk(res, 201);
    expect(res.body.quantity).toBe(50);
    await expectOrderRejected(h, a.testKey, undefined, 400, 'invalid_quantity', 'quantity', {
      raw: { payload: '{"product":"stars","recipient":"durov","quantity":1e400}', contentType: 'application/json' },
    });
  });
});

describe('product', () => {
  test.each([{ product: null }, { product: 'Stars' }, { product: 'STARS' }, { product: 'gold' }, { product: '' }, { product: 1 }, { product: ['stars'] }, { product: true }])(
    'product $product → 400 invalid_product',
    async ({ product }) => {
      const a = await h.account({ test: '10' });
      await expectOrderRejected(h, a.testKey, { product, recipient: 'durov', quantity: 50 }, 400, 'invalid_product', 'product');
    },
  );
});

describe('recipient (docs/api.md "POST /recipients/validate")', () => {
  const valid = ['abcd', '@abcd', 'Durov', '@DuRoV', 'a_b_c', 'A1_2', 'abc1', `a${'b'.repeat(31)}`, `@a${'b'.repeat(31)}`, 'test_user_1', 'x___y'];
  test.each(valid)('%s is accepted and shown as "@" + the name as supplied', async (recipient) => {
    const body = await created({ product: 'stars', recipient, quantity: 50 });
    expect(body.recipient).toBe(`@${recipient.replace(/^@/, '')}`);
  });

  const invalid: unknown[] = [
    'abc',
    '@abc',
    `a${'b'.repeat(32)}`,
    '1abc',
    '_abcd',
    'abcd_',
    '@@abcd',
    'ab cd',
    ' abcd',
    'abcd ',
    'abcd\n',
    'ab-cd',
    'ab.cd',
    'abcd@',
    'https://t.me/abcd',
    't.me/abcd',
    'аbcd', // Cyrillic "а"
    'ａbcd', // full-width "a"
    '',
    '@',
    'ab\u0000cd',
    123,
    12345,
    null,
    true,
    ['abcd'],
    { username: 'abcd' },
  ];
  test.each(invalid)('%j → 400 recipient_invalid, details.reason not_found (no account can have it)', async (recipient) => {
    const a = await h.account({ test: '10' });
    const res = await expectOrderRejected(h, a.testKey, { product: 'stars', recipient, quantity: 50 }, 400, 'recipient_invalid', 'recipient');
    expect(res.body.error.details).toEqual({ reason: 'not_found' });
  });
});

describe('external_id', () => {
  test('absent → null', async () => {
    expect((await created({ ...STARS_50 })).external_id).toBeNull();
  });

  test('null → null', async () => {
    expect((await created({ ...STARS_50, external_id: null })).external_id).toBeNull();
  });

  test('a 128-character string is echoed exactly', async () => {
    expect((await created({ ...STARS_50, external_id: 'x'.repeat(128) })).external_id).toBe('x'.repeat(128));
    const prefix = 'Inv-0042/é "quoted" \\ <tag> & 😀';
    const externalId = `${prefix}${'.'.repeat(127 - [...prefix].length)}Z`;
    expect([...externalId]).toHaveLength(128);
    expect((await created({ ...STARS_50, external_id: externalId })).external_id).toBe(externalId);
  });

  test('128 code points of emoji are accepted (length counts code points, not UTF-16 units or bytes)', async () => {
    const externalId = '😀'.repeat(128);
    expect(externalId.length).toBe(256);
    expect((await created({ ...STARS_50, external_id: externalId })).external_id).toBe(externalId);
  });

  test('1 character and whitespace-only strings are echoed as supplied', async () => {
    expect((await created({ ...STARS_50, external_id: 'x' })).external_id).toBe('x');
    expect((await created({ ...STARS_50, external_id: '  ' })).external_id).toBe('  ');
  });

  test.each([
    { name: 'empty string', externalId: '' },
    { name: '129 emoji', externalId: '😀'.repeat(129) },
    { name: '129 ASCII characters', externalId: 'x'.repeat(129) },
    { name: 'a number', externalId: 42 },
    { name: 'a boolean', externalId: false },
    { name: 'an object', externalId: { id: 'x' } },
    { name: 'an array', externalId: ['x'] },
  ])('$name → 400 invalid_external_id', async ({ externalId }) => {
    const a = await h.account({ test: '10' });
    await expectOrderRejected(h, a.testKey, { ...STARS_50, external_id: externalId }, 400, 'invalid_external_id', 'external_id');
  });
});

describe('unknown and missing fields', () => {
  test.each(['amount', 'quote_id', 'Product', 'status', '__proto__', 'constructor'])('unknown field %s → 400 invalid_request naming it', async (field) => {
    const a = await h.account({ test: '10' });
    const payload = `{"product":"stars","recipient":"durov","quantity":50,${JSON.stringify(field)}:1}`;
    await expectOrderRejected(h, a.testKey, undefined, 400, 'invalid_request', field, { raw: { payload, contentType: 'application/json' } });
  });

  test.each(['product', 'recipient', 'quantity'])('missing %s → 400 invalid_request naming it', async (field) => {
    const a = await h.account({ test: '10' });
    const body: Record<string, unknown> = { ...STARS_50 };
    delete body[field];
    await expectOrderRejected(h, a.testKey, body, 400, 'invalid_request', field);
  });
});
