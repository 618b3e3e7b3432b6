import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { expect } from 'vitest';
import { loadConfig } from '../../src/config.js';
import type { Mode } from '../../src/domain/api-key.js';
import type { Product } from '../../src/domain/products.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { readBalance } from '../../src/ledger/ledger.js';
import { createOrder, type CreateOrderResult } from '../../src/orders/create-order.js';
import { IdempotencyGate } from '../../src/orders/idempotency-gate.js';
import { FixedRateFeed, ListPriceSource } from '../../src/providers/pricing/list-price-source.js';
import type { Harness, TestAccount } from './harness.js';

/**
 * Request helpers for the HTTP suite. Every response that goes through `call` is checked for
 * the invariants every response must have (docs/api.md "Conventions", "Errors"): a JSON body with
 * a boolean `ok`, a `Request-Id: req_…` header, and for errors the exact error body shape with
 * `request_id` equal to the header.
 */

export const API = '/api/v1';
export const REQUEST_ID = /^req_[0-9A-Za-z]{22,}$/;
export const ORDER_ID = /^ord_[0-9A-Za-z]{16,}$/;
export const EVENT_ID = /^evt_[0-9A-Za-z]{16,}$/;
/** RFC 3339, UTC, millisecond precision, Z suffix. */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** Wire money: decimal, at most 9 fractional digits, trailing zeros trimmed, no exponent. */
export const MONEY = /^(0|[1-9]\d*)(\.\d{0,8}[1-9])?$/;

export type Body = any;

export interface Res {
  status: number;
  body: Body;
  headers: Record<string, string | string[] | number | undefined>;
  requestId: string;
}

export interface CallOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';
  /** Path below /api/v1 (e.g. "/balance"), or an absolute path starting with "!" to skip the prefix. */
  path: string;
  /** API key sent as "Authorization: Bearer <key>". */
  key?: string;
  /** A JSON value, serialised and sent with Content-Type: application/json. */
  json?: unknown;
  /** A raw payload, sent as is (set content-type yourself in headers). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

export function url(path: string): string {
  return path.startsWith('!') ? path.slice(1) : `${API}${path}`;
}

export async function call(h: Harness, options: CallOptions): Promise<Res> {
  const headers: Record<string, string> = {};
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`;
  let payload: string | Buffer | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(options.json);
  } else if (options.raw !== undefined) {
    payload = options.raw;
  }
  Object.assign(headers, options.headers ?? {});
  const response = await h.inject({ method: options.method ?? 'GET', url: url(options.path), headers, ...(payload !== undefined && { payload }) });
  const requestId = response.headers['request-id'];
  expect(requestId, 'every response carries Request-Id').toMatch(REQUEST_ID);
  expect(String(response.headers['content-type'] ?? '')).toMatch(/^application\/json/);
  const body = JSON.parse(response.body) as Body;
  expect(typeof body.ok, 'every body has a boolean ok').toBe('boolean');
  expect(body.ok).toBe(response.statusCode < 400);
  if (!body.ok) expectErrorShape(body, String(requestId));
  return { status: response.statusCode, body, headers: response.headers, requestId: String(requestId) };
}

function expectErrorShape(body: Body, requestId: string): void {
  expect(Object.keys(body).sort()).toEqual(['error', 'ok', 'request_id']);
  expect(body.request_id).toBe(requestId);
  expect(typeof body.error.code).toBe('string');
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
  for (const field of Object.keys(body.error)) expect(['code', 'message', 'param', 'details']).toContain(field);
  if ('param' in body.error) expect(typeof body.error.param).toBe('string');
  // Never a stack trace.
  expect(JSON.stringify(body)).not.toMatch(/\n\s+at |node_modules|\.ts:\d+/);
}

/** Asserts an error response: status, code and (when given) param; `param: null` = absent. */
export function expectError(res: Res, status: number, code: string, param?: string | null): void {
  expect({ status: res.status, code: res.body.error?.code }, JSON.stringify(res.body)).toEqual({ status, code });
  if (param === null) expect(res.body.error).not.toHaveProperty('param');
  else if (param !== undefined) expect(res.body.error.param).toBe(param);
}

export function expectOk(res: Res, status = 200): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.ok).toBe(true);
}

export const newKey = () => `idem-${randomUUID()}`;

export interface OrderInput {
  product?: unknown;
  recipient?: unknown;
  quantity?: unknown;
  external_id?: unknown;
  [field: string]: unknown;
}

export const STARS_50 = { product: 'stars', recipient: '@durov', quantity: 50 } as const;

/** POST /orders with an Idempotency-Key (a fresh one unless given; `null` sends none). */
export function postOrder(h: Harness, key: string, body: unknown, idempotencyKey: string | null = newKey(), headers: Record<string, string> = {}) {
  return call(h, {
    method: 'POST',
    path: '/orders',
    key,
    json: body,
    headers: { ...(idempotencyKey !== null && { 'idempotency-key': idempotencyKey }), ...headers },
  });
}

export const getOrder = (h: Harness, key: string, id: string) => call(h, { path: `/orders/${id}`, key });
export const getBalance = (h: Harness, key: string) => call(h, { path: '/balance', key });
export const getQuote = (h: Harness, key: string, query: string) => call(h, { path: `/quote${query}`, key });
export const validate = (h: Harness, key: string, body: unknown) => call(h, { method: 'POST', path: '/recipients/validate', key, json: body });

/** The balance as the API shows it. */
export async function balanceOf(h: Harness, key: string): Promise<{ value: string; reserved: string; currency: string }> {
  const res = await getBalance(h, key);
  expectOk(res);
  return res.body.balance;
}

