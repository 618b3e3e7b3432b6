import type { Kysely } from 'kysely';
import { expect, test } from 'vitest';
import type { Engine } from '../../src/db/engine.js';
import { migrateToLatest, migrateUpTo } from '../../src/db/migrate.js';
import { MS_PER_DAY } from '../../src/domain/time.js';
import { availableAtDayEnds } from '../../src/ledger/balance-days.js';
import { applyMovement } from '../../src/ledger/ledger.js';
import { orderDays } from '../../src/orders/order-days.js';
import { useUnmigratedDatabase } from '../support/database.js';

/**
 * Migration 0018-daily-rollups on a database written before it: order_days holds the final
 * orders already there by day of creation and status, balance_days the journal's available
 * changes by day, both per account and mode; journal_daily is gone; movements written
 * afterwards add to the backfilled rows.
 */
let db: Kysely<any>;
let engine: Engine;
useUnmigratedDatabase((opened) => ({ db, engine } = opened));

const DAY = MS_PER_DAY;
const d = 20_000; // a day number: 2024-10-04
let orderNo = 0;
const order = (account: string, mode: 'live' | 'test', status: string, amount: number, createdAt: number) => ({
  id: `ord_m${++orderNo}`,
  account_id: account,
  mode,
  idempotency_key: `k${orderNo}`,
  fingerprint: '[]',
  product: 'stars',
  recipient: 'alice',
  quantity: 50,
  amount,
  external_id: null,
  status,
  created_at: createdAt,
  updated_at: createdAt,
  next_run_at: null,
  ...(engine.name === 'sqlite' ? { order_no: orderNo } : {}),
});
let seq = 0;
const entry = (account: string, mode: 'live' | 'test', kind: string, available: number, reserved: number, createdAt: number) => ({
  id: `jrn_${String(++seq).padStart(22, 'M')}`,
  account_id: account,
  mode,
  kind,
  order_id: null,
  available_delta: available,
  reserved_delta: reserved,
  reason: null,
  created_at: createdAt,
  seq,
  balance_available: 0,
  balance_reserved: 0,
});

test('backfills the rollups from the orders and the journal, drops journal_daily, and keeps adding', async () => {
  await migrateUpTo(db, engine, '0015-order-chart-amounts');
  for (const id of ['acct_a', 'acct_b'])
    await db
      .insertInto('accounts')
      .values({ id, email: `${id}@example.com`, status: 'active', created_at: 1 })
      .execute();
  await db
    .insertInto('balances')
    .values([
      { account_id: 'acct_a', mode: 'test', available: 660, reserved: 40, journal_seq: 5 },
      { account_id: 'acct_a', mode: 'live', available: 7, reserved: 0, journal_seq: 1 },
      { account_id: 'acct_b', mode: 'test', available: 0, reserved: 0, journal_seq: 0 },
    ])
    .execute();
  await db
    .insertInto('orders')
    .values([
      order('acct_a', 'test', 'delivered', 100, d * DAY + 5),
      order('acct_a', 'test', 'delivered', 200, d * DAY + DAY - 1),
      order('acct_a', 'test', 'failed', 50, d * DAY + 7),
      order('acct_a', 'test', 'delivered', 300, (d + 1) * DAY),
      order('acct_a', 'test', 'processing', 40, (d + 1) * DAY + 9),
      order('acct_a', 'live', 'failed', 10, d * DAY),
      order('acct_b', 'test', 'fulfillment_pending', 20, d * DAY),
    ])
    .execute();
  await db
    .insertInto('journal')
    .values([
      entry('acct_a', 'test', 'deposit', 1000, 0, (d - 3) * DAY),
      entry('acct_a', 'test', 'reserve', -350, 350, d * DAY + 5),
      entry('acct_a', 'test', 'debit', 0, -300, d * DAY + 6),
      entry('acct_a', 'test', 'release', 50, -50, d * DAY + 8),
      entry('acct_a', 'test', 'reserve', -40, 40, (d + 1) * DAY + 9),
      entry('acct_a', 'live', 'adjustment', 7, 0, (d + 1) * DAY),
    ])
    .execute();

  await migrateToLatest(db, engine);

  const rows = await db.selectFrom('order_days').selectAll().orderBy('account_id').orderBy('mode').orderBy('day').execute();
  expect(rows.map((r) => [r.account_id, r.mode, Number(r.day), Number(r.delivered), Number(r.delivered_amount), Number(r.failed), Number(r.failed_amount)])).toEqual([
    ['acct_a', 'live', d, 0, 0, 1, 10],
    ['acct_a', 'test', d, 2, 300, 1, 50],
    ['acct_a', 'test', d + 1, 1, 300, 0, 0],
  ]);
  const nets = await db.selectFrom('balance_days').selectAll().orderBy('account_id').orderBy('mode').orderBy('day').execute();
  // The debit changes only the reserved balance: no row of its own.
  expect(nets.map((r) => [r.account_id, r.mode, Number(r.day), Number(r.available_net)])).toEqual([
    ['acct_a', 'live', d + 1, 7],
    ['acct_a', 'test', d - 3, 1000],
    ['acct_a', 'test', d, -300],
    ['acct_a', 'test', d + 1, -40],
  ]);
  expect(await availableAtDayEnds(db, { accountId: 'acct_a', mode: 'test' }, d - 4, 6)).toEqual([0n, 1000n, 1000n, 1000n, 700n, 660n]);

  // Movements after the migration add to the same rows.
  await applyMovement(db, { accountId: 'acct_a', mode: 'test' }, { kind: 'release', amount: 40n, now: (d + 1) * DAY + 20 });
  await applyMovement(db, { accountId: 'acct_a', mode: 'test' }, { kind: 'adjustment', amount: -10n, reason: 'fee', now: (d + 2) * DAY });
  expect(await availableAtDayEnds(db, { accountId: 'acct_a', mode: 'test' }, d - 4, 7)).toEqual([0n, 1000n, 1000n, 1000n, 700n, 700n, 690n]);
  expect((await orderDays(db, { accountId: 'acct_a', mode: 'test' }, d, d + 1)).sort((x, y) => x.day - y.day)).toEqual([
    { day: d, delivered: 2, deliveredAmount: 300n, failed: 1, failedAmount: 50n },
    { day: d + 1, delivered: 1, deliveredAmount: 300n, failed: 0, failedAmount: 0n },
  ]);

  expect(await indexesOf('journal')).not.toContain('journal_daily');
  // One row per account, mode and day.
  await expect(db.insertInto('balance_days').values({ account_id: 'acct_a', mode: 'test', day: d, available_net: 1 }).execute()).rejects.toThrow();
  await expect(db.insertInto('order_days').values({ account_id: 'acct_a', mode: 'test', day: d }).execute()).rejects.toThrow();
});

async function indexesOf(table: string): Promise<string[]> {
  if (engine.name === 'postgres') {
    const rows = await db
      .selectFrom('pg_indexes' as never)
      .select('indexname' as never)
      .where('tablename' as never, '=', table as never)
      .execute();
    return rows.map((r) => (r as { indexname: string }).indexname);
  }
  const rows = await db.selectFrom('sqlite_master').select('name').where('type', '=', 'index').where('tbl_name', '=', table).execute();
  return rows.map((r) => r.name as string);
}
