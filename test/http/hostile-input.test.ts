import net from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness, type TestAccount } from '../support/harness.js';
import { call, expectError, expectOk, newKey, REQUEST_ID, STARS_50 } from '../support/http.js';

/**
 * Input gaps found by probing the server with hostile requests (docs/api.md "Errors"): a JSON
 * object naming a member twice, a lone surrogate in a string field, and the requests Node's
 * HTTP server refuses or drops before Fastify sees them (no Host, an unknown Expect, CONNECT).
 */
let h: Harness;
let account: TestAccount;
beforeAll(async () => {
  h = await startHarness({ WEBHOOK_ALLOW_LOOPBACK: '1' });
  account = await h.account({ test: '1000' });
});
afterAll(() => h.close());

const postRaw = (path: string, raw: string, headers: Record<string, string> = {}) =>
  call(h, { method: 'POST', path, key: account.testKey, raw, headers: { 'content-type': 'application/json', 'idempotency-key': newKey(), ...headers } });

describe('a JSON object that names the same member twice is invalid_json', () => {
  test.each([
    ['the last of two quantities', '{"product":"stars","recipient":"@durov","quantity":50,"quantity":10000}'],
    ['the same value twice', '{"product":"stars","product":"stars","recipient":"@durov","quantity":50}'],
    ['a name escaped differently', '{"product":"stars","recipient":"@durov","quantity":50,"quantit\\u0079":60}'],
    ['inside a nested object', '{"product":"stars","recipient":"@durov","quantity":50,"external_id":null,"x":{"a":1,"a":2}}'],
    ['inside an array', '{"product":"stars","recipient":"@durov","quantity":50,"x":[{"b":1,"b":1}]}'],
  ])('%s', async (_, raw) => {
    const before = (await h.counts()).orders;
    expectError(await postRaw('/orders', raw), 400, 'invalid_json');
    expect((await h.counts()).orders).toBe(before);
  });

  // Regression (found by the reliability fuzzer): counting members recursively overflowed the
  // call stack on a body nested thousands deep, a 500.
  test('a body nested 6000 deep is no 500: invalid_json with a repeat inside, its field error without', async () => {
    const depth = 6000;
    const nested = (inner: string) => `{"product":${'['.repeat(depth)}${inner}${']'.repeat(depth)},"recipient":"@durov","quantity":50}`;
    expectError(await postRaw('/orders', nested('{"a":1,"a":2}')), 400, 'invalid_json');
    expectError(await postRaw('/orders', nested('{"a":1}')), 400, 'invalid_product', 'product');
  });

  test('other endpoints too: validate, webhook endpoints', async () => {
    expectError(await postRaw('/recipients/validate', '{"product":"stars","recipient":"@durov","quantity":50,"quantity":60}'), 400, 'invalid_json');
    expectError(await postRaw('/webhook_endpoints', '{"url":"https://example.com/a","url":"https://example.com/b"}'), 400, 'invalid_json');
  });

  test('colons, quotes and backslashes inside strings are not members: the order is created', async () => {
    const externalId = 'a:b "c": \\ d\\":{x:1}';
    const res = await postRaw('/orders', JSON.stringify({ ...STARS_50, external_id: externalId }));
    expectOk(res, 201);
    expect(res.body.external_id).toBe(externalId);
  });

  test('the same name in two different objects is no repeat', async () => {
    const res = await postRaw('/orders', '{"product":"stars","recipient":"@durov","quantity":50,"x":{"quantity":1}}');
    // An unknown field, not a repeated member: the field check answers.
    expectError(res, 400, 'invalid_request', 'x');
  });
});

