import type { Kysely } from 'kysely';
import { expect, test } from 'vitest';
import type { Engine } from '../../src/db/engine.js';
import { migrateUpTo } from '../../src/db/migrate.js';
import { useUnmigratedDatabase } from '../support/database.js';

/**
 * Migration 0016-usdt-deposits on a database written before it: every deposit is kept as a TON
 * one with every constraint (SQLite rebuilds the table), the statuses `awaiting_rate` and
 * `ignored` and the reason `unknown_jetton` are accepted, and jetton_wallets exists.
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
  returned_at: null,
  ...extra,
});

test('keeps the deposits as TON ones with their constraints, and accepts USDT rows', async () => {
  await migrateUpTo(db, engine, '0015-order-chart-amounts');
  await db.insertInto('accounts').values({ id: 'acct_a', email: 'a@example.com', status: 'active', created_at: 1 }).execute();
  const before = [
    deposit('dep_1', { status: 'credited', account_id: 'acct_a', credited_at: 30, credited_by: 'watcher', comment: 'MEMO' }),
    deposit('dep_2', { status: 'unmatched', reason: 'memo_unknown', lt: 2000, amount: 123_456_789_012 }),
    deposit('dep_3', { status: 'returned', reason: 'no_comment', lt: 3000, returned_at: 50 }),
  ];
  await db.insertInto('deposits').values(before).execute();
  await expect(
    db
      .insertInto('deposits')
      .values(deposit('dep_9', { status: 'awaiting_rate', account_id: 'acct_a' }))
      .execute(),
  ).rejects.toThrow();

  await migrateUpTo(db, engine, '0016-usdt-deposits');
  const rows = await db.selectFrom('deposits').selectAll().orderBy('id').execute();
  const norm = (r: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'bigint' || (typeof v === 'string' && /^\d+$/.test(v) && k !== 'tx_hash') ? Number(v) : v]));
  expect(rows.map(norm)).toEqual(before.map((d) => norm({ ...d, asset: 'TON', jetton_amount: null, jetton_wallet: null, rate: null, rate_at: null })));
  // A USDT deposit waiting for a rate (an account, no credit time), an ignored foreign jetton.
  await db
    .insertInto('deposits')
    .values(
      deposit('dep_4', { lt: 4000, status: 'awaiting_rate', account_id: 'acct_a', amount: 0, asset: 'USDT', jetton_amount: '25000000', jetton_wallet: `0:${'c'.repeat(64)}` }),
    )
    .execute();
  await db
    .insertInto('deposits')
    .values(deposit('dep_5', { lt: 5000, status: 'ignored', reason: 'unknown_jetton', asset: 'jetton', jetton_amount: '340282366920938463463374607431768211455' }))
    .execute();
  const big = await db.selectFrom('deposits').select('jetton_amount').where('id', '=', 'dep_5').executeTakeFirstOrThrow();
  expect(BigInt(big.jetton_amount)).toBe(2n ** 128n - 1n);
  // What held before still holds; an unknown asset is refused.
  await expect(
    db
      .insertInto('deposits')
      .values(deposit('dep_6', { status: 'credited' }))
      .execute(),
  ).rejects.toThrow();
  await expect(
    db
      .insertInto('deposits')
      .values(deposit('dep_7', { status: 'unmatched', asset: 'BTC' }))
      .execute(),
  ).rejects.toThrow();
  await expect(
    db
      .insertInto('deposits')
      .values(deposit('dep_8', { status: 'returned' }))
      .execute(),
  ).rejects.toThrow();
  await expect(
    db
      .insertInto('deposits')
      .values(deposit('dep_10', { status: 'unmatched', tx_hash: before[0]?.tx_hash }))
      .execute(),
  ).rejects.toThrow();
  await db
    .insertInto('jetton_wallets')
    .values({ owner: `0:${'a'.repeat(64)}`, master: `0:${'d'.repeat(64)}`, wallet: `0:${'c'.repeat(64)}`, computed_at: 1 })
    .execute();
  await expect(
    db
      .insertInto('jetton_wallets')
      .values({ owner: `0:${'a'.repeat(64)}`, master: `0:${'d'.repeat(64)}`, wallet: `0:${'e'.repeat(64)}`, computed_at: 2 })
      .execute(),
  ).rejects.toThrow();
});
