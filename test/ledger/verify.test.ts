import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { loadConfig } from '../../src/config.js';
import type { Mode } from '../../src/domain/api-key.js';
import { parseTon } from '../../src/domain/money.js';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { readBalance } from '../../src/ledger/ledger.js';
import { type Violation, verifyLedger } from '../../src/ledger/verify.js';
import { createOrder, type CreateOrderDeps } from '../../src/orders/create-order.js';
import { IdempotencyGate } from '../../src/orders/idempotency-gate.js';
import type { Order } from '../../src/orders/order.js';
import { transitionOrder } from '../../src/orders/transitions.js';
import { FixedRateFeed, ListPriceSource } from '../../src/providers/pricing/list-price-source.js';
import { cliFor, describeRun, parseJsonStdout } from '../support/cli.js';
import { type FreshDatabase, freshDatabase } from '../support/database.js';

/**
 * `ledger verify` against a real database: clean after every kind of money movement, and
 * naming the account, mode and invariant when the database is corrupted behind the
 * service's back with raw SQL. Each test has its own fresh database (SQLite, or PostgreSQL
 * when the suite runs there); no worker runs, so orders stay where the test puts them.
 */
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let fresh: FreshDatabase;
let db: Db;
let deps: CreateOrderDeps;
let keySeq = 0;

beforeEach(async () => {
  fresh = await freshDatabase();
  db = await openDatabase({ dataDir: fresh.dataDir, databaseUrl: fresh.env.DATABASE_URL });
  const config = loadConfig({});
  deps = {
    db,
    prices: new ListPriceSource(config.prices, new FixedRateFeed(config.tonUsdRate)),
    gate: new IdempotencyGate(),
    liveAvailable: () => false,
    onCreated: () => undefined,
  };
});

afterEach(async () => {
  await db?.close();
  await fresh?.dispose();
});

async function fundedAccount(mode: Mode, ton: string): Promise<string> {
  const { accountId } = await createAccount(db, `verify-${++keySeq}-${Date.now()}@example.com`);
  await adjustBalance(db, { accountId, mode, amount: parseTon(ton), reason: 'test funding' });
  return accountId;
}

async function order(accountId: string, mode: Mode, username = 'alice_test', quantity = 50): Promise<Order> {
  const { order, replayed } = await createOrder(deps, {
    accountId,
    mode,
    idempotencyKey: `key-${++keySeq}`,
    product: 'stars',
    username,
    quantity,
    externalId: null,
  });
  expect(replayed).toBe(false);
  return order;
}

async function runSql(text: string): Promise<void> {
  await sql.raw(text).execute(db.kysely);
}

/** `ledger verify --json` as a separate process on the same database file. */
async function cliVerify(): Promise<{ code: number | null; document: any }> {
  const args = ['ledger', 'verify', '--json'];
  const result = await cliFor(fresh.env)(args);
  expect(result.code === 0 || result.code === 1, describeRun(args, result)).toBe(true);
  return { code: result.code, document: parseJsonStdout(result) };
}

function expectViolation(violations: Violation[] | any[], expected: { invariant: string; account_id: string; mode: string; order_id?: string }) {
  expect(violations).toEqual(expect.arrayContaining([expect.objectContaining(expected)]));
}

/** Both the in-process check and the CLI report the violation, and the CLI exits 1. */
async function expectCorruptionReported(expected: { invariant: string; account_id: string; mode: string; order_id?: string }) {
  const violations = await verifyLedger(db.kysely);
  expectViolation(violations, expected);
  for (const v of violations) {
    expect(typeof v.message).toBe('string');
    expect(v.message.length).toBeGreaterThan(0);
  }
  const { code, document } = await cliVerify();
  expect(code).toBe(1);
  expect(document.ok).toBe(false);
  expect(Array.isArray(document.violations)).toBe(true);
  expectViolation(document.violations, expected);
  return violations;
}

