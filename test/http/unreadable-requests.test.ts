import net from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { call, expectError } from '../support/http.js';

/**
 * Regression (found by the reliability fuzzer): requests Node's HTTP parser refuses, and URLs
 * the router cannot decode, used to get Fastify's own `{"error":"Bad Request",…}` body with no
 * Request-Id. They now get the contract's 400 invalid_request body like every other error.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

/** Writes raw bytes on a fresh connection and returns what came back. */
function exchange(bytes: string): Promise<{ status: number; headers: string; body: any }> {
  const { hostname, port } = new URL(h.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error('no answer within 5 s')), 5000);
    socket.on('connect', () => socket.write(Buffer.from(bytes, 'latin1')));
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      resolve({ status: Number(text.slice(9, 12)), headers: text.slice(0, split), body: JSON.parse(text.slice(split + 4)) });
    });
  });
}

const badChunk = (target: string, key?: string) =>
  `POST ${target} HTTP/1.1\r\nHost: x\r\n${key ? `Authorization: Bearer ${key}\r\n` : ''}Transfer-Encoding: chunked\r\n` +
  'Content-Type: application/json\r\nIdempotency-Key: k1\r\n\r\nzz\r\n{}\r\n0\r\n\r\n';

test.each([
  ['a NUL byte in the request line', () => 'GET /api/v1/bal\u0000ance HTTP/1.1\r\nHost: x\r\n\r\n'],
  ['a space inside the target', () => 'GET /api/v1/orders/a b HTTP/1.1\r\nHost: x\r\n\r\n'],
  ['a header line without a colon', () => 'GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nBroken\r\n\r\n'],
  ['headers over the size limit', () => `GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`],
  ['a malformed chunk', () => badChunk('/api/v1/orders')],
  ['a malformed chunk with a valid key', async () => badChunk('/api/v1/orders', (await h.account()).testKey)],
])('%s → 400 invalid_request with a Request-Id', async (_, bytes) => {
  const response = await exchange(await bytes());
  expect(response.status).toBe(400);
  expect(response.body).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
  expect(response.body.request_id).toMatch(/^req_/);
  expect(response.headers).toContain(`Request-Id: ${response.body.request_id}`);
});

/**
 * An unknown route is answered from the headers alone, before Node reads the bad chunk: that
 * 404 stays the only response on the connection, which is then closed (a second response,
 * unasked for, would answer the client's next request).
 */
test('a malformed chunk after an unknown route: the 404 alone, then the connection closes', async () => {
  const response = await exchange(badChunk('/api/v1/nope'));
  expect(response.status).toBe(404);
  expect(response.body).toMatchObject({ ok: false, error: { code: 'not_found' } });
});

test('a path the router cannot decode (invalid UTF-8 escape) → 400 invalid_request', async () => {
  const account = await h.account();
  for (const path of ['/orders/%ff', '/orders/ord_%c0%80', '/balance%e2']) {
    const res = await call(h, { path, key: account.testKey });
    expectError(res, 400, 'invalid_request');
  }
});