// ---------------------------------------------------------------------------------------------
// Waiting without fixed sleeps.

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` every `intervalMs` until `done` holds, or fails after `timeoutMs`. */
export async function pollUntil<T>(probe: () => Promise<T>, done: (value: T) => boolean, { timeoutMs = 10_000, intervalMs = 50, what = 'condition' } = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await probe();
  while (!done(last)) {
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(last, (_key, value) => (typeof value === 'bigint' ? value.toString() : value))}`,
      );
    await pause(intervalMs);
    last = await probe();
  }
  return last;
}

export const FINAL = ['delivered', 'failed'];

/** Polls GET /orders/{id} until its status is one of `statuses`. */
export async function waitForStatus(h: Harness, key: string, id: string, statuses: string[] = FINAL, timeoutMs = 10_000): Promise<Body> {
  const res = await pollUntil(
    () => getOrder(h, key, id),
    (r) => r.status === 200 && statuses.includes(r.body.status),
    {
      timeoutMs,
      what: `order ${id} to reach ${statuses.join('|')}`,
    },
  );
  return res.body;
}

/** Waits until no test-mode order is still moving (the worker writes events in the background). */
export async function quiesce(h: Harness, timeoutMs = 10_000): Promise<void> {
  await pollUntil(
    async () => {
      const row = await h.service.db.kysely
        .selectFrom('orders')
        .select(sql<number>`count(*)`.as('n'))
        .where('mode', '=', 'test')
        .where('status', 'in', ['fulfillment_pending', 'processing'])
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    (n) => n === 0,
    { timeoutMs, what: 'test orders to settle' },
  );
}

// ---------------------------------------------------------------------------------------------
// "Nothing was written".

/**
 * Runs a request that must be rejected and asserts the rejection and that it wrote nothing:
 * no order, journal or event row (the worker is first allowed to settle earlier orders).
 */
export async function expectRejected(h: Harness, send: () => Promise<Res>, status: number, code: string, param?: string | null): Promise<Res> {
  await quiesce(h);
  const before = await h.counts();
  const res = await send();
  expectError(res, status, code, param);
  expect(await h.counts(), 'a rejected request writes nothing').toEqual(before);
  return res;
}

/** The Idempotency-Key is still free for this key's account and mode: a valid order with it is created, not replayed. */
export async function expectKeyFree(h: Harness, apiKey: string, idempotencyKey: string): Promise<void> {
  const res = await postOrder(h, apiKey, { product: 'stars', recipient: '@keyfree', quantity: 50 }, idempotencyKey);
  expectOk(res, 201);
  expect(res.headers['idempotent-replayed']).toBeUndefined();
}

/**
 * A rejected POST /orders: asserts the error, that nothing was written, and that the
 * Idempotency-Key it carried was not bound (the same key then creates an order).
 * The account behind `apiKey` must be a funded test account.
 */
export async function expectOrderRejected(
  h: Harness,
  apiKey: string,
  body: unknown,
  status: number,
  code: string,
  param?: string | null,
  options: { idempotencyKey?: string; headers?: Record<string, string>; raw?: { payload: string; contentType?: string } } = {},
): Promise<Res> {
  const idempotencyKey = options.idempotencyKey ?? newKey();
  const res = await expectRejected(
    h,
    () =>
      options.raw
        ? call(h, {
            method: 'POST',
            path: '/orders',
            key: apiKey,
            raw: options.raw.payload,
            headers: { ...(options.raw.contentType !== undefined && { 'content-type': options.raw.contentType }), 'idempotency-key': idempotencyKey, ...options.headers },
          })
        : postOrder(h, apiKey, body, idempotencyKey, options.headers),
    status,
    code,
    param,
  );
  await expectKeyFree(h, apiKey, idempotencyKey);
  return res;
}

// ---------------------------------------------------------------------------------------------
// Operator actions (what the dashboard / CLI would do), through the service's own database.

/** Takes the whole available balance of a mode away with a negative operator adjustment. */
export async function drain(h: Harness, accountId: string, mode: Mode): Promise<void> {
  const balance = await readBalance(h.service.db.kysely, { accountId, mode });
  if (balance && balance.available > 0n) {
    await adjustBalance(h.service.db, { accountId, mode, amount: -balance.available, reason: 'test drain' });
  }
}

export async function disableAccount(h: Harness, accountId: string): Promise<void> {
  await h.service.db.kysely.updateTable('accounts').set({ status: 'disabled' }).where('id', '=', accountId).execute();
}

/**
 * A live order, created with the service's own order-creation code as if live fulfilment were
 * available, and parked (not due). The running service has no live fulfiller yet (POST /orders with a live key is
 * 503), so this is the only way to have a live order to replay, conflict with or read.
 */
export async function seedLiveOrder(
  h: Harness,
  accountId: string,
  input: { idempotencyKey: string; product: Product; username: string; quantity: number; externalId?: string | null },
): Promise<CreateOrderResult> {
  const config = loadConfig({});
  const prices = new ListPriceSource(config.prices, new FixedRateFeed(config.tonUsdRate));
  const deps = { db: h.service.db, prices, gate: new IdempotencyGate(), liveAvailable: () => true, onCreated: () => undefined };
  // The service's worker would take the order up as soon as it is committed (its live step,
  // woken by the NOTIFY on PostgreSQL): it is stopped until the order is parked.
  await h.service.worker?.stop();
  try {
    const result = await createOrder(deps, { accountId, mode: 'live', externalId: null, ...input });
    // Park it: nothing is meant to act on it. (Left due, it makes the worker spin:
    // msUntilNextDue() counts orders of modes the worker has no step for.)
    await h.service.db.kysely.updateTable('orders').set({ next_run_at: null }).where('id', '=', result.order.id).execute();
    return result;
  } finally {
    h.service.worker?.start();
  }
}

export type { Harness, TestAccount };
