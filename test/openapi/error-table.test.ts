import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { API_ERRORS, ERROR_CODES, type ErrorCode } from '../../src/domain/api-error.js';
import { type Harness, startHarness, type TestAccount } from '../support/harness.js';
import { call, expectError } from '../support/http.js';

/**
 * The error codes are defined once (src/domain/api-error.ts: status and message) and shown in
 * two places: the OpenAPI document's error examples and docs/api.md's error table. Each code
 * of the table is in both, with the same status and message, and neither shows a code the
 * table lacks. Where a code's message is fixed, it is also what the service sends.
 */

type Json = Record<string, any>;
let h: Harness;
let doc: Json;
let account: TestAccount;

beforeAll(async () => {
  h = await startHarness();
  doc = (await (await fetch(`${h.url}/api/v1/openapi.json`)).json()) as Json;
  account = await h.account({ test: '10', live: '10' });
});
afterAll(async () => {
  await h.close();
});

/** A markdown error table's `| status | \`code\` | when | message |` rows. */
function tableRows(section: string): Map<string, { status: number; message: string }> {
  const rows = new Map<string, { status: number; message: string }>();
  for (const line of section.split('\n')) {
    const match = /^\| (\d{3}) \| `([a-z_]+)` \| .* \| ([^|]*(?:\\\|[^|]*)*) \|$/.exec(line);
    if (!match) continue;
    const [, status, code, message] = match as unknown as [string, string, string, string];
    expect(rows.has(code), `${code} twice in docs/api.md`).toBe(false);
    rows.set(code, { status: Number(status), message: message.replace(/\\\|/g, '|') });
  }
  return rows;
}

/** docs/api.md "Errors". */
function docsTable(): Map<string, { status: number; message: string }> {
  const text = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
  return tableRows(text.slice(text.indexOf('\n## Errors'), text.indexOf('\n### Time limits')));
}

/** Every error example of the served document: code → the statuses and messages it is shown with. */
function documentExamples(): Map<string, { status: number; message: string }[]> {
  const found = new Map<string, { status: number; message: string }[]>();
  for (const methods of Object.values(doc.paths as Json)) {
    for (const operation of Object.values(methods as Json) as Json[]) {
      for (const [status, response] of Object.entries((operation.responses ?? {}) as Json)) {
        if (Number(status) < 400) continue;
        const examples = (response.content?.['application/json']?.examples ?? {}) as Json;
        for (const example of Object.values(examples) as Json[]) {
          const error = example.value?.error as Json | undefined;
          if (!error) continue;
          found.set(error.code, [...(found.get(error.code) ?? []), { status: Number(status), message: error.message }]);
        }
      }
    }
  }
  return found;
}

describe('the error table', () => {
  test('docs/api.md lists every code with its status and message, and no other code', () => {
    const rows = docsTable();
    expect([...rows.keys()].sort()).toEqual([...ERROR_CODES].sort());
    for (const code of ERROR_CODES) {
      expect(rows.get(code), code).toEqual({ status: API_ERRORS[code].status, message: API_ERRORS[code].message });
    }
  });

  test("the OpenAPI document's description has the same table", () => {
    const rows = tableRows(doc.info.description as string);
    expect([...rows.keys()]).toEqual(ERROR_CODES);
    for (const code of ERROR_CODES) {
      expect(rows.get(code), code).toEqual({ status: API_ERRORS[code].status, message: API_ERRORS[code].message });
    }
  });

  test("the OpenAPI document's error examples show every code with its status and message, and no other code", () => {
    const examples = documentExamples();
    // Two codes answer before any route is chosen, so no operation lists them: the description's table has them.
    const beforeAnyRoute = ['not_found', 'request_timeout'];
    expect([...examples.keys()].sort()).toEqual(ERROR_CODES.filter((code) => !beforeAnyRoute.includes(code)).sort());
    for (const code of ERROR_CODES) {
      for (const shown of examples.get(code) ?? []) {
        expect(shown, code).toEqual({ status: API_ERRORS[code].status, message: API_ERRORS[code].message });
      }
    }
    expect(doc.components.schemas.ErrorCode.enum).toEqual(ERROR_CODES);
  });

  test('each operation answers an error code only under its status', () => {
    for (const methods of Object.values(doc.paths as Json)) {
      for (const operation of Object.values(methods as Json) as Json[]) {
        for (const [status, response] of Object.entries((operation.responses ?? {}) as Json)) {
          const codes = (response.content?.['application/json']?.schema?.allOf?.[1]?.properties?.error?.properties?.code?.enum ?? []) as ErrorCode[];
          for (const code of codes) expect(API_ERRORS[code].status, `${operation.operationId} ${code}`).toBe(Number(status));
        }
      }
    }
  });
});

describe('fixed messages are the ones sent', () => {
  const sent = async (options: Parameters<typeof call>[1], code: ErrorCode, param?: string) => {
    const res = await call(h, options);
    expectError(res, API_ERRORS[code].status, code, param);
    expect(res.body.error.message).toBe(API_ERRORS[code].message);
  };

  test('test_key_required: a test helper with a live key', async () => {
    await sent({ method: 'POST', path: '/test_helpers/fund', key: account.liveKey, json: { amount: '1' } }, 'test_key_required');
  });

  test('live_key_required: deposits with a test key', async () => {
    await sent({ path: '/deposits', key: account.testKey }, 'live_key_required');
  });

  test('missing_api_key and idempotency_key_required', async () => {
    await sent({ path: '/balance' }, 'missing_api_key');
    await sent({ method: 'POST', path: '/orders', key: account.testKey, json: { product: 'stars', recipient: '@durov', quantity: 50 } }, 'idempotency_key_required');
  });

  test('invalid_product, invalid_quantity, invalid_external_id', async () => {
    const order = (body: Json) => ({ method: 'POST' as const, path: '/orders', key: account.testKey, json: body, headers: { 'idempotency-key': `k-${Math.random()}` } });
    await sent(order({ product: 'gold', recipient: '@durov', quantity: 50 }), 'invalid_product', 'product');
    await sent(order({ product: 'stars', recipient: '@durov', quantity: 49 }), 'invalid_quantity', 'quantity');
    await sent(order({ product: 'stars', recipient: '@durov', quantity: 50, external_id: '' }), 'invalid_external_id', 'external_id');
  });
});

describe('webhook endpoints: events that are not an array are invalid_events, as documented', () => {
  test.each([
    ['a string', 'order.delivered'],
    ['an object', { 'order.delivered': true }],
    ['null', null],
    ['an array of numbers', [1]],
  ])('events as %s', async (_, events) => {
    const res = await call(h, { method: 'POST', path: '/webhook_endpoints', key: account.testKey, json: { url: 'https://example.com/hook', events } });
    expectError(res, 400, 'invalid_events', 'events');
  });

  test('a url that is not a string is still invalid_request, named before a bad events list', async () => {
    const res = await call(h, { method: 'POST', path: '/webhook_endpoints', key: account.testKey, json: { url: 42, events: 'order.delivered' } });
    expectError(res, 400, 'invalid_request', 'url');
  });
});
