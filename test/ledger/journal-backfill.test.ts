import { type Kysely, sql } from 'kysely';
import { expect, test } from 'vitest';
import type { Engine } from '../../src/db/engine.js';
import { migrateToLatest, migrateUpTo } from '../../src/db/migrate.js';
import type { Database } from '../../src/db/schema.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { useUnmigratedDatabase } from '../support/database.js';

/**
 * Migration 0004 on a database written before it: journal rows get their per-balance `seq` and
 * `balance_after` from running sums, balances their journal_seq, and the journal stays immutable.
 */

let db: Kysely<any>;
let engine: Engine;
useUnmigratedDatabase((opened) => ({ db, engine } = opened));

test('backfills seq and balance_after for rows written before it', async () => {
  await migrateUpTo(db, engine, '0003-operator');
  await db
    .insertInto('accounts')
    .values([
      { id: 'acct_a', email: 'a@example.com', status: 'active', created_at: 1 },
      { id: 'acct_b', email: 'b@example.com', status: 'active', created_at: 1 },
    ])
    .execute();
  // What the old move() left: balances and journal rows without the new columns.
  await db
    .insertInto('balances')
    .values([
      { account_id: 'acct_a', mode: 'test', available: 7, reserved: 2 },
      { account_id: 'acct_a', mode: 'live', available: 0, reserved: 0 },
      { account_id: 'acct_b', mode: 'test', available: 5, reserved: 0 },
      { account_id: 'acct_b', mode: 'live', available: 0, reserved: 0 },
    ])
    .execute();
  const row = (id: string, account: string, kind: string, a: number, r: number, at: number, order: string | null = null) => ({
    id,
    account_id: account,
    mode: 'test',
    kind,
    order_id: order,
    available_delta: a,
    reserved_delta: r,
    reason: null,
    created_at: at,
  });
  await db
    .insertInto('orders')
    .values({
      id: 'ord_1',
      account_id: 'acct_a',
      mode: 'test',
      idempotency_key: 'k',
      fingerprint: 'f',
      product: 'stars',
      recipient: 'durov',
      quantity: 50,
      amount: 3,
      external_id: null,
      status: 'delivered',
      created_at: 20,
      updated_at: 30,
      attempts: 0,
    })
    .execute();
  await db
    .insertInto('orders')
    .values({
      id: 'ord_2',
      account_id: 'acct_a',
      mode: 'test',
      idempotency_key: 'k2',
      fingerprint: 'f',
      product: 'stars',
      recipient: 'durov',
      quantity: 50,
      amount: 2,
      external_id: null,
      status: 'processing',
      created_at: 40,
      updated_at: 40,
      attempts: 0,
    })
    .execute();
  await db
    .insertInto('journal')
    .values([
      row('jrn_c', 'acct_a', 'reserve', -3, 3, 20, 'ord_1'),
      row('jrn_a', 'acct_a', 'deposit', 10, 0, 10),
      row('jrn_d', 'acct_a', 'debit', 0, -3, 30, 'ord_1'),
      row('jrn_e', 'acct_a', 'reserve', -2, 2, 40, 'ord_2'),
      row('jrn_b', 'acct_b', 'adjustment', 5, 0, 10),
      row('jrn_f', 'acct_a', 'adjustment', 2, 0, 50),
    ])
    .execute();

  await migrateToLatest(db, engine);
  const typed = db as unknown as Kysely<Database>;
  const journal = await typed.selectFrom('journal').select(['id', 'seq', 'balance_available', 'balance_reserved']).orderBy('account_id').orderBy('seq').execute();
  expect(journal.map((j) => [j.id, Number(j.seq), Number(j.balance_available), Number(j.balance_reserved)])).toEqual([
    ['jrn_a', 1, 10, 0],
    ['jrn_c', 2, 7, 3],
    ['jrn_d', 3, 7, 0],
    ['jrn_e', 4, 5, 2],
    ['jrn_f', 5, 7, 2],
    ['jrn_b', 1, 5, 0],
  ]);
  const balances = await typed.selectFrom('balances').select(['account_id', 'mode', 'journal_seq']).orderBy('account_id').orderBy('mode').execute();
  expect(balances.map((b) => [b.account_id, b.mode, Number(b.journal_seq)])).toEqual([
    ['acct_a', 'live', 0],
    ['acct_a', 'test', 5],
    ['acct_b', 'live', 0],
    ['acct_b', 'test', 1],
  ]);
  expect(await verifyLedger(typed)).toEqual([]);
  // Still append-only.
  await expect(sql`update journal set reason = 'edited'`.execute(db)).rejects.toThrow(/immutable/);
  await expect(sql`delete from journal`.execute(db)).rejects.toThrow(/immutable/);
});
