import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { call, expectOk, expectRejected, quiesce, validate } from '../support/http.js';

/** POST /recipients/validate (docs/api.md "POST /recipients/validate" and "Test mode"). */

let h: Harness;
let testKey: string;
let liveKey: string;
beforeAll(async () => {
  h = await startHarness();
});
beforeEach(async () => {
  ({ testKey, liveKey } = await h.account({ test: '10', live: '10' }));
});
afterAll(async () => {
  await h.close();
});

/** A successful validate, which must not write anything either. */
async function eligible(body: Record<string, unknown>) {
  await quiesce(h);
  const before = await h.counts();
  const res = await validate(h, testKey, body);
  expectOk(res);
  expect(await h.counts()).toEqual(before);
  return res.body;
}

const rejected = (body: unknown, status: number, code: string, param?: string | null, key?: string) =>
  expectRejected(h, () => validate(h, key ?? testKey, body), status, code, param);

describe('eligible recipients', () => {
  test.each(['durov', '@durov', '@DuRoV', 'Abc_1', `a${'b'.repeat(31)}`, 'test_failed', '@test_slow', 'TEST_SLOW'])(
    '%s → 200 with username (no "@"), display_name = username, eligible',
    async (recipient) => {
      const body = await eligible({ product: 'stars', recipient, quantity: 50 });
      const username = recipient.replace(/^@/, '');
      expect(body).toEqual({ ok: true, recipient: { username, display_name: username, eligible: true } });
    },
  );

  test.each([
    { product: 'stars', quantity: 50 },
    { product: 'stars', quantity: 10000 },
    { product: 'premium', quantity: 3 },
    { product: 'premium', quantity: 6 },
    { product: 'premium', quantity: 12 },
  ])('$product $quantity → 200', async (input) => {
    await eligible({ ...input, recipient: 'durov' });
  });
});

describe('recipient_invalid', () => {
  test.each(['@test_invalid', 'test_invalid', 'TEST_INVALID', '@Test_Invalid'])('%s (not found in test mode) → 400 recipient_invalid', async (recipient) => {
    await rejected({ product: 'stars', recipient, quantity: 50 }, 400, 'recipient_invalid', 'recipient');
    await rejected({ product: 'premium', recipient, quantity: 3 }, 400, 'recipient_invalid', 'recipient');
  });

  test.each(['abc', `a${'b'.repeat(32)}`, '1abc', '_abc', 'abc_', '@@abcd', 'ab cd', 'ab-cd', 'https://t.me/durov', '', '@', 5, null, true, ['durov'], {}])(
    'malformed %j → 400 recipient_invalid',
    async (recipient) => {
      await rejected({ product: 'stars', recipient, quantity: 50 }, 400, 'recipient_invalid', 'recipient');
    },
  );
});

describe('quantity is required and follows 2.1', () => {
  test.each([
    { product: 'stars', quantity: 49 },
    { product: 'stars', quantity: 10001 },
    { product: 'stars', quantity: '50' },
    { product: 'stars', quantity: 50.5 },
    { product: 'premium', quantity: 1 },
    { product: 'premium', quantity: 50 },
    { product: 'premium', quantity: '3' },
  ])('$product $quantity → 400 invalid_quantity', async (input) => {
    await rejected({ ...input, recipient: 'durov' }, 400, 'invalid_quantity', 'quantity');
  });

  test('missing quantity → 400 invalid_request (quantity)', async () => {
    await rejected({ product: 'stars', recipient: 'durov' }, 400, 'invalid_request', 'quantity');
  });

  test('missing product → invalid_request (product); missing recipient → invalid_request (recipient)', async () => {
    await rejected({ recipient: 'durov', quantity: 50 }, 400, 'invalid_request', 'product');
    await rejected({ product: 'stars', quantity: 50 }, 400, 'invalid_request', 'recipient');
  });

  test('invalid product → invalid_product', async () => {
    await rejected({ product: 'gold', recipient: 'durov', quantity: 50 }, 400, 'invalid_product', 'product');
    await rejected({ product: null, recipient: 'durov', quantity: 50 }, 400, 'invalid_product', 'product');
  });

  test('field order: missing, then malformed product, recipient, quantity', async () => {
    await rejected({ product: 'gold', recipient: '!' }, 400, 'invalid_request', 'quantity');
    await rejected({ product: 'gold', recipient: '!', quantity: 1 }, 400, 'invalid_product', 'product');
    await rejected({ product: 'stars', recipient: '!', quantity: 1 }, 400, 'recipient_invalid', 'recipient');
  });
});

describe('body strictness', () => {
  test('external_id is not a validate field → invalid_request naming it', async () => {
    await rejected({ product: 'stars', recipient: 'durov', quantity: 50, external_id: 'x' }, 400, 'invalid_request', 'external_id');
  });

  test('unknown field → invalid_request naming it; malformed beats unknown', async () => {
    await rejected({ product: 'stars', recipient: 'durov', quantity: 50, foo: 1 }, 400, 'invalid_request', 'foo');
    await rejected({ product: 'stars', recipient: 'durov', quantity: 49, foo: 1 }, 400, 'invalid_quantity', 'quantity');
  });

  test.each(['[]', '"x"', '1', 'null', '', '{', 'true'])('body %j → 400 invalid_json', async (payload) => {
    await expectRejected(
      h,
      () => call(h, { method: 'POST', path: '/recipients/validate', key: testKey, raw: payload, headers: { 'content-type': 'application/json' } }),
      400,
      'invalid_json',
    );
  });

  test('text/plain → 415', async () => {
    await expectRejected(
      h,
      () => call(h, { method: 'POST', path: '/recipients/validate', key: testKey, raw: '{}', headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    );
  });
});

describe('live key', () => {
  test('a valid request with the live key → 503 live_unavailable', async () => {
    await rejected({ product: 'stars', recipient: 'durov', quantity: 50 }, 503, 'live_unavailable', undefined, liveKey);
    await rejected({ product: 'premium', recipient: '@test_invalid', quantity: 12 }, 503, 'live_unavailable', undefined, liveKey);
  });

  test('body checks come before live_unavailable', async () => {
    await rejected({ product: 'stars', recipient: '!', quantity: 50 }, 400, 'recipient_invalid', 'recipient', liveKey);
    await rejected({ product: 'stars', recipient: 'durov', quantity: 49 }, 400, 'invalid_quantity', 'quantity', liveKey);
    await rejected({ product: 'stars', recipient: 'durov' }, 400, 'invalid_request', 'quantity', liveKey);
  });
});
