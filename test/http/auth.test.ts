import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { reissueKey } from '../../src/accounts/accounts.js';
import { generateApiKey } from '../../src/domain/api-key.js';
import { BASE62 } from '../../src/domain/random.js';
import { type Harness, startHarness } from '../support/harness.js';
import { call, type CallOptions, disableAccount, expectOk, expectRejected, getBalance, newKey, postOrder, STARS_50 } from '../support/http.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** One request per endpoint, each valid apart from its credentials. */
const ENDPOINTS: Array<{ name: string; request: Omit<CallOptions, 'key'> }> = [
  { name: 'GET /balance', request: { path: '/balance' } },
  { name: 'GET /quote', request: { path: '/quote?product=stars&quantity=50' } },
  { name: 'GET /orders/{id}', request: { path: '/orders/ord_AAAAAAAAAAAAAAAAAAAAAA' } },
  { name: 'POST /orders', request: { method: 'POST', path: '/orders', json: STARS_50, headers: { 'idempotency-key': 'auth-probe' } } },
  { name: 'POST /recipients/validate', request: { method: 'POST', path: '/recipients/validate', json: STARS_50 } },
];

const withAuthorization = (authorization: string | undefined, request: Omit<CallOptions, 'key'> = ENDPOINTS[0]!.request): CallOptions => ({
  ...request,
  headers: { ...request.headers, ...(authorization !== undefined && { authorization }) },
});

/** Sends a request with this Authorization header and expects a 401 with this code, nothing written. */
async function expect401(authorization: string | undefined, code: string, request?: Omit<CallOptions, 'key'>) {
  return expectRejected(h, () => call(h, withAuthorization(authorization, request)), 401, code, null);
}

/** The key with the character at `index` replaced by another character of `alphabet`. */
function mutate(key: string, index: number, alphabet = BASE62): string {
  const current = key[index] as string;
  const replacement = [...alphabet].find((c) => c !== current) as string;
  return key.slice(0, index) + replacement + key.slice(index + 1);
}

describe('missing_api_key', () => {
  test.each(ENDPOINTS)('$name without Authorization header → 401 missing_api_key', async ({ request }) => {
    await expect401(undefined, 'missing_api_key', request);
  });

  test('another scheme (Basic) → missing_api_key', async () => {
    const a = await h.account();
    await expect401(`Basic ${Buffer.from(`${a.testKey}:`).toString('base64')}`, 'missing_api_key');
    await expect401(`Token ${a.testKey}`, 'missing_api_key');
  });

  test('"Bearer" with nothing after it → missing_api_key', async () => {
    await expect401('Bearer', 'missing_api_key');
    await expect401('Bearer ', 'missing_api_key');
  });

  test('the bare key without a scheme → missing_api_key', async () => {
    const a = await h.account();
    await expect401(a.testKey, 'missing_api_key');
  });
});

describe('scheme and spacing', () => {
  test('the scheme is case-insensitive: "bearer" and "BEARER" work', async () => {
    const a = await h.account({ test: '1' });
    for (const scheme of ['bearer', 'BEARER', 'Bearer', 'bEaReR']) {
      const res = await call(h, withAuthorization(`${scheme} ${a.testKey}`));
      expectOk(res);
      expect(res.body.mode).toBe('test');
      expect(res.body.balance.value).toBe('1');
    }
  });

  test('two spaces after the scheme → invalid_api_key', async () => {
    const a = await h.account();
    await expect401(`Bearer  ${a.testKey}`, 'invalid_api_key');
  });
});

describe('invalid_api_key', () => {
  test('bad prefix', async () => {
    const a = await h.account();
    const rest = a.testKey.slice('sk_test_'.length);
    for (const prefix of ['sk_prod_', 'pk_test_', 'sk_TEST_', 'sk-test-', 'rk_live_']) {
      await expect401(`Bearer ${prefix}${rest}`, 'invalid_api_key');
    }
  });

  test('bad length (one character more or less, or a fragment)', async () => {
    const a = await h.account();
    await expect401(`Bearer ${a.testKey}A`, 'invalid_api_key');
    await expect401(`Bearer ${a.testKey.slice(0, -1)}`, 'invalid_api_key');
    await expect401(`Bearer ${a.testKey.slice(0, 20)}`, 'invalid_api_key');
    await expect401('Bearer sk_test_', 'invalid_api_key');
    await expect401('Bearer x', 'invalid_api_key');
  });

  test('bad alphabet (a non-base62 character, same length)', async () => {
    const a = await h.account();
    for (const bad of ['-', '_', '+', '/', '=', 'é']) {
      const key = `${a.testKey.slice(0, 12)}${bad}${a.testKey.slice(13)}`;
      expect(key).toHaveLength(46);
      await expect401(`Bearer ${key}`, 'invalid_api_key');
    }
  });

  test('bad checksum: a valid layout with one character changed', async () => {
    const a = await h.account();
    const inRandomPart = mutate(a.testKey, 'sk_test_'.length + 5);
    const inChecksum = mutate(a.testKey, a.testKey.length - 1);
    for (const key of [inRandomPart, inChecksum, mutate(a.liveKey, 20)]) {
      expect(key).toMatch(/^sk_(live|test)_[0-9A-Za-z]{38}$/);
      await expect401(`Bearer ${key}`, 'invalid_api_key');
    }
  });

  test('a well-formed key with a valid checksum that was never issued', async () => {
    await expect401(`Bearer ${generateApiKey('test')}`, 'invalid_api_key');
    await expect401(`Bearer ${generateApiKey('live')}`, 'invalid_api_key');
  });

  test.each(ENDPOINTS)('$name with an unknown key → 401 invalid_api_key', async ({ request }) => {
    await expect401(`Bearer ${generateApiKey('test')}`, 'invalid_api_key', request);
  });
});

