import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';

/**
 * docs/api.md "Conventions": a body is only read, and its content type only checked, on POST. A
 * DELETE that carries one is answered as if it had none (found by the reliability fuzzer: a
 * text body on DELETE /webhook_endpoints/{id} got 415).
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

test.each([
  ['text/plain', 'hello'],
  ['application/json', '{not json'],
  ['application/json', '[1,2]'],
  ['application/octet-stream', '\u0000\u00ff'],
])('DELETE with a %s body %j: the body is ignored', async (contentType, payload) => {
  const a = await h.account();
  const res = await h.inject({
    method: 'DELETE',
    url: '/api/v1/webhook_endpoints/we_doesNotExist000000000',
    headers: { authorization: `Bearer ${a.testKey}`, 'content-type': contentType },
    payload,
  });
  expect(res.statusCode).toBe(404);
  expect(res.json().error.code).toBe('webhook_endpoint_not_found');
});

test('a DELETE body over the size limit is still refused with 413 (documented)', async () => {
  const a = await h.account();
  const res = await h.inject({
    method: 'DELETE',
    url: '/api/v1/webhook_endpoints/we_doesNotExist000000000',
    headers: { authorization: `Bearer ${a.testKey}`, 'content-type': 'text/plain' },
    payload: 'x'.repeat(17 * 1024),
  });
  expect(res.statusCode).toBe(413);
  expect(res.json().error.code).toBe('payload_too_large');
});
