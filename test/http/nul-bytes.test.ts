import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';

/** U+0000 is storable in SQLite but not in PostgreSQL: both engines must answer alike. */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

test('an external_id containing NUL is invalid_external_id, and nothing is written', async () => {
  const account = await h.account({ test: '1' });
  const before = await h.counts();
  const response = await h.inject({
    method: 'POST',
    url: '/api/v1/orders',
    headers: { authorization: `Bearer ${account.testKey}`, 'content-type': 'application/json', 'idempotency-key': 'nul-1' },
    payload: JSON.stringify({ product: 'stars', recipient: '@durov', quantity: 50, external_id: 'a\u0000b' }),
  });
  expect(response.statusCode).toBe(400);
  expect(response.json().error).toMatchObject({ code: 'invalid_external_id', param: 'external_id' });
  expect(await h.counts()).toEqual(before);
});

test('an order id containing NUL is order_not_found', async () => {
  const account = await h.account();
  const response = await h.inject({ method: 'GET', url: '/api/v1/orders/ord_%00x', headers: { authorization: `Bearer ${account.testKey}` } });
  expect(response.statusCode).toBe(404);
  expect(response.json().error.code).toBe('order_not_found');
});
