import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.js';
import { type Harness, startHarness, type TestAccount } from '../support/harness.js';
import { seedLiveOrder } from '../support/http.js';
import { DocumentChecker } from '../support/openapi.js';
import { type ApiOperation, contractProblems, fetchDocument, operationsOf } from './support/api-document.js';
import { requestFor } from './support/arbitraries.js';
import { type RawResponse, RawTimeout, rawRequest } from './support/raw-http.js';
import { announceSeed, RUNS, SEED } from './support/settings.js';

/**
 * Suite 1: property-based fuzzing of every operation the served OpenAPI document lists, over
 * real sockets (raw TCP: see support/raw-http.ts). Each case is a hostile request (bodies,
 * headers, query strings, path ids, encodings, sizes; support/arbitraries.ts). Every answer
 * must be a contract error body (4xx) or a documented success, never a 5xx (503
 * live_unavailable aside: live fulfilment is not configured, which is the contract's answer for
 * a live key), never a hang; the ledger verifies clean afterwards and the server still answers.
 */
const TIMEOUT_MS = 10_000;

const pathValues: string[] = [];
const idempotencyKeys = ['fuzz-key-1', 'fuzz-key-2', 'fuzz-key-3'];

// The operations are read from the served document before the tests are collected (top-level
// await), so each one is its own test, named after it.
announceSeed('fuzz');
// No rate limit: the fuzzer's throughput is the point, and 429 would hide what lies behind it.
// Live top-ups configured and loopback webhooks allowed, so that every operation has a happy path
// the generator can reach (the deposit watcher polls a dead loopback port: harness default).
const h: Harness = await startHarness({
  RATE_LIMIT_RPS: '0',
  TEST_FULFILMENT_DELAY_MS: '20',
  DEPOSIT_ADDRESS: `0:${'ab'.repeat(32)}`,
  WEBHOOK_ALLOW_LOOPBACK: '1',
});
const document = await fetchDocument(h.url);
const checker = DocumentChecker.for(document);
const operations: ApiOperation[] = operationsOf(document);
let account: TestAccount;

