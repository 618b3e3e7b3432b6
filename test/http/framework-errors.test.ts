import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { call, expectOk, expectOrderRejected, expectRejected, newKey, REQUEST_ID } from '../support/http.js';

/**
 * What the framework would otherwise answer on its own — body size, media type, JSON syntax,
 * routing — must leave as contract error bodies (docs/api.md "Conventions", "Errors").
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

const LIMIT = 16 * 1024;
const VALID = '{"product":"stars","recipient":"durov","quantity":50}';

/** A valid order body padded with JSON whitespace to exactly `bytes` bytes. */
const padded = (bytes: number) => `${VALID.slice(0, -1)}${' '.repeat(bytes - VALID.length)}}`;

function rawPost(key: string | undefined, payload: string | Buffer, contentType: string | undefined, path = '/orders') {
  return call(h, {
    method: 'POST',
    path,
    ...(key !== undefined && { key }),
    raw: payload,
    headers: { ...(contentType !== undefined && { 'content-type': contentType }), 'idempotency-key': newKey() },
  });
}

describe('413 payload_too_large (body over 16 KiB)', () => {
  test('exactly 16384 bytes is accepted; 16385 bytes → 413', async () => {
    const a = await h.account({ test: '10' });
    expect(Buffer.byteLength(padded(LIMIT))).toBe(LIMIT);
    expectOk(await rawPost(a.testKey, padded(LIMIT), 'application/json'), 201);
    await expectOrderRejected(h, a.testKey, undefined, 413, 'payload_too_large', null, { raw: { payload: padded(LIMIT + 1), contentType: 'application/json' } });
  });

  test('the limit counts bytes, not characters', async () => {
    const a = await h.account({ test: '10' });
    // 5462 three-byte characters = 16386 bytes, far fewer than 16384 characters.
    const payload = `{"product":"stars","recipient":"durov","quantity":50,"external_id":"${'€'.repeat(5462)}"}`;
    expect(payload.length).toBeLessThan(LIMIT);
    await expectOrderRejected(h, a.testKey, undefined, 413, 'payload_too_large', null, { raw: { payload, contentType: 'application/json' } });
  });

  test('413 on validate too', async () => {
    const a = await h.account({ test: '10' });
    await expectRejected(h, () => rawPost(a.testKey, padded(LIMIT + 100), 'application/json', '/recipients/validate'), 413, 'payload_too_large');
  });
});

describe('415 unsupported_media_type', () => {
  test.each([
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/jsonx',
    'application/json-patch+json',
    'text/json',
    'application/xml',
  ])('Content-Type %s → 415', async (contentType) => {
    const a = await h.account({ test: '10' });
    await expectOrderRejected(h, a.testKey, undefined, 415, 'unsupported_media_type', null, { raw: { payload: VALID, contentType } });
  });

  test('a body without Content-Type → 415', async () => {
    const a = await h.account({ test: '10' });
    await expectOrderRejected(h, a.testKey, undefined, 415, 'unsupported_media_type', null, { raw: { payload: VALID } });
  });

  test('415 on validate too', async () => {
    const a = await h.account({ test: '10' });
    await expectRejected(h, () => rawPost(a.testKey, VALID, 'text/plain', '/recipients/validate'), 415, 'unsupported_media_type');
  });

  test.each(['application/json; charset=utf-8', 'application/json;charset=UTF-8', 'Application/JSON'])('Content-Type %s is JSON', async (contentType) => {
    const a = await h.account({ test: '10' });
    expectOk(await rawPost(a.testKey, VALID, contentType), 201);
  });
});