describe('api_key_revoked', () => {
  test('a reissued test key is revoked for the very next request; the new key works', async () => {
    const a = await h.account({ test: '2', live: '3' });
    expectOk(await getBalance(h, a.testKey));

    const newTestKey = await reissueKey(h.service.db, a.accountId, 'test');
    expect(newTestKey).not.toBe(a.testKey);

    for (const { request } of ENDPOINTS) await expect401(`Bearer ${a.testKey}`, 'api_key_revoked', request);
    const fresh = await getBalance(h, newTestKey);
    expectOk(fresh);
    expect(fresh.body).toEqual({ ok: true, balance: { value: '2', reserved: '0', currency: 'TON' }, mode: 'test' });
    // The other mode's key is untouched.
    const live = await getBalance(h, a.liveKey);
    expectOk(live);
    expect(live.body.mode).toBe('live');
  });

  test('a reissued live key is revoked; the test key keeps working', async () => {
    const a = await h.account();
    const newLiveKey = await reissueKey(h.service.db, a.accountId, 'live');
    await expect401(`Bearer ${a.liveKey}`, 'api_key_revoked');
    expectOk(await getBalance(h, newLiveKey));
    expectOk(await getBalance(h, a.testKey));
  });

  test('reissuing twice: both earlier keys are revoked, only the newest works', async () => {
    const a = await h.account();
    const second = await reissueKey(h.service.db, a.accountId, 'test');
    const third = await reissueKey(h.service.db, a.accountId, 'test');
    await expect401(`Bearer ${a.testKey}`, 'api_key_revoked');
    await expect401(`Bearer ${second}`, 'api_key_revoked');
    expectOk(await getBalance(h, third));
  });

  test('a revoked key cannot create an order, even with a valid body', async () => {
    const a = await h.account({ test: '10' });
    await reissueKey(h.service.db, a.accountId, 'test');
    await expectRejected(h, () => postOrder(h, a.testKey, STARS_50, newKey()), 401, 'api_key_revoked', null);
  });
});

describe('account_disabled', () => {
  test('both keys of a disabled account → 401 account_disabled on every endpoint', async () => {
    const a = await h.account({ test: '10', live: '10' });
    expectOk(await getBalance(h, a.testKey));
    await disableAccount(h, a.accountId);
    for (const { request } of ENDPOINTS) {
      await expect401(`Bearer ${a.testKey}`, 'account_disabled', request);
      await expect401(`Bearer ${a.liveKey}`, 'account_disabled', request);
    }
  });

  test('other accounts are not affected', async () => {
    const disabled = await h.account();
    const active = await h.account();
    await disableAccount(h, disabled.accountId);
    expectOk(await getBalance(h, active.testKey));
  });
});

describe('unknown routes', () => {
  test('404 not_found comes before authentication', async () => {
    for (const path of ['!/api/v1/nope', '!/nope', '!/api/v2/balance', '!/api/v1', '/balances', '/order', '/test_helpers/fund']) {
      const res = await expectRejected(h, () => call(h, { path }), 404, 'not_found');
      expect(res.body.error.message).toMatch(/GET/);
    }
  });

  test('404 not_found with a bad key and with a good key; wrong methods are unknown routes', async () => {
    const a = await h.account();
    const requests: CallOptions[] = [
      { path: '/nope', key: 'garbage' },
      { path: '/nope', key: a.testKey },
      { method: 'DELETE', path: '/orders/ord_x', key: a.testKey },
      { method: 'PUT', path: '/orders' },
      { method: 'POST', path: '/balance' },
      { method: 'POST', path: '/quote' },
      { method: 'GET', path: '/recipients/validate' },
    ];
    for (const request of requests) await expectRejected(h, () => call(h, request), 404, 'not_found');
  });
});