beforeAll(async () => {
  account = await h.account({ test: '1000000', live: '1000' });
  const other = await h.account({ test: '10' });
  // Real ids to aim at: own test orders, an own live order, another account's order.
  for (const [key, recipient] of [
    [account.testKey, '@fuzzer'],
    [account.testKey, '@test_failed'],
    [other.testKey, '@someone'],
  ] as const) {
    const response = await fetch(`${h.url}/api/v1/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
      body: JSON.stringify({ product: 'stars', recipient, quantity: 50 }),
    });
    expect(response.status).toBe(201);
    pathValues.push(((await response.json()) as { id: string }).id);
  }
  const live = await seedLiveOrder(h, account.accountId, { idempotencyKey: 'fuzz-live', product: 'stars', username: 'durov', quantity: 50 });
  pathValues.push(live.order.id);
}, 60_000);

afterAll(async () => {
  await h.close();
});

test('the document lists operations to fuzz', () => {
  expect(operations.length).toBeGreaterThanOrEqual(5);
});

describe('every operation, hostile input', () => {
  // Operations are read from the document at run time; one test per operation found there.
  test.for(operations.map((operation) => [`${operation.method} ${operation.template}`, operation] as const))('%s', async ([, operation]) => {
    const stats = new Map<string, number>();
    let slowest = 0;
    const property = fc.asyncProperty(requestFor(operation, account, { pathValues, idempotencyKeys }), async ({ request, url }) => {
      let response: RawResponse;
      try {
        response = await rawRequest(h.url, request, TIMEOUT_MS);
      } catch (error) {
        if (error instanceof RawTimeout) throw new Error(`hang: ${error.message}`);
        throw error;
      }
      slowest = Math.max(slowest, response.ms);
      const code = response.status < 400 ? String(response.status) : `${response.status} ${safeCode(response.body)}`;
      stats.set(code, (stats.get(code) ?? 0) + 1);
      const liveUnavailable = response.status === 503 && safeCode(response.body) === 'live_unavailable';
      if (response.status >= 500 && !liveUnavailable) throw new Error(`${response.status}: ${response.body}`);
      // A JSON text must be UTF-8 (RFC 8259): a body that is not is never accepted.
      if (operation.body && request.body && response.status < 300 && !isUtf8(request.body)) {
        throw new Error(`a body with invalid UTF-8 was accepted: ${response.status} ${response.body.slice(0, 300)}`);
      }
      // A raw byte outside printable ASCII is not valid in a request-target (RFC 9112): Node
      // reads it as Latin-1 and the mangled path may name no route at all (a byte can become
      // '#'). An unknown-route 404 is then the contract's answer, whatever template it resembles.
      const unroutable = /[^\x21-\x7e]/.test(url) && response.status === 404 && safeCode(response.body) === 'not_found';
      const checkedUrl = unroutable ? '/api/v1/unroutable-target' : url.replace(/[^\x21-\x7e]/g, '_');
      const problems = contractProblems(checker, request.method, checkedUrl, response);
      if (problems.length > 0) throw new Error(`${response.status} ${response.body.slice(0, 500)}\n${problems.join('\n')}`);
    });
    const started = performance.now();
    await assertProperty(property, RUNS);
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `[fuzz] ${operation.method} ${operation.template}: ${RUNS} cases in ${seconds.toFixed(1)} s, slowest ${slowest.toFixed(0)} ms; ` +
        [...stats]
          .sort((a, b) => b[1] - a[1])
          .map(([k, n]) => `${k}×${n}`)
          .join(', '),
    );
    // At least one documented success among the cases: the generator reaches the happy path too.
    // (Only where the fuzzer has valid ids: it knows order ids, not those of resources added later.)
    const knowsIds = !operation.parameters.some((p) => p.in === 'path') || operation.template.startsWith('/orders/');
    if (knowsIds)
      expect(
        [...stats.keys()].some((k) => /^2\d\d$/.test(k)),
        `no 2xx among ${[...stats.keys()].join(', ')}`,
      ).toBe(true);
  });
});

test('unknown routes and methods get the contract 404', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'),
      fc.constantFrom(
        '/api/v1/nope',
        '/api/v1/',
        '/api/v1',
        '/api/v1/orders',
        '/api/v1/balance/',
        '/api/v1/orders/x/y',
        '/api/v2/orders',
        '/api/v1/%00',
        '/api/v1/..%2f..%2fbalance',
      ),
      async (method, target) => {
        const response = await rawRequest(h.url, { method, target, headers: [['Authorization', `Bearer ${account.testKey}`]] }, TIMEOUT_MS);
        expect(response.status, response.body).toBeLessThan(500);
        expect(contractProblems(checker, method, target, response)).toEqual([]);
      },
    ),
    { numRuns: Math.min(RUNS, 200), seed: SEED },
  );
});

test('requests Node cannot parse still get a contract error body', async () => {
  // Raw NUL in the request line, a space in the target, a header without a colon, an
  // oversized header, a bad chunk: rejected before routing (Fastify's clientError).
  const cases: Buffer[] = [
    Buffer.from('GET /api/v1/bal\u0000ance HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1'),
    Buffer.from('GET /api/v1/orders/a b HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1'),
    Buffer.from('GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nBroken header\r\n\r\n', 'latin1'),
    Buffer.from(`GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`, 'latin1'),
    Buffer.from('POST /api/v1/orders HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n', 'latin1'),
    Buffer.from('GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \u0000\r\n\r\n', 'latin1'),
  ];
  for (const bytes of cases) {
    const response = await sendBytes(h.url, bytes);
    expect(response.status, `${JSON.stringify(bytes.toString('latin1').slice(0, 80))} → ${response.status} ${response.body}`).toBe(400);
    const body = JSON.parse(response.body);
    expect(body).toMatchObject({ ok: false, error: { code: 'invalid_request' } });
    expect(body.request_id).toBe(response.headers['request-id']);
    expect(body.request_id).toMatch(/^req_/);
  }
});

test('afterwards: the ledger verifies clean and the server still answers', async () => {
  await expect
    .poll(
      async () =>
        Number(
          (
            await h.service.db.kysely
              .selectFrom('orders')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('mode', '=', 'test')
              .where('status', 'in', ['fulfillment_pending', 'processing'])
              .executeTakeFirstOrThrow()
          ).n,
        ),
      { timeout: 30_000, interval: 100 },
    )
    .toBe(0);
  expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
  const health = await fetch(`${h.url}/api/v1/balance`, { headers: { authorization: `Bearer ${account.testKey}` } });
  expect(health.status).toBe(200);
});

/**
 * fc.assert, with a report that fits a terminal: the seed and path to replay, the failure, and
 * the counterexample with long strings and buffers cut (fast-check prints them whole).
 */
async function assertProperty<T>(property: fc.IAsyncProperty<T>, numRuns: number): Promise<void> {
  const details = await fc.check(property, { numRuns, seed: SEED, endOnFailure: true });
  if (!details.failed) return;
  const shorten = (_key: string, value: unknown) => {
    if (value && typeof value === 'object' && (value as { type?: string }).type === 'Buffer') {
      const data = (value as { data: number[] }).data;
      return `<${data.length} bytes: ${JSON.stringify(Buffer.from(data.slice(0, 300)).toString('latin1'))}${data.length > 300 ? '…' : ''}>`;
    }
    return typeof value === 'string' && value.length > 300 ? `${value.slice(0, 300)}…(${value.length} chars)` : value;
  };
  const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  throw new Error(
    `property failed after ${details.numRuns} cases; replay with RELIABILITY_SEED=${details.seed} (path ${details.counterexamplePath})\n` +
      `counterexample: ${JSON.stringify(details.counterexample, shorten, 1)?.slice(0, 4000)}\nfailure: ${error.slice(0, 3000)}`,
  );
}

function isUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

function safeCode(body: string): string {
  try {
    return String(JSON.parse(body)?.error?.code);
  } catch {
    return '(not JSON)';
  }
}

async function sendBytes(origin: string, bytes: Buffer) {
  const net = await import('node:net');
  const { parseResponse } = await import('./support/raw-http.js');
  const { hostname, port } = new URL(origin);
  return new Promise<ReturnType<typeof parseResponse>>((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no answer within 10 s'));
    }, TIMEOUT_MS);
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      try {
        resolve(parseResponse(Buffer.concat(chunks)));
      } catch (error) {
        reject(error);
      }
    });
  });
}