describe('400 invalid_json', () => {
  test.each([
    { name: 'an empty body', payload: '' },
    { name: 'whitespace only', payload: '   ' },
    { name: 'truncated JSON', payload: '{"product":"stars"' },
    { name: 'a trailing comma', payload: '{"product":"stars",}' },
    { name: 'single quotes', payload: "{'product':'stars'}" },
    { name: 'two JSON values', payload: '{}{}' },
    { name: 'an array', payload: '[]' },
    { name: 'an array of the object', payload: `[${VALID}]` },
    { name: 'a string', payload: '"x"' },
    { name: 'a number', payload: '1' },
    { name: 'null', payload: 'null' },
    { name: 'true', payload: 'true' },
    { name: 'a deeply nested array', payload: `${'['.repeat(5000)}${']'.repeat(5000)}` },
  ])('$name → invalid_json', async ({ payload }) => {
    const a = await h.account({ test: '10' });
    await expectOrderRejected(h, a.testKey, undefined, 400, 'invalid_json', null, { raw: { payload, contentType: 'application/json' } });
  });

  test('a deeply nested object is an unknown field, not a crash', async () => {
    const a = await h.account({ test: '10' });
    const payload = `${VALID.slice(0, -1)},"a":${'{"a":'.repeat(2000)}1${'}'.repeat(2001)}`;
    expect(Buffer.byteLength(payload)).toBeLessThan(LIMIT);
    await expectOrderRejected(h, a.testKey, undefined, 400, 'invalid_request', 'a', { raw: { payload, contentType: 'application/json' } });
  });

  test('leading and trailing whitespace around an object is fine', async () => {
    const a = await h.account({ test: '10' });
    expectOk(await rawPost(a.testKey, `\n  ${VALID}  \n`, 'application/json'), 201);
  });
});

describe('404 not_found', () => {
  test('the error body names the method and path; Request-Id is set', async () => {
    const res = await expectRejected(h, () => call(h, { method: 'PATCH', path: '/orders/ord_x' }), 404, 'not_found');
    expect(res.body.error.message).toContain('PATCH');
    expect(res.body.error.message).toContain('/api/v1/orders/ord_x');
    expect(res.requestId).toMatch(REQUEST_ID);
  });

  test('unknown route beats an invalid JSON body', async () => {
    await expectRejected(h, () => rawPost(undefined, '{bad', 'application/json', '/nope'), 404, 'not_found');
    await expectRejected(h, () => call(h, { method: 'PUT', path: '/orders', raw: '{bad', headers: { 'content-type': 'application/json' } }), 404, 'not_found');
  });

  test('unknown route beats an oversized body', async () => {
    await expectRejected(h, () => rawPost(undefined, 'x'.repeat(LIMIT + 1), 'text/plain', '/nope'), 404, 'not_found');
    const a = await h.account();
    await expectRejected(
      h,
      () => call(h, { method: 'DELETE', path: '/orders/ord_x', key: a.testKey, raw: 'x'.repeat(LIMIT + 1), headers: { 'content-type': 'text/plain' } }),
      404,
      'not_found',
    );
  });

  test('unknown route beats an unsupported media type', async () => {
    await expectRejected(h, () => rawPost(undefined, '<x/>', 'application/xml', '/nope'), 404, 'not_found');
  });
});

describe('404 not_found names the API route a client meant', () => {
  const notFound = (res: { statusCode: number; headers: Record<string, unknown>; body: string }) => {
    expect(res.statusCode, res.body).toBe(404);
    expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
    const body = JSON.parse(res.body);
    expect(body).toMatchObject({ ok: false, error: { code: 'not_found' }, request_id: res.headers['request-id'] });
    return body.error.message as string;
  };

  test('without /api/v1, with an API key or asking for JSON: a JSON 404, not the dashboard login redirect', async () => {
    const a = await h.account({ test: '1' });
    const bearer = { authorization: `Bearer ${a.testKey}` };
    expect(notFound(await h.inject({ method: 'GET', url: '/balance', headers: bearer }))).toBe('No route GET /balance. The API is under /api/v1: GET /api/v1/balance.');
    expect(notFound(await h.inject({ method: 'GET', url: '/balance', headers: { accept: 'application/json' } }))).toBe(
      'No route GET /balance. The API is under /api/v1: GET /api/v1/balance.',
    );
    expect(notFound(await h.inject({ method: 'GET', url: '/orders/ord_x?limit=1', headers: bearer }))).toBe(
      'No route GET /orders/ord_x. The API is under /api/v1: GET /api/v1/orders/ord_x.',
    );
    expect(notFound(await h.inject({ method: 'GET', url: '/orders', headers: bearer }))).toContain('GET /api/v1/orders.');
    // A browser still gets the dashboard (its login page first).
    const browser = await h.inject({ method: 'GET', url: '/balance', headers: { accept: 'text/html,application/xhtml+xml,application/json;q=0.9,*/*;q=0.8' } });
    expect(browser.statusCode).toBe(303);
    expect(browser.headers.location).toMatch(/^\/login/);
    // The reference page is not an API route's unprefixed twin.
    expect((await h.inject({ method: 'GET', url: '/docs', headers: bearer })).statusCode).toBe(200);
  });

  test('a method the path does not have names the one it has: POST /quote suggests GET', async () => {
    const a = await h.account({ test: '1' });
    const json = { authorization: `Bearer ${a.testKey}`, 'content-type': 'application/json' };
    expect(notFound(await h.inject({ method: 'POST', url: '/quote', headers: json, payload: '{}' }))).toBe('No route POST /quote. The API is under /api/v1: GET /api/v1/quote.');
    expect(notFound(await h.inject({ method: 'POST', url: '/api/v1/quote', headers: json, payload: '{}' }))).toBe('No route POST /api/v1/quote: it answers GET only.');
    expect(notFound(await h.inject({ method: 'PUT', url: '/api/v1/orders', headers: json, payload: '{}' }))).toBe('No route PUT /api/v1/orders: it answers GET and POST only.');
    // Without an API key too: the route is unknown before anything else is checked.
    expect(notFound(await h.inject({ method: 'POST', url: '/quote' }))).toBe('No route POST /quote. The API is under /api/v1: GET /api/v1/quote.');
    // Nothing to suggest: the plain message.
    expect(notFound(await h.inject({ method: 'GET', url: '/nope', headers: json }))).toBe('No route GET /nope.');
    expect(notFound(await h.inject({ method: 'GET', url: '/api/v1/nope', headers: json }))).toBe('No route GET /api/v1/nope.');
  });
});

