import type { Kysely } from 'kysely';
import { expect, test } from 'vitest';
import type { Engine } from '../../src/db/engine.js';
import { migrateUpTo } from '../../src/db/migrate.js';
import { useUnmigratedDatabase } from '../support/database.js';

/**
 * Migration 0010-deposit-returns on a database written before it: the deposits keep every
 * row and constraint (SQLite rebuilds the table to change its status check), and gain the
 * status `returned` with its `returned_at`.
 */

let db: Kysely<any>;
let engine: Engine;
useUnmigratedDatabase((opened) => ({ db, engine } = opened));

const deposit = (id: string, extra: Record<string, unknown>) => ({
  id,
  tx_hash: id.replace('dep_', '').padStart(64, '0'),
  lt: 1000,
  address: `0:${'a'.repeat(64)}`,
  sender: `0:${'b'.repeat(64)}`,
  amount: 5_000_000_000,
  comment: null,
  chain_time: 10,
  created_at: 20,
  credited_at: null,
  credited_by: null,
  reason: null,
  account_id: null,
  ...extra,
});

test('keeps the deposits and their constraints, and accepts returned with returned_at only', async () => {
  await migrateUpTo(db, engine, '0009-deposit-walks');
  await db.insertInto('accounts').values({ id: 'acct_a', email: 'a@example.com', status: 'active', created_at: 1 }).execute();
  const before = [
    deposit('dep_1', { status: 'credited', account_id: 'acct_a', credited_at: 30, credited_by: 'watcher', comment: 'MEMO' }),
    deposit('dep_2', { status: 'unmatched', reason: 'memo_unknown', lt: 2000, amount: 123_456_789_012 }),
  ];
  await db.insertInto('deposits').values(before).execute();
  await expect(
    db
      .insertInto('deposits')
      .values(deposit('dep_3', { status: 'returned' }))
      .execute(),
  ).rejects.toThrow();

  await migrateUpTo(db, engine, '0010-deposit-returns');
  const rows = await db.selectFrom('deposits').selectAll().orderBy('id').execute();
  expect(
    rows.map((r) => ({
      ...r,
      lt: Number(r.lt),
      amount: String(r.amount),
      chain_time: Number(r.chain_time),
      created_at: Number(r.created_at),
      credited_at: r.credited_at === null ? null : Number(r.credited_at),
    })),
  ).toEqual(before.map((d) => ({ ...d, amount: String(d.amount), returned_at: null })));
  // returned needs returned_at, and returned_at needs returned.
  await expect(db.updateTable('deposits').set({ status: 'returned' }).where('id', '=', 'dep_2').execute()).rejects.toThrow();
  await expect(db.updateTable('deposits').set({ returned_at: 40 }).where('id', '=', 'dep_2').execute()).rejects.toThrow();
  await db.updateTable('deposits').set({ status: 'returned', returned_at: 40 }).where('id', '=', 'dep_2').execute();
  // What 0005 enforced still holds: known statuses, unique hashes, credited ⇔ account, real accounts.
  await expect(db.updateTable('deposits').set({ status: 'bounced' }).where('id', '=', 'dep_2').execute()).rejects.toThrow();
  await expect(
    db
      .insertInto('deposits')
      .values(deposit('dep_4', { status: 'unmatched', tx_hash: before[0]?.tx_hash }))
      .execute(),
  ).rejects.toThrow();
  await expect(
    db
      .insertInto('deposits')
      .values(deposit('dep_5', { status: 'credited' }))
      .execute(),
  ).rejects.toThrow();
  await expect(
    db
      .insertInto('deposits')
      .values(deposit('dep_6', { status: 'unmatched', account_id: 'acct_nobody' }))
      .execute(),
  ).rejects.toThrow();
  await expect(
    db
      .insertInto('deposits')
      .values(deposit('dep_7', { status: 'unmatched', amount: -1 }))
      .execute(),
  ).rejects.toThrow();
  // And the indexes are back.
  const indexes = engine.name === 'postgres' ? await pgIndexes() : await sqliteIndexes();
  expect(indexes).toEqual(expect.arrayContaining(['deposits_account', 'deposits_status']));
});

async function pgIndexes(): Promise<string[]> {
  const rows = await db
    .selectFrom('pg_indexes' as never)
    .select('indexname' as never)
    .where('tablename' as never, '=', 'deposits' as never)
    .execute();
  return rows.map((r) => (r as { indexname: string }).indexname);
}
async function sqliteIndexes(): Promise<string[]> {
  const rows = await db.selectFrom('sqlite_master').select('name').where('type', '=', 'index').where('tbl_name', '=', 'deposits').execute();
  return rows.map((r) => r.name as string);
}
