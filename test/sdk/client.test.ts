import {
  AuthenticationError,
  IdempotencyConflictError,
  InsufficientBalanceError,
  InvalidRequestError,
  LiveUnavailableError,
  NotFoundError,
  RECIPIENT_REFUSAL_REASONS,
  RecipientInvalidError,
  Starport,
  StarportError,
} from '@starport/sdk';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { reissueKey } from '../../src/accounts/accounts.js';
import { type Harness, startHarness, type TestAccount } from '../support/harness.js';
import { disableAccount, MONEY, ORDER_ID, REQUEST_ID, TIMESTAMP } from '../support/http.js';

/**
 * The SDK against a real running service in test mode, over HTTP (the harness's `url`): every
 * method, and the typed error of every contract code a client can reach today.
 */

let h: Harness;
let account: TestAccount;
let starport: Starport;

const client = (apiKey: string, options: Partial<ConstructorParameters<typeof Starport>[0]> = {}) =>
  new Starport({ apiKey, baseUrl: `${h.url}/api/v1`, initialRetryDelay: 10, maxRetryDelay: 50, ...options });

beforeAll(async () => {
  h = await startHarness();
  account = await h.account({ test: '100' });
  starport = client(account.testKey);
});
afterAll(async () => {
  await h.close();
});

/** The error a promise rejects with. */
async function rejection(promise: Promise<unknown>): Promise<StarportError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(StarportError);
    return error as StarportError;
  }
  throw new Error('expected a rejection');
}

function expectApiError(error: StarportError, Class: abstract new (...args: never[]) => StarportError, status: number, code: string, param?: string) {
  expect(error).toBeInstanceOf(Class);
  expect({ status: error.status, code: error.code }).toEqual({ status, code });
  expect(error.requestId).toMatch(REQUEST_ID);
  expect(error.message.length).toBeGreaterThan(0);
  if (param !== undefined) expect(error.param).toBe(param);
}