describe('a body is only read on POST', () => {
  test('GET with an invalid JSON body, an oversized body or a foreign media type → 200', async () => {
    const a = await h.account({ test: '1' });
    for (const [payload, contentType] of [
      ['{bad', 'application/json'],
      ['x'.repeat(LIMIT + 1), 'text/plain'],
      ['x'.repeat(LIMIT + 1), 'application/json'],
      ['<x/>', 'application/xml'],
    ] as const) {
      const res = await call(h, { path: '/balance', key: a.testKey, raw: payload, headers: { 'content-type': contentType } });
      expectOk(res);
    }
  });
});

describe('every response', () => {
  test('Request-Id is unique per request and never taken from the client', async () => {
    const a = await h.account();
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const res = await call(h, { path: '/balance', key: a.testKey, headers: { 'request-id': 'req_client', 'x-request-id': 'req_client' } });
      expect(res.requestId).not.toBe('req_client');
      ids.add(res.requestId);
    }
    expect(ids.size).toBe(5);
  });

  test('no CORS headers (keys are for servers only)', async () => {
    const a = await h.account();
    const res = await call(h, { path: '/balance', key: a.testKey, headers: { origin: 'https://evil.example' } });
    expect(Object.keys(res.headers).filter((name) => name.startsWith('access-control-'))).toEqual([]);
  });
});

describe('a body that is not UTF-8 is invalid_json (regression: it was decoded leniently and stored with U+FFFD)', () => {
  test.each([
    [
      'a 0xFF byte inside external_id',
      Buffer.concat([Buffer.from('{"product":"stars","recipient":"durov","quantity":50,"external_id":"ab'), Buffer.from([0xff]), Buffer.from('cd"}')]),
    ],
    ['an overlong encoding', Buffer.concat([Buffer.from('{"product":"stars","recipient":"durov","quantity":50,"external_id":"'), Buffer.from([0xc0, 0x80]), Buffer.from('"}')])],
    [
      'a UTF-16 surrogate encoded in UTF-8',
      Buffer.concat([Buffer.from('{"product":"stars","recipient":"durov","quantity":50,"external_id":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]),
    ],
    ['UTF-16LE', Buffer.from('{"product":"stars","recipient":"durov","quantity":50}', 'utf16le')],
  ])('%s → 400 invalid_json, nothing written, key not bound', async (_, payload) => {
    const a = await h.account({ test: '10' });
    await expectOrderRejected(h, a.testKey, undefined, 400, 'invalid_json', null, { raw: { payload: payload as unknown as string, contentType: 'application/json' } });
  });

  test('valid multi-byte UTF-8 is still accepted and echoed exactly', async () => {
    const a = await h.account({ test: '10' });
    const res = await rawPost(a.testKey, Buffer.from('{"product":"stars","recipient":"durov","quantity":50,"external_id":"€ 𝕏 ü"}'), 'application/json');
    expectOk(res, 201);
    expect(res.body.external_id).toBe('€ 𝕏 ü');
  });
});
