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
  test.each(['@test_invalid', 'test_invalid', 'TEST_INVALID', '@Test_Invalid'])('%s (not found in test mode) → 400 recipient_invalid, reason not_found', async (recipient) => {
    const stars = await rejected({ product: 'stars', recipient, quantity: 50 }, 400, 'recipient_invalid', 'recipient');
    expect(stars.body.error.details).toEqual({ reason: 'not_found' });
    expect(stars.body.error.message).toBe(`No Telegram account @${recipient.replace(/^@/, '')} exists. Check the spelling of the username.`);
    const premium = await rejected({ product: 'premium', recipient, quantity: 3 }, 400, 'recipient_invalid', 'recipient');
    expect(premium.body.error.details).toEqual({ reason: 'not_found' });
  });

  test.each([
    ['abc', 'is too short: at least 4 characters after the "@"'],
    ['@abc', 'is too short: at least 4 characters after the "@"'],
    ['', 'is too short: at least 4 characters after the "@"'],
    ['@', 'is too short: at least 4 characters after the "@"'],
    [`a${'b'.repeat(32)}`, 'is too long: at most 32 characters after the "@"'],
    ['1abc', 'must start with a letter'],
    ['_abc', 'must start with a letter'],
    ['abc_', 'may not end with "_"'],
    ['@durov_', 'may not end with "_"'],
    ['@@abcd', 'may have only one "@", at the start'],
    ['ab cd', 'may only have letters (a–z), digits and "_"'],
    ['ab-cd', 'may only have letters (a–z), digits and "_"'],
    ['https://t.me/durov', 'may only have letters (a–z), digits and "_"'],
    ['\ud800abcd', 'may only have letters (a–z), digits and "_"'],
    [5, 'must be a string'],
    [null, 'must be a string'],
    [true, 'must be a string'],
    [['durov'], 'must be a string'],
    [{}, 'must be a string'],
  ])('malformed %j → 400 recipient_invalid, reason not_found, the message naming the rule it broke', async (recipient, rule) => {
    const res = await rejected({ product: 'stars', recipient, quantity: 50 }, 400, 'recipient_invalid', 'recipient');
    expect(res.body.error.details).toEqual({ reason: 'not_found' });
    expect(res.body.error.message).toBe(
      `recipient ${rule}: a username is 4–32 letters, digits or underscores, starting with a letter and not ending with "_", optionally with one leading "@".`,
    );
  });
});

/** docs/api.md "Test mode": each refusal reason has its magic recipient. */
describe('refusal reasons in test mode', () => {
  const REASONS = [
    ['@test_not_found', 'not_found', /^No Telegram account @test_not_found exists\. Check the spelling/],
    ['@Test_Not_A_User', 'not_a_user', /^@Test_Not_A_User is a bot, channel or group, not a person's account\./],
    ['test_already_premium', 'already_premium', /^@test_already_premium already has Telegram Premium and cannot be gifted it now\. Send Telegram Stars instead/],
    ['@TEST_NOT_ELIGIBLE', 'not_eligible', /^@TEST_NOT_ELIGIBLE cannot receive Telegram Premium right now/],
  ] as const;

  test.each(REASONS)('%s (premium) → 400 recipient_invalid, details.reason %s, a message to act on; nothing written', async (recipient, reason, message) => {
    const res = await rejected({ product: 'premium', recipient, quantity: 6 }, 400, 'recipient_invalid', 'recipient');
    expect(res.body.error).toEqual({ code: 'recipient_invalid', message: expect.stringMatching(message), param: 'recipient', details: { reason } });
  });

  test.each([
    ['@test_not_found', 'not_found'],
    ['@test_not_a_user', 'not_a_user'],
    ['@test_not_eligible', 'not_eligible'],
  ])('%s (stars) → details.reason %s', async (recipient, reason) => {
    const res = await rejected({ product: 'stars', recipient, quantity: 50 }, 400, 'recipient_invalid', 'recipient');
    expect(res.body.error.details).toEqual({ reason });
  });

  test('@test_already_premium can still receive stars', async () => {
    const body = await eligible({ product: 'stars', recipient: '@test_already_premium', quantity: 50 });
    expect(body.recipient).toEqual({ username: 'test_already_premium', display_name: 'test_already_premium', eligible: true });
  });

  test('a name that only starts like a magic one is eligible', async () => {
    await eligible({ product: 'premium', recipient: 'test_not_found_2', quantity: 3 });
  });
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
    const malformed = await rejected({ product: 'stars', recipient: '!', quantity: 50 }, 400, 'recipient_invalid', 'recipient', liveKey);
    expect(malformed.body.error.details).toEqual({ reason: 'not_found' });
    await rejected({ product: 'stars', recipient: 'durov', quantity: 49 }, 400, 'invalid_quantity', 'quantity', liveKey);
    await rejected({ product: 'stars', recipient: 'durov' }, 400, 'invalid_request', 'quantity', liveKey);
  });
});
