import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness, type TestAccount } from '../support/harness.js';
import { newKey, STARS_50, waitForStatus } from '../support/http.js';
import { DocumentChecker, type ObservedResponse, type OpenApiDocument } from '../support/openapi.js';

/**
 * Real responses validate against the served document: each endpoint's success and a spread of
 * its errors, sent over HTTP so the headers are the ones on the wire. (Every harness also
 * checks every response the HTTP suites receive through inject; see support/openapi.ts.)
 * The last block shows the checker is not vacuous: it rejects responses that drift.
 */

let h: Harness;
let checker: DocumentChecker;
let account: TestAccount;

beforeAll(async () => {
  h = await startHarness();
  checker = DocumentChecker.for((await (await fetch(`${h.url}/api/v1/openapi.json`)).json()) as OpenApiDocument);
  account = await h.account({ test: '100' });
});
afterAll(async () => {
  await h.close();
});

interface Send {
  method?: 'GET' | 'POST';
  path: string;
  key?: string | null;
  json?: unknown;
  raw?: string;
  headers?: Record<string, string>;
}

/** Sends over HTTP and returns what came back, checked against the document. */
async function send({ method = 'GET', path, key = account.testKey, json, raw, headers = {} }: Send): Promise<ObservedResponse & { json: any }> {
  const url = `/api/v1${path}`;
  const response = await fetch(`${h.url}${url}`, {
    method,
    headers: {
      ...(key !== null && { authorization: `Bearer ${key}` }),
      ...(json !== undefined && { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(json !== undefined && { body: JSON.stringify(json) }),
    ...(raw !== undefined && { body: raw }),
  });
  const observed = { method, url, status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
  return { ...observed, json: JSON.parse(observed.body) };
}

async function expectConforms(request: Send, status: number, code?: string) {
  const response = await send(request);
  expect(response.status, response.body).toBe(status);
  if (code) expect(response.json.error.code).toBe(code);
  expect(checker.check(response)).toEqual([]);
  return response;
}

describe('successes', () => {
  test('POST /orders 201, a replay with Idempotent-Replayed, GET /orders/{id} when delivered and failed', async () => {
    const idempotencyKey = newKey();
    const created = await expectConforms({ method: 'POST', path: '/orders', json: { ...STARS_50, external_id: 'inv-1' }, headers: { 'idempotency-key': idempotencyKey } }, 201);
    expect(created.headers['idempotent-replayed']).toBeUndefined();
    const replay = await expectConforms({ method: 'POST', path: '/orders', json: { ...STARS_50, external_id: 'inv-1' }, headers: { 'idempotency-key': idempotencyKey } }, 201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    await expectConforms({ path: `/orders/${created.json.id}` }, 200);

    await waitForStatus(h, account.testKey, created.json.id, ['delivered']);
    const delivered = await expectConforms({ path: `/orders/${created.json.id}` }, 200);
    expect(delivered.json.events.map((e: { type: string }) => e.type)).toEqual(['order.created', 'order.processing', 'order.delivered']);

    for (const recipient of ['@test_failed', '@test_invalid', '@test_already_premium']) {
      const order = await expectConforms(
        { method: 'POST', path: '/orders', json: { product: 'premium', recipient, quantity: 3, external_id: null }, headers: { 'idempotency-key': newKey() } },
        201,
      );
      await waitForStatus(h, account.testKey, order.json.id, ['failed']);
      const failed = await expectConforms({ path: `/orders/${order.json.id}` }, 200);
      expect(failed.json.events.at(-1).type).toBe('order.failed');
    }
  });

  test('POST /recipients/validate, GET /quote, GET /balance', async () => {
    await expectConforms({ method: 'POST', path: '/recipients/validate', json: { product: 'premium', recipient: 'durov', quantity: 12 } }, 200);
    await expectConforms({ path: '/quote?product=stars&quantity=10000' }, 200);
    await expectConforms({ path: '/quote?product=premium&quantity=6&unknown=1' }, 200);
    await expectConforms({ path: '/balance' }, 200);
    await expectConforms({ path: '/balance', key: account.liveKey }, 200);
  });
});

describe('errors', () => {
  test('401s', async () => {
    await expectConforms({ path: '/balance', key: null }, 401, 'missing_api_key');
    await expectConforms({ path: '/orders/ord_x', key: 'sk_live_nope' }, 401, 'invalid_api_key');
    await expectConforms({ method: 'POST', path: '/orders', key: 'Basic abc', json: STARS_50 }, 401, 'invalid_api_key');
  });

  test('400s', async () => {
    const order = (json: unknown, headers: Record<string, string> = { 'idempotency-key': newKey() }) => ({ method: 'POST' as const, path: '/orders', json, headers });
    await expectConforms(order({ product: 'stars', recipient: '@durov' }), 400, 'invalid_request');
    await expectConforms(order({ ...STARS_50, colour: 'red' }), 400, 'invalid_request');
    await expectConforms(order({ ...STARS_50, product: 'gold' }), 400, 'invalid_product');
    await expectConforms(order({ ...STARS_50, quantity: '50' }), 400, 'invalid_quantity');
    await expectConforms(order({ ...STARS_50, recipient: '@@durov' }), 400, 'recipient_invalid');
    await expectConforms(order({ ...STARS_50, external_id: 'x'.repeat(129) }), 400, 'invalid_external_id');
    await expectConforms(order(STARS_50, {}), 400, 'idempotency_key_required');
    await expectConforms(order(STARS_50, { 'idempotency-key': 'k'.repeat(256) }), 400, 'idempotency_key_invalid');
    await expectConforms(
      { method: 'POST', path: '/orders', raw: '{"product":', headers: { 'content-type': 'application/json', 'idempotency-key': newKey() } },
      400,
      'invalid_json',
    );
    await expectConforms({ method: 'POST', path: '/recipients/validate', json: { product: 'stars', recipient: '@test_invalid', quantity: 50 } }, 400, 'recipient_invalid');
    // Each refusal reason is in the Error schema's details.reason enum.
    for (const reason of ['not_found', 'not_a_user', 'already_premium', 'not_eligible']) {
      await expectConforms({ method: 'POST', path: '/recipients/validate', json: { product: 'premium', recipient: `@test_${reason}`, quantity: 3 } }, 400, 'recipient_invalid');
    }
    await expectConforms({ path: '/quote?product=stars' }, 400, 'invalid_request');
    await expectConforms({ path: '/quote?product=stars&quantity=50.0' }, 400, 'invalid_quantity');
    await expectConforms({ path: '/quote?product=stars&quantity=1&quantity=2' }, 400, 'invalid_request');
  });

  test('402, 404, 409, 413, 415, 503', async () => {
    const poor = await h.account();
    await expectConforms({ method: 'POST', path: '/orders', key: poor.testKey, json: STARS_50, headers: { 'idempotency-key': newKey() } }, 402, 'insufficient_balance');
    await expectConforms({ path: '/orders/ord_unknown' }, 404, 'order_not_found');
    const key = newKey();
    await expectConforms({ method: 'POST', path: '/orders', json: STARS_50, headers: { 'idempotency-key': key } }, 201);
    await expectConforms({ method: 'POST', path: '/orders', json: { ...STARS_50, quantity: 51 }, headers: { 'idempotency-key': key } }, 409, 'idempotency_conflict');
    await expectConforms(
      { method: 'POST', path: '/orders', json: { ...STARS_50, external_id: 'x'.repeat(17_000) }, headers: { 'idempotency-key': newKey() } },
      413,
      'payload_too_large',
    );
    await expectConforms(
      { method: 'POST', path: '/recipients/validate', raw: 'product=stars', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      415,
      'unsupported_media_type',
    );
    await expectConforms({ method: 'POST', path: '/orders', key: account.liveKey, json: STARS_50, headers: { 'idempotency-key': newKey() } }, 503, 'live_unavailable');
    await expectConforms(
      { method: 'POST', path: '/recipients/validate', key: account.liveKey, json: { product: 'stars', recipient: '@durov', quantity: 50 } },
      503,
      'live_unavailable',
    );
  });

  test('429 with Retry-After (a rate-limited service)', async () => {
    const limited = await startHarness({ RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '1' });
    try {
      const a = await limited.account();
      const limitedChecker = DocumentChecker.for((await limited.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json());
      const statuses: number[] = [];
      for (let i = 0; i < 2; i++) {
        const response = await fetch(`${limited.url}/api/v1/balance`, { headers: { authorization: `Bearer ${a.testKey}` } });
        const observed = { method: 'GET', url: '/api/v1/balance', status: response.status, headers: Object.fromEntries(response.headers), body: await response.text() };
        expect(limitedChecker.check(observed)).toEqual([]);
        statuses.push(response.status);
      }
      expect(statuses).toEqual([200, 429]);
    } finally {
      await limited.close();
    }
  });
});

describe('the checker catches drift', () => {
  const balance = (body: unknown, status = 200, headers: Record<string, string> = { 'request-id': 'req_abc', 'content-type': 'application/json' }): ObservedResponse => ({
    method: 'GET',
    url: '/api/v1/balance',
    status,
    headers,
    body: JSON.stringify(body),
  });
  const good = { ok: true, balance: { value: '1', reserved: '0', currency: 'TON' }, mode: 'test' };

  test('a well-formed response passes', () => {
    expect(checker.check(balance(good))).toEqual([]);
  });

  test.each([
    ['an undocumented field', { ...good, livemode: false }],
    ['a missing field', { ok: true, balance: good.balance }],
    ['money as a number', { ...good, balance: { ...good.balance, value: 1 } }],
    ['money with an exponent', { ...good, balance: { ...good.balance, value: '1e3' } }],
    ['an unknown mode', { ...good, mode: 'sandbox' }],
  ])('%s', (_name, body) => {
    expect(checker.check(balance(body))).not.toEqual([]);
  });

  test('an undocumented status, an error code of another status, a missing Request-Id, a misplaced header', () => {
    expect(checker.check(balance({ ok: false, error: { code: 'payload_too_large', message: 'x' }, request_id: 'req_a' }, 413))[0]).toMatch(/status 413 is not documented/);
    expect(checker.check(balance({ ok: false, error: { code: 'order_not_found', message: 'x' }, request_id: 'req_a' }, 400))).not.toEqual([]);
    expect(checker.check(balance(good, 200, { 'content-type': 'application/json' }))[0]).toMatch(/Request-Id/i);
    const unauthorized = { ok: false, error: { code: 'missing_api_key', message: 'x' }, request_id: 'req_a' };
    expect(checker.check(balance(unauthorized, 401, { 'request-id': 'req_a', 'content-type': 'application/json', ratelimit: '"default";r=1;t=1' }))[0]).toMatch(
      /ratelimit is sent but not documented/,
    );
  });

  test('unknown routes and methods are not the document’s business', () => {
    expect(checker.check({ ...balance({ ok: false }), method: 'DELETE' })).toEqual([]);
    expect(checker.check({ ...balance({ ok: false }), url: '/api/v1/nope' })).toEqual([]);
    expect(checker.operationFor('GET', '/api/v1/orders/ord_1?x=1')?.template).toBe('/orders/{id}');
  });
});