describe('a lone surrogate in a string field is malformed: what is stored is what was sent', () => {
  test.each([
    ['external_id', 'invoice-\ud800', 'invalid_external_id'],
    ['external_id', '\udfff', 'invalid_external_id'],
    ['recipient', '@durov\udc00', 'recipient_invalid'],
    ['product', 'stars\ud83d', 'invalid_product'],
    ['quote_id', 'quo_\ud800', 'invalid_request'],
  ])('POST /orders %s %j → %s', async (field, value, code) => {
    // Orders only: the worker goes on fulfilling earlier orders (journal, events).
    const before = (await h.counts()).orders;
    const res = await postRaw('/orders', JSON.stringify({ ...STARS_50, [field]: value }));
    expectError(res, 400, code, field);
    expect((await h.counts()).orders).toBe(before);
  });

  test('a surrogate pair (an emoji) is well-formed: stored and found by its external_id', async () => {
    const externalId = `order-😀-${Date.now()}`;
    const created = await postRaw('/orders', JSON.stringify({ ...STARS_50, external_id: externalId }));
    expectOk(created, 201);
    expect(created.body.external_id).toBe(externalId);
    const found = await call(h, { path: `/orders?external_id=${encodeURIComponent(externalId)}`, key: account.testKey });
    expectOk(found);
    expect(found.body.data.map((o: { id: string }) => o.id)).toEqual([created.body.id]);
  });

  test('webhook endpoint url → invalid_url; events → invalid_events; nothing stored', async () => {
    expectError(await postRaw('/webhook_endpoints', JSON.stringify({ url: 'https://example.com/hook\ud800' })), 400, 'invalid_url', 'url');
    expectError(await postRaw('/webhook_endpoints', JSON.stringify({ url: 'http://127.0.0.1:9/hook', events: ['order.delivered\udfff'] })), 400, 'invalid_events', 'events');
    const list = await call(h, { path: '/webhook_endpoints', key: account.testKey });
    expect(list.body.data).toEqual([]);
  });
});

/** Writes raw bytes on a fresh connection; resolves with what came back once the server closes. */
function exchange(bytes: string): Promise<{ status: number; headers: string; body: any; interim: number[] }> {
  const { hostname, port } = new URL(h.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error('the server did not answer and close within 5 s')), 5000);
    socket.on('connect', () => socket.write(Buffer.from(bytes, 'latin1')));
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      let text = Buffer.concat(chunks).toString('utf8');
      // Interim answers (100 Continue) have no body.
      const interim: number[] = [];
      while (/^HTTP\/1\.1 1\d\d /.test(text)) {
        interim.push(Number(text.slice(9, 12)));
        text = text.slice(text.indexOf('\r\n\r\n') + 4);
      }
      const split = text.indexOf('\r\n\r\n');
      try {
        resolve({ status: Number(text.slice(9, 12)), headers: text.slice(0, split), body: JSON.parse(text.slice(split + 4)), interim });
      } catch {
        reject(new Error(`not a JSON answer: ${JSON.stringify(text)}`));
      }
    });
  });
}

describe('what Node refuses before Fastify carries the contract body and a Request-Id', () => {
  test.each([
    ['no Host (HTTP/1.1)', 'GET /api/v1/balance HTTP/1.1\r\nConnection: close\r\n\r\n', 400, 'invalid_request'],
    ['an Expect other than 100-continue', 'GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n', 400, 'invalid_request'],
    ['CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 404, 'not_found'],
  ])('%s → %s %s, then the connection closes', async (_, bytes, status, code) => {
    const response = await exchange(bytes);
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ ok: false, error: { code } });
    expect(response.body.request_id).toMatch(REQUEST_ID);
    expect(response.headers).toMatch(new RegExp(`\\r\\nRequest-Id: ${response.body.request_id}\\r\\n`, 'i'));
  });

  test('HTTP/1.0 needs no Host: answered as usual', async () => {
    const response = await exchange(`GET /api/v1/balance HTTP/1.0\r\nAuthorization: Bearer ${account.testKey}\r\n\r\n`);
    expect(response.status).toBe(200);
    expect(response.body.ok).toBe(true);
  });

  test('Expect: 100-continue still works: the body is asked for and the request answered', async () => {
    const body = JSON.stringify({ product: 'stars', recipient: '@durov', quantity: 50 });
    const response = await exchange(
      `POST /api/v1/recipients/validate HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: Bearer ${account.testKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\nExpect: 100-continue\r\n\r\n${body}`,
    );
    expect(response.interim).toEqual([100]);
    expect(response.status).toBe(200);
    expect(response.body.ok).toBe(true);
  });
});
