import { readFileSync } from 'node:fs';
import {
  ConflictError,
  ConnectionError,
  ERROR_CODES,
  InternalServerError,
  InvalidRequestError,
  PermissionError,
  PriceUnavailableError,
  QuoteExpiredError,
  RateLimitError,
  ServerError,
  Starport,
  StarportError,
  TimeoutError,
  VERSION,
} from '@starport/sdk';
import { describe, expect, test } from 'vitest';
import { ERROR_STATUS } from '../../src/domain/api-error.js';

/** The SDK's retry policy and error mapping, against a scripted fetch. */

interface Call {
  method: string;
  url: string;
  headers: Headers;
  body: string | undefined;
}

function scripted(...answers: (Response | Error | 'hang')[]) {
  const calls: Call[] = [];
  const fetchImpl: typeof fetch = async (input, init) => {
    calls.push({ method: init?.method ?? 'GET', url: String(input), headers: new Headers(init?.headers), body: init?.body as string | undefined });
    const answer = answers[Math.min(calls.length - 1, answers.length - 1)] as Response | Error | 'hang';
    if (answer === 'hang') {
      return new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))));
    }
    if (answer instanceof Error) throw answer;
    return answer.clone();
  };
  return { calls, fetchImpl };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', 'request-id': 'req_abc', ...headers } });
const apiError = (status: number, code: string, headers: Record<string, string> = {}) =>
  json(status, { ok: false, error: { code, message: `${code} happened` }, request_id: 'req_abc' }, headers);
const ORDER = { ok: true, id: 'ord_1', status: 'fulfillment_pending' };

const client = (fetchImpl: typeof fetch, options: Partial<ConstructorParameters<typeof Starport>[0]> = {}) =>
  new Starport({ apiKey: 'sk_test_x', baseUrl: 'http://starport.invalid/api/v1', fetch: fetchImpl, initialRetryDelay: 1, maxRetryDelay: 5, ...options });