describe('methods', () => {
  test('the base URL may be given as an origin: /api/v1 is appended', () => {
    expect(new Starport({ apiKey: account.testKey, baseUrl: h.url }).baseUrl).toBe(`${h.url}/api/v1`);
    expect(new Starport({ apiKey: account.testKey, baseUrl: `${h.url}/api/v1/` }).baseUrl).toBe(`${h.url}/api/v1`);
    expect(new Starport({ apiKey: account.testKey, baseUrl: h.url }).mode).toBe('test');
    expect(new Starport({ apiKey: account.liveKey, baseUrl: h.url }).mode).toBe('live');
  });

  test('getBalance', async () => {
    const result = await starport.getBalance();
    expect(result).toEqual({ balance: { value: '100', reserved: '0', currency: 'TON' }, mode: 'test' });
    expect(result.lastResponse.status).toBe(200);
    expect(result.lastResponse.requestId).toMatch(REQUEST_ID);
    expect(Object.keys(result)).not.toContain('lastResponse');
  });

  test('getQuote', async () => {
    const quote = await starport.getQuote({ product: 'stars', quantity: 50 });
    expect(quote).toMatchObject({ product: 'stars', quantity: 50, amount: { value: '0.25', currency: 'TON' } });
    expect(quote.expires_at).toMatch(TIMESTAMP);
    const premium = await starport.getQuote({ product: 'premium', quantity: 3 });
    expect(premium.amount.value).toBe('3.996666667');
  });

  test('getPrices', async () => {
    const prices = await starport.getPrices();
    expect(prices).toEqual({
      mode: 'test',
      prices: [
        { product: 'stars', quantity_rule: 'an integer from 50 to 10000', min_quantity: 50, max_quantity: 10000, unit_price: { value: '0.005', currency: 'TON' } },
        { product: 'premium', quantity_rule: '3 (months)', min_quantity: 3, max_quantity: 3, unit_price: { value: '3.996666667', currency: 'TON' } },
        { product: 'premium', quantity_rule: '6 (months)', min_quantity: 6, max_quantity: 6, unit_price: { value: '5.33', currency: 'TON' } },
        { product: 'premium', quantity_rule: '12 (months)', min_quantity: 12, max_quantity: 12, unit_price: { value: '9.663333334', currency: 'TON' } },
      ],
      volume: { value: '0', currency: 'TON' },
      tier: { number: 1, of: 1 },
      next_tier: null,
    });
    expect(prices.lastResponse.status).toBe(200);
  });

  test('validateRecipient', async () => {
    const result = await starport.validateRecipient({ product: 'stars', recipient: '@Durov', quantity: 50 });
    expect(result).toEqual({ recipient: { username: 'Durov', display_name: 'Durov', eligible: true } });
  });

  test('createOrder generates an Idempotency-Key; getOrder reads the order back', async () => {
    const order = await starport.createOrder({ product: 'stars', recipient: '@durov', quantity: 50, external_id: 'invoice-1' });
    expect(order).toMatchObject({
      external_id: 'invoice-1',
      product: 'stars',
      recipient: '@durov',
      quantity: 50,
      amount: { value: '0.25', currency: 'TON' },
      status: 'fulfillment_pending',
      failure_reason: null,
    });
    expect(order.id).toMatch(ORDER_ID);
    expect(order.status_url).toBe(`${h.url}/api/v1/orders/${order.id}`);
    expect(order.lastResponse.status).toBe(201);
    expect(order.lastResponse.replayed).toBe(false);
    expect(order.lastResponse.idempotencyKey).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

    const read = await starport.getOrder(order.id);
    expect(read.id).toBe(order.id);
    expect(read.amount).toEqual(order.amount);
    expect(read.events[0]).toMatchObject({ type: 'order.created', status: 'fulfillment_pending', data: { amount: '0.25' } });
    expect(read.events[0]?.created_at).toMatch(TIMESTAMP);
    expect((await starport.getBalance()).balance.reserved).toMatch(MONEY);
  });

  test('getStatement: the current month of the key’s balance', async () => {
    const now = new Date();
    const month = `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
    const statement = await starport.getStatement(month);
    expect(statement).toMatchObject({ object: 'statement', month, mode: 'test', complete: false, opening_balance: { value: '0', reserved: '0', currency: 'TON' } });
    // The harness funds the account with an operator adjustment of 100 TON.
    expect(statement.adjustments).toMatchObject({ count: 1, credits: '100', net: '100' });
    expect(statement.lastResponse.status).toBe(200);
  });

  test('createOrder with the caller’s key: the same key replays the same order', async () => {
    const idempotencyKey = `order-${Date.now()}`;
    const params = { product: 'premium', recipient: 'durov', quantity: 6 } as const;
    const first = await starport.createOrder(params, { idempotencyKey });
    const again = await starport.createOrder(params, { idempotencyKey });
    expect(again.id).toBe(first.id);
    expect(first.lastResponse.idempotencyKey).toBe(idempotencyKey);
    expect(again.lastResponse.replayed).toBe(true);
    expect(again.lastResponse.headers.get('idempotent-replayed')).toBe('true');
  });
});

describe('typed errors, one per reachable contract code', () => {
  test('401 missing_api_key (no Authorization header reaches the service)', async () => {
    const stripAuth: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.delete('authorization');
      return fetch(input, { ...init, headers });
    };
    const error = await rejection(client(account.testKey, { fetch: stripAuth }).getBalance());
    expectApiError(error, AuthenticationError, 401, 'missing_api_key');
  });

  test('401 invalid_api_key', async () => {
    expectApiError(await rejection(client('sk_test_nope').getBalance()), AuthenticationError, 401, 'invalid_api_key');
  });

  test('401 api_key_revoked', async () => {
    const a = await h.account();
    await reissueKey(h.service.db, a.accountId, 'test');
    expectApiError(await rejection(client(a.testKey).getBalance()), AuthenticationError, 401, 'api_key_revoked');
  });

  test('401 account_disabled', async () => {
    const a = await h.account();
    await disableAccount(h, a.accountId);
    expectApiError(await rejection(client(a.testKey).getBalance()), AuthenticationError, 401, 'account_disabled');
  });

  test('400 invalid_request: a missing field, named in param', async () => {
    const error = await rejection(starport.createOrder({ product: 'stars', recipient: '@durov' } as never));
    expectApiError(error, InvalidRequestError, 400, 'invalid_request', 'quantity');
  });

  test('400 invalid_product, invalid_quantity, invalid_external_id', async () => {
    expectApiError(await rejection(starport.getQuote({ product: 'gold' as never, quantity: 50 })), InvalidRequestError, 400, 'invalid_product', 'product');
    expectApiError(await rejection(starport.createOrder({ product: 'stars', recipient: '@durov', quantity: 49 })), InvalidRequestError, 400, 'invalid_quantity', 'quantity');
    expectApiError(
      await rejection(starport.createOrder({ product: 'stars', recipient: '@durov', quantity: 50, external_id: '' })),
      InvalidRequestError,
      400,
      'invalid_external_id',
      'external_id',
    );
  });

  test('400 recipient_invalid → RecipientInvalidError (validate: @test_invalid; order: malformed)', async () => {
    const error = await rejection(starport.validateRecipient({ product: 'stars', recipient: '@test_invalid', quantity: 50 }));
    expectApiError(error, RecipientInvalidError, 400, 'recipient_invalid', 'recipient');
    expect(error).toBeInstanceOf(InvalidRequestError);
    expectApiError(await rejection(starport.createOrder({ product: 'stars', recipient: 'not a username', quantity: 50 })), RecipientInvalidError, 400, 'recipient_invalid');
  });

  test('RecipientInvalidError.reason is details.reason (docs/api.md "Recipient refusals")', async () => {
    const malformed = await rejection(starport.createOrder({ product: 'stars', recipient: 'not a username', quantity: 50 }));
    expect((malformed as RecipientInvalidError).reason).toBe('not_found');
    for (const reason of RECIPIENT_REFUSAL_REASONS) {
      const error = await rejection(starport.validateRecipient({ product: 'premium', recipient: `@test_${reason}`, quantity: 3 }));
      expectApiError(error, RecipientInvalidError, 400, 'recipient_invalid', 'recipient');
      expect((error as RecipientInvalidError).reason).toBe(reason);
      expect(error.details).toEqual({ reason });
    }
  });

  test('400 idempotency_key_invalid and idempotency_key_required', async () => {
    const tooLong = 'k'.repeat(256);
    expectApiError(
      await rejection(starport.createOrder({ product: 'stars', recipient: '@durov', quantity: 50 }, { idempotencyKey: tooLong })),
      InvalidRequestError,
      400,
      'idempotency_key_invalid',
    );
    // Only the low-level request can send a POST /orders without a key (and it is not retried).
    const error = await rejection(starport.request({ method: 'POST', path: '/orders', body: { product: 'stars', recipient: '@durov', quantity: 50 } }));
    expectApiError(error, InvalidRequestError, 400, 'idempotency_key_required');
  });

  test('400 invalid_json, 413 payload_too_large, 415 unsupported_media_type → InvalidRequestError', async () => {
    expectApiError(await rejection(starport.request({ method: 'POST', path: '/recipients/validate', body: [1], safe: true })), InvalidRequestError, 400, 'invalid_json');
    expectApiError(
      await rejection(starport.createOrder({ product: 'stars', recipient: '@durov', quantity: 50, external_id: 'x'.repeat(17_000) })),
      InvalidRequestError,
      413,
      'payload_too_large',
    );
    const asText: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('content-type', 'text/plain');
      return fetch(input, { ...init, headers });
    };
    const error = await rejection(client(account.testKey, { fetch: asText }).validateRecipient({ product: 'stars', recipient: '@durov', quantity: 50 }));
    expectApiError(error, InvalidRequestError, 415, 'unsupported_media_type');
  });

  test('402 insufficient_balance → InsufficientBalanceError with available and required', async () => {
    const poor = await h.account({ test: '0.1' });
    const error = await rejection(client(poor.testKey).createOrder({ product: 'stars', recipient: '@durov', quantity: 50 }));
    expectApiError(error, InsufficientBalanceError, 402, 'insufficient_balance', 'quantity');
    expect((error as InsufficientBalanceError).available).toBe('0.1');
    expect((error as InsufficientBalanceError).required).toBe('0.25');
    expect(error.details).toEqual({ available: '0.1', required: '0.25' });
  });

  test('404 order_not_found and not_found → NotFoundError', async () => {
    expectApiError(await rejection(starport.getOrder('ord_doesnotexist')), NotFoundError, 404, 'order_not_found', 'id');
    expectApiError(await rejection(starport.request({ method: 'GET', path: '/no-such-route' })), NotFoundError, 404, 'not_found');
  });

  test('404 statement_not_found → NotFoundError with details.reason; a malformed month → InvalidRequestError', async () => {
    const error = await rejection(starport.getStatement('2099-01'));
    expectApiError(error, NotFoundError, 404, 'statement_not_found', 'month');
    expect(error.details).toEqual({ reason: 'not_begun' });
    expectApiError(await rejection(starport.getStatement('2026-13')), InvalidRequestError, 400, 'invalid_request', 'month');
  });

  test('409 idempotency_conflict → IdempotencyConflictError (not retried)', async () => {
    const idempotencyKey = `conflict-${Date.now()}`;
    await starport.createOrder({ product: 'stars', recipient: '@durov', quantity: 50 }, { idempotencyKey });
    const error = await rejection(starport.createOrder({ product: 'stars', recipient: '@durov', quantity: 51 }, { idempotencyKey }));
    expectApiError(error, IdempotencyConflictError, 409, 'idempotency_conflict');
  });

  test('503 live_unavailable with a live key → LiveUnavailableError, after the SDK’s retries', async () => {
    const live = client(account.liveKey);
    const error = await rejection(live.createOrder({ product: 'stars', recipient: '@durov', quantity: 50 }));
    expectApiError(error, LiveUnavailableError, 503, 'live_unavailable');
    expectApiError(
      await rejection(live.validateRecipient({ product: 'stars', recipient: '@durov', quantity: 50 }, { maxRetries: 0 })),
      LiveUnavailableError,
      503,
      'live_unavailable',
    );
    // Nothing was created by any of the attempts.
    expect((await live.getBalance()).balance).toEqual({ value: '0', reserved: '0', currency: 'TON' });
  });
});
