import type { Kysely } from 'kysely';
import { expect, test } from 'vitest';
import type { Engine } from '../../src/db/engine.js';
import { migrateToLatest, migrateUpTo } from '../../src/db/migrate.js';
import { applyMovement } from '../../src/ledger/ledger.js';
import { findEntry } from '../../src/ledger/history.js';
import { useUnmigratedDatabase } from '../support/database.js';

/**
 * Migration 0014-journal-entry-ids on a database written before it: entries keep their ids and
 * are still found as cursors (through journal_legacy_id), entries written afterwards carry
 * their seq and are found through journal_history, the journal stays immutable, and no index
 * covers every id any more.
 */

let db: Kysely<any>;
let engine: Engine;
useUnmigratedDatabase((opened) => ({ db, engine } = opened));

const legacyId = (n: number) => `jrn_${String(n).padStart(22, 'L')}`;
const movement = (id: string, seq: number, available: number) => ({
  id,
  account_id: 'acct_a',
  mode: 'test',
  kind: 'deposit',
  order_id: null,
  available_delta: available,
  reserved_delta: 0,
  reason: null,
  created_at: 3,
  seq,
  balance_available: 10 * seq,
  balance_reserved: 0,
});
const ref = { accountId: 'acct_a', mode: 'test' as const };

test('keeps the older ids findable and gives new entries ids that carry their seq', async () => {
  await migrateUpTo(db, engine, '0013-order-numbers');
  await db.insertInto('accounts').values({ id: 'acct_a', email: 'a@example.com', status: 'active', created_at: 1 }).execute();
  await db
    .insertInto('balances')
    .values([
      { account_id: 'acct_a', mode: 'test', available: 20, reserved: 0, journal_seq: 2 },
      { account_id: 'acct_a', mode: 'live', available: 0, reserved: 0, journal_seq: 0 },
    ])
    .execute();
  await db
    .insertInto('journal')
    .values([movement(legacyId(1), 1, 10), movement(legacyId(2), 2, 10)])
    .execute();

  await migrateToLatest(db, engine);

  const rows = await db.selectFrom('journal').select(['id', 'seq', 'balance_available']).orderBy('seq').execute();
  expect(rows.map((r) => [r.id, Number(r.seq), Number(r.balance_available)])).toEqual([
    [legacyId(1), 1, 10],
    [legacyId(2), 2, 20],
  ]);
  expect((await findEntry(db, legacyId(2), ref))?.seq).toBe(2n);
  expect(await findEntry(db, legacyId(2), { ...ref, mode: 'live' })).toBeUndefined();

  const entry = await applyMovement(db, ref, { kind: 'deposit', amount: 5n, now: 9 });
  expect(entry?.id).toMatch(/^jrn_[0-9A-Za-z]{22}3$/);
  const { crossedBelow: _crossed, ...written } = entry!;
  expect(await findEntry(db, entry!.id, ref)).toEqual(written);
  // The seq alone does not find an entry: the whole id must match.
  expect(await findEntry(db, `${legacyId(0)}3`, ref)).toBeUndefined();

  // Older ids stay unique; the journal stays immutable.
  await expect(
    db
      .insertInto('journal')
      .values(movement(legacyId(1), 7, 10))
      .execute(),
  ).rejects.toThrow();
  await expect(db.updateTable('journal').set({ reason: 'x' }).where('id', '=', legacyId(1)).execute()).rejects.toThrow(/immutable/);
  await expect(db.deleteFrom('journal').where('id', '=', entry!.id).execute()).rejects.toThrow(/immutable/);
  // Two movements of one balance still cannot share a seq.
  await expect(
    db
      .insertInto('journal')
      .values(movement(`${legacyId(5)}3`, 3, 10))
      .execute(),
  ).rejects.toThrow();

  // journal_daily, the balance chart's from migration 0015 to 0018, is gone again.
  expect(await journalIndexes()).toEqual(['journal_history', 'journal_legacy_id', 'journal_order_no']);
});

/** The journal's indexes, the one a primary key brings included. */
async function journalIndexes(): Promise<string[]> {
  if (engine.name === 'postgres') {
    const rows = await db
      .selectFrom('pg_indexes' as never)
      .select('indexname' as never)
      .where('tablename' as never, '=', 'journal' as never)
      .execute();
    return rows.map((r) => (r as { indexname: string }).indexname).sort();
  }
  const rows = await db.selectFrom('sqlite_master').select('name').where('type', '=', 'index').where('tbl_name', '=', 'journal').execute();
  return rows.map((r) => r.name as string).sort();
}