describe('retries', () => {
  test('createOrder: a 503 and a network error are retried with the same generated Idempotency-Key', async () => {
    const { calls, fetchImpl } = scripted(apiError(503, 'live_unavailable'), new TypeError('fetch failed'), json(201, ORDER));
    const order = await client(fetchImpl).createOrder({ product: 'stars', recipient: '@durov', quantity: 50 });
    expect(order).toEqual({ id: 'ord_1', status: 'fulfillment_pending' });
    expect(order.lastResponse.attempts).toBe(3);
    expect(calls).toHaveLength(3);
    const keys = calls.map((c) => c.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set(keys).size).toBe(1);
    expect(calls[0]?.headers.get('authorization')).toBe('Bearer sk_test_x');
    expect(calls[0]?.headers.get('content-type')).toBe('application/json');
    expect(calls[0]?.headers.get('user-agent')).toBe(`starport-sdk-js/${VERSION}`);
    expect(JSON.parse(calls[0]?.body ?? '')).toEqual({ product: 'stars', recipient: '@durov', quantity: 50 });
  });

  test('each createOrder call gets its own key', async () => {
    const { calls, fetchImpl } = scripted(json(201, ORDER));
    const starport = client(fetchImpl);
    await starport.createOrder({ product: 'stars', recipient: '@durov', quantity: 50 });
    await starport.createOrder({ product: 'stars', recipient: '@durov', quantity: 50 });
    expect(calls[0]?.headers.get('idempotency-key')).not.toBe(calls[1]?.headers.get('idempotency-key'));
  });

  test('a POST without an Idempotency-Key is never retried', async () => {
    const { calls, fetchImpl } = scripted(apiError(503, 'internal_error'), json(201, ORDER));
    await expect(client(fetchImpl).request({ method: 'POST', path: '/orders', body: {} })).rejects.toBeInstanceOf(ServerError);
    expect(calls).toHaveLength(1);
    const network = scripted(new TypeError('fetch failed'), json(201, ORDER));
    await expect(client(network.fetchImpl).request({ method: 'POST', path: '/orders', body: {} })).rejects.toBeInstanceOf(ConnectionError);
    expect(network.calls).toHaveLength(1);
  });

  test('validateRecipient, a call without side effects, is retried', async () => {
    const { calls, fetchImpl } = scripted(apiError(500, 'internal_error'), json(200, { ok: true, recipient: { username: 'durov', display_name: 'durov', eligible: true } }));
    await client(fetchImpl).validateRecipient({ product: 'stars', recipient: '@durov', quantity: 50 });
    expect(calls).toHaveLength(2);
    expect(calls[0]?.headers.has('idempotency-key')).toBe(false);
  });

  test('gives up after maxRetries with the last error', async () => {
    const { calls, fetchImpl } = scripted(apiError(500, 'internal_error'));
    await expect(client(fetchImpl, { maxRetries: 3 }).getBalance()).rejects.toBeInstanceOf(InternalServerError);
    expect(calls).toHaveLength(4);
  });

  test('409 idempotency_key_in_use is retried; 4xx are not', async () => {
    const inUse = scripted(apiError(409, 'idempotency_key_in_use'), json(201, ORDER));
    await client(inUse.fetchImpl).createOrder({ product: 'stars', recipient: '@durov', quantity: 50 });
    expect(inUse.calls).toHaveLength(2);
    for (const [status, code] of [
      [400, 'invalid_quantity'],
      [401, 'invalid_api_key'],
      [402, 'insufficient_balance'],
      [404, 'order_not_found'],
      [409, 'idempotency_conflict'],
    ] as const) {
      const { calls, fetchImpl } = scripted(apiError(status, code), json(200, ORDER));
      await expect(client(fetchImpl).getOrder('ord_1')).rejects.toMatchObject({ status, code });
      expect(calls).toHaveLength(1);
    }
  });

  test('429 waits Retry-After, not its own shorter backoff', async () => {
    const { calls, fetchImpl } = scripted(apiError(429, 'rate_limited', { 'retry-after': '1' }), json(200, { ok: true, balance: {}, mode: 'test' }));
    const started = Date.now();
    const balance = await client(fetchImpl).getBalance();
    expect(Date.now() - started).toBeGreaterThanOrEqual(990);
    expect(balance.lastResponse.attempts).toBe(2);
    expect(calls).toHaveLength(2);
  });

  test('a Retry-After longer than maxRetryAfter is not waited for', async () => {
    const { calls, fetchImpl } = scripted(apiError(429, 'rate_limited', { 'retry-after': '120' }));
    const error = await client(fetchImpl)
      .getBalance()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).retryAfter).toBe(120);
    expect(calls).toHaveLength(1);
  });

  test('backoff grows exponentially with jitter', async () => {
    const { calls, fetchImpl } = scripted(apiError(503, 'price_unavailable'));
    const starport = client(fetchImpl, { initialRetryDelay: 40, maxRetryDelay: 1000, maxRetries: 3 });
    const started = Date.now();
    await expect(starport.getQuote({ product: 'stars', quantity: 50 })).rejects.toBeInstanceOf(PriceUnavailableError);
    // Delays of 20–40, 40–80 and 80–160 ms: at least 140 ms in all.
    expect(Date.now() - started).toBeGreaterThanOrEqual(135);
    expect(calls).toHaveLength(4);
    expect(calls[0]?.url).toBe('http://starport.invalid/api/v1/quote?product=stars&quantity=50');
  });

  test('an attempt that takes too long is a TimeoutError, and is retried', async () => {
    const { calls, fetchImpl } = scripted('hang', json(200, { ok: true, balance: {}, mode: 'test' }));
    const balance = await client(fetchImpl, { timeout: 50 }).getBalance();
    expect(calls).toHaveLength(2);
    expect(balance.lastResponse.attempts).toBe(2);
    const always = scripted('hang');
    await expect(client(always.fetchImpl, { timeout: 20, maxRetries: 1 }).getBalance()).rejects.toBeInstanceOf(TimeoutError);
  });

  test('an aborted call stops at once, without retries', async () => {
    const { calls, fetchImpl } = scripted('hang');
    const controller = new AbortController();
    const pending = client(fetchImpl).getBalance({ signal: controller.signal });
    setTimeout(() => controller.abort(new Error('stop')), 20);
    await expect(pending).rejects.toThrow('stop');
    expect(calls).toHaveLength(1);
  });
});

describe('error mapping', () => {
  test.each([
    [403, 'live_key_required', PermissionError],
    [403, 'test_key_required', PermissionError],
    [409, 'quote_expired', QuoteExpiredError],
    [400, 'quote_mismatch', InvalidRequestError],
    [409, 'some_future_conflict', ConflictError],
    [400, 'some_future_code', InvalidRequestError],
  ] as const)('%i %s', async (status, code, Class) => {
    const { fetchImpl } = scripted(apiError(status, code));
    const error = await client(fetchImpl)
      .getBalance()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Class);
    expect(error).toMatchObject({ status, code, requestId: 'req_abc', message: `${code} happened` });
  });

  test('a non-JSON 502 from a proxy is a ServerError', async () => {
    const { fetchImpl } = scripted(new Response('<html>Bad gateway</html>', { status: 502 }));
    const error = await client(fetchImpl, { maxRetries: 0 })
      .getBalance()
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServerError);
    expect(error).toMatchObject({ status: 502, code: 'invalid_response' });
  });

  test('the SDK knows exactly the contract’s error codes', () => {
    expect([...ERROR_CODES].sort()).toEqual(Object.keys(ERROR_STATUS).sort());
    expect(new StarportError({ code: 'x', message: 'y' }).name).toBe('StarportError');
  });

  test('VERSION matches the package', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../packages/sdk/package.json', import.meta.url), 'utf8'));
    expect(VERSION).toBe(pkg.version);
  });
});
