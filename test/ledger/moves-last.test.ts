import { sql } from 'kysely';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { loadConfig } from '../../src/config.js';
import { parseTon } from '../../src/domain/money.js';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { readBalance } from '../../src/ledger/ledger.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createOrder } from '../../src/orders/create-order.js';
import { IdempotencyGate } from '../../src/orders/idempotency-gate.js';
import type { Order } from '../../src/orders/order.js';
import { LedgerInvariantError, transitionOrder, withLedgerMovesLast } from '../../src/orders/transitions.js';
import { FixedRateFeed, ListPriceSource } from '../../src/providers/pricing/list-price-source.js';
import { type FreshDatabase, freshDatabase, testEngine } from '../support/database.js';

/**
 * A worker's batch of transitions holds its ledger moves back until every order's status and
 * events are written (so that on PostgreSQL the balance rows stay locked for the moves alone).
 */
let fresh: FreshDatabase;
let db: Db;
let accountId: string;

beforeEach(async () => {
  fresh = await freshDatabase();
  db = await openDatabase({ dataDir: fresh.dataDir, databaseUrl: fresh.env.DATABASE_URL });
  ({ accountId } = await createAccount(db, 'moves@example.com'));
  await adjustBalance(db, { accountId, mode: 'test', amount: parseTon('100'), reason: 'test funding' });
});

afterEach(async () => {
  await db.close();
  await fresh.dispose();
});

/** Three orders of the account, moved to processing (their reservations made). */
async function processingOrders(): Promise<Order[]> {
  const config = loadConfig({});
  const deps = {
    db,
    prices: new ListPriceSource(config.prices, new FixedRateFeed(config.tonUsdRate)),
    gate: new IdempotencyGate(),
    liveAvailable: () => false,
    onCreated: () => undefined,
  };
  const orders: Order[] = [];
  for (const key of ['k1', 'k2', 'k3']) {
    const { order } = await createOrder(deps, { accountId, mode: 'test', idempotencyKey: key, product: 'stars', username: 'alice_test', quantity: 50, externalId: null });
    expect(await transitionOrder(db.kysely, order, { to: 'processing', nextRunAt: Date.now(), now: Date.now() })).toBe(true);
    orders.push({ ...order, status: 'processing' });
  }
  return orders;
}

const settlements = (k: typeof db.kysely) => k.selectFrom('journal').select(['order_id', 'kind']).where('kind', 'in', ['debit', 'release']).orderBy('seq').execute();

test(`a batch's debits and releases come after all of its status changes and events, in the order asked for (${testEngine})`, async () => {
  const [first, second, third] = await processingOrders();
  const before = (await readBalance(db.kysely, { accountId, mode: 'test' }))!;
  await db.kysely.transaction().execute((tx) =>
    withLedgerMovesLast(tx, async () => {
      for (const order of [first!, second!]) expect(await transitionOrder(tx, order, { to: 'delivered', nextRunAt: null, now: Date.now() })).toBe(true);
      const failure = { to: 'failed', failureReason: 'upstream_error', message: 'x', nextRunAt: null, now: Date.now() } as const;
      expect(await transitionOrder(tx, third!, failure)).toBe(true);
      // All three orders are final, with their events, and nothing is settled yet.
      const final = await tx.selectFrom('order_events').select('order_id').where('type', 'in', ['order.delivered', 'order.failed']).execute();
      expect(final).toHaveLength(3);
      expect(await settlements(tx)).toEqual([]);
    }),
  );
  // One balance: settled together (one statement on PostgreSQL), each with its journal row, in order.
  expect(await settlements(db.kysely)).toEqual([
    { order_id: first!.id, kind: 'debit' },
    { order_id: second!.id, kind: 'debit' },
    { order_id: third!.id, kind: 'release' },
  ]);
  const after = (await readBalance(db.kysely, { accountId, mode: 'test' }))!;
  expect(after.reserved).toBe(before.reserved - first!.amount - second!.amount - third!.amount);
  expect(after.available).toBe(before.available + third!.amount);
  // Every journal row's running balance and position agree with the movements up to it.
  const rows = await db.kysely
    .selectFrom('journal')
    .select(['seq', 'available_delta', 'reserved_delta', 'balance_available', 'balance_reserved'])
    .where('account_id', '=', accountId)
    .where('mode', '=', 'test')
    .orderBy('seq')
    .execute();
  let available = 0n;
  let reserved = 0n;
  rows.forEach((row, i) => {
    available += BigInt(row.available_delta);
    reserved += BigInt(row.reserved_delta);
    expect([BigInt(row.seq), BigInt(row.balance_available), BigInt(row.balance_reserved)]).toEqual([BigInt(i + 1), available, reserved]);
  });
  expect(await verifyLedger(db.kysely)).toEqual([]);
});

test(`a refused move fails the batch and rolls all of it back (${testEngine})`, async () => {
  const orders = await processingOrders();
  // The reservation is gone behind the service's back: the debit cannot be covered.
  await sql`update balances set reserved = 0 where account_id = ${accountId} and mode = 'test'`.execute(db.kysely);
  await expect(
    db.kysely.transaction().execute((tx) =>
      withLedgerMovesLast(tx, async () => {
        for (const order of orders) await transitionOrder(tx, order, { to: 'delivered', nextRunAt: null, now: Date.now() });
      }),
    ),
  ).rejects.toBeInstanceOf(LedgerInvariantError);
  const statuses = await db.kysely.selectFrom('orders').select('status').where('account_id', '=', accountId).execute();
  expect(statuses.map((row) => row.status)).toEqual(['processing', 'processing', 'processing']);
  expect(await db.kysely.selectFrom('order_events').select('id').where('type', '=', 'order.delivered').execute()).toEqual([]);
  // Nor do the orders count as delivered in their day (order_days, written in the same transaction).
  expect(await db.kysely.selectFrom('order_days').select('delivered').where('account_id', '=', accountId).execute()).toEqual([]);
});