describe('a clean ledger verifies', () => {
  test('empty database', async () => {
    expect(await verifyLedger(db.kysely)).toEqual([]);
  });

  test('after deposits, adjustments, and orders open, delivered and failed, in both modes', async () => {
    const a = await fundedAccount('test', '10');
    const b = await fundedAccount('live', '3');
    await adjustBalance(db, { accountId: b, mode: 'test', amount: parseTon('1.000000001'), reason: 'bonus' });
    await adjustBalance(db, { accountId: a, mode: 'test', amount: -parseTon('0.5'), reason: 'correction' });

    const open = await order(a, 'test');
    const processing = await order(a, 'test');
    const delivered = await order(a, 'test', 'bob_test', 200);
    const failedPending = await order(b, 'test');
    const failedProcessing = await order(b, 'test');
    const now = Date.now();
    expect(await transitionOrder(db.kysely, processing, { to: 'processing', nextRunAt: now + 1000, now })).toBe(true);
    expect(await transitionOrder(db.kysely, delivered, { to: 'processing', nextRunAt: now, now })).toBe(true);
    expect(await transitionOrder(db.kysely, { ...delivered, status: 'processing' }, { to: 'delivered', nextRunAt: null, now })).toBe(true);
    expect(await transitionOrder(db.kysely, failedPending, { to: 'failed', failureReason: 'recipient_invalid', message: 'x', nextRunAt: null, now })).toBe(true);
    expect(await transitionOrder(db.kysely, failedProcessing, { to: 'processing', nextRunAt: now, now })).toBe(true);
    expect(
      await transitionOrder(db.kysely, { ...failedProcessing, status: 'processing' }, { to: 'failed', failureReason: 'upstream_error', message: 'x', nextRunAt: null, now }),
    ).toBe(true);

    // The balances the ledger should show: a = 10 − 0.5 − 0.25 (open) − 0.25 (processing) − 1 (delivered).
    expect(await readBalance(db.kysely, { accountId: a, mode: 'test' })).toEqual({ available: parseTon('8'), reserved: parseTon('0.5') });
    expect(await readBalance(db.kysely, { accountId: b, mode: 'test' })).toEqual({ available: parseTon('1.000000001'), reserved: 0n });
    expect(open.status).toBe('fulfillment_pending');

    expect(await verifyLedger(db.kysely)).toEqual([]);
    const { code, document } = await cliVerify();
    expect(document).toEqual({ ok: true });
    expect(code).toBe(0);
  });
});

describe('corruption is reported with the account, the mode and the invariant', () => {
  test('(a) available changed without a journal row → journal_matches_available', async () => {
    const a = await fundedAccount('test', '2');
    const other = await fundedAccount('test', '2');
    await order(a, 'test');
    expect(await verifyLedger(db.kysely)).toEqual([]);

    await runSql(`update balances set available = available + 1 where account_id = '${a}' and mode = 'test'`);

    const violations = await expectCorruptionReported({ invariant: 'journal_matches_available', account_id: a, mode: 'test' });
    // Only the corrupted balance is named: not the other mode, not the other account.
    for (const v of violations) expect([v.account_id, v.mode]).toEqual([a, 'test']);
    expect(violations.some((v) => v.account_id === other)).toBe(false);
  });

  test('(a′) the same on the live balance names mode live', async () => {
    const a = await fundedAccount('live', '2');
    await runSql(`update balances set available = available + 1 where account_id = '${a}' and mode = 'live'`);
    const violations = await expectCorruptionReported({ invariant: 'journal_matches_available', account_id: a, mode: 'live' });
    expect(violations.every((v) => v.mode === 'live')).toBe(true);
  });

  test('(a″) a day of the balance chart rollup changed → balance_days_match_journal', async () => {
    const a = await fundedAccount('test', '2');
    expect(await verifyLedger(db.kysely)).toEqual([]);
    await runSql(`update balance_days set available_net = available_net + 1 where account_id = '${a}' and mode = 'test'`);
    const violations = await expectCorruptionReported({ invariant: 'balance_days_match_journal', account_id: a, mode: 'test' });
    expect(violations.map((v) => v.invariant)).toEqual(['balance_days_match_journal']);
  });

  test('(b) a processing order without its reserve → reserved_matches_open_orders', async () => {
    const a = await fundedAccount('test', '2');
    expect(await verifyLedger(db.kysely)).toEqual([]);
    const now = Date.now();
    await runSql(
      `insert into orders (id, account_id, mode, idempotency_key, fingerprint, product, recipient, quantity, amount, external_id, status, failure_reason, created_at, updated_at, next_run_at)
       values ('ord_forged0000000000000000', '${a}', 'test', 'forged', '[]', 'stars', 'mallory', 50, 250000000, null, 'processing', null, ${now}, ${now}, null)`,
    );
    await expectCorruptionReported({ invariant: 'reserved_matches_open_orders', account_id: a, mode: 'test' });
    // The forged order has no journal rows at all: its own check names it too.
    await expectCorruptionReported({ invariant: 'order_journal_matches_status', account_id: a, mode: 'test', order_id: 'ord_forged0000000000000000' });
  });

  test('(c) an order set to delivered without its debit → order journal and reserved mismatch', async () => {
    const a = await fundedAccount('test', '2');
    const created = await order(a, 'test');
    expect(await verifyLedger(db.kysely)).toEqual([]);

    await runSql(`update orders set status = 'delivered', next_run_at = null where id = '${created.id}'`);

    await expectCorruptionReported({ invariant: 'order_journal_matches_status', account_id: a, mode: 'test', order_id: created.id });
    // The reserve is still on the balance while no order is open any more.
    await expectCorruptionReported({ invariant: 'reserved_matches_open_orders', account_id: a, mode: 'test' });
  });

  test('(d) reserved changed without a journal row → journal_matches_reserved', async () => {
    const a = await fundedAccount('test', '2');
    await order(a, 'test');
    await runSql(`update balances set reserved = reserved + 5 where account_id = '${a}' and mode = 'test'`);
    await expectCorruptionReported({ invariant: 'journal_matches_reserved', account_id: a, mode: 'test' });
  });
});

describe('the database itself protects the ledger', () => {
  test('journal rows are immutable: UPDATE and DELETE raise, and nothing changes', async () => {
    const a = await fundedAccount('test', '2');
    await order(a, 'test');
    const before = await db.kysely.selectFrom('journal').selectAll().orderBy('id').execute();
    expect(before.length).toBe(2);

    await expect(runSql(`update journal set available_delta = available_delta + 1`)).rejects.toThrow(/immutable/);
    await expect(runSql(`update journal set reason = 'edited' where account_id = '${a}'`)).rejects.toThrow(/immutable/);
    await expect(runSql(`delete from journal`)).rejects.toThrow(/immutable/);

    expect(await db.kysely.selectFrom('journal').selectAll().orderBy('id').execute()).toEqual(before);
    expect(await verifyLedger(db.kysely)).toEqual([]);
  });

  test('order events are immutable too', async () => {
    const a = await fundedAccount('test', '2');
    const created = await order(a, 'test');
    await expect(runSql(`update order_events set type = 'order.delivered' where order_id = '${created.id}'`)).rejects.toThrow(/immutable/);
    await expect(runSql(`delete from order_events where order_id = '${created.id}'`)).rejects.toThrow(/immutable/);
    const events = await db.kysely.selectFrom('order_events').select(['type']).where('order_id', '=', created.id).execute();
    expect(events.map((e) => e.type)).toEqual(['order.created']);
  });

  test('the CHECK constraint refuses a negative available or reserved balance', async () => {
    const a = await fundedAccount('test', '1');
    await expect(runSql(`update balances set available = -1 where account_id = '${a}' and mode = 'test'`)).rejects.toThrow(/CHECK constraint/i);
    await expect(runSql(`update balances set available = available - 1000000001 where account_id = '${a}' and mode = 'test'`)).rejects.toThrow(/CHECK constraint/i);
    await expect(runSql(`update balances set reserved = -1 where account_id = '${a}' and mode = 'live'`)).rejects.toThrow(/CHECK constraint/i);
    expect(await readBalance(db.kysely, { accountId: a, mode: 'test' })).toEqual({ available: parseTon('1'), reserved: 0n });
    expect(await verifyLedger(db.kysely)).toEqual([]);
  });
});
