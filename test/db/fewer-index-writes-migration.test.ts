import type { Kysely } from 'kysely';
import { expect, test } from 'vitest';
import type { Engine } from '../../src/db/engine.js';
import { migrateUpTo } from '../../src/db/migrate.js';
import { useUnmigratedDatabase } from '../support/database.js';

/**
 * Migration 0012-fewer-index-writes on a database written before it: the events keep every row
 * (SQLite rebuilds the table to change its primary key), (order_id, seq) stays unique and
 * becomes the key, events stay immutable, and the redundant indexes are gone.
 */

let db: Kysely<any>;
let engine: Engine;
useUnmigratedDatabase((opened) => ({ db, engine } = opened));

const event = (id: string, orderId: string, seq: number) => ({
  id,
  order_id: orderId,
  seq,
  type: 'order.created',
  status: 'fulfillment_pending',
  data: '{"amount":"1"}',
  created_at: 5,
});

test('keeps the events, keys them by order and position, and drops the indexes no query needs', async () => {
  await migrateUpTo(db, engine, '0011-wallet-in-flight');
  await db.insertInto('accounts').values({ id: 'acct_a', email: 'a@example.com', status: 'active', created_at: 1 }).execute();
  const order = (id: string) => ({
    id,
    account_id: 'acct_a',
    mode: 'test',
    idempotency_key: id,
    fingerprint: 'f',
    product: 'stars',
    recipient: 'someone',
    quantity: 50,
    amount: 1,
    status: 'fulfillment_pending',
    created_at: 2,
    updated_at: 2,
  });
  await db
    .insertInto('orders')
    .values([order('ord_1'), order('ord_2')])
    .execute();
  const before = [event('evt_a', 'ord_1', 1), event('evt_b', 'ord_1', 2), event('evt_c', 'ord_2', 1)];
  await db.insertInto('order_events').values(before).execute();

  await migrateUpTo(db, engine, '0012-fewer-index-writes');
  const rows = await db.selectFrom('order_events').selectAll().orderBy('order_id').orderBy('seq').execute();
  expect(rows.map((r) => ({ ...r, seq: Number(r.seq), created_at: Number(r.created_at) }))).toEqual(before);
  // One position per order, as before; events still belong to real orders and cannot change.
  await expect(
    db
      .insertInto('order_events')
      .values(event('evt_d', 'ord_1', 2))
      .execute(),
  ).rejects.toThrow();
  await expect(
    db
      .insertInto('order_events')
      .values(event('evt_e', 'ord_nobody', 1))
      .execute(),
  ).rejects.toThrow();
  await expect(db.updateTable('order_events').set({ type: 'order.delivered' }).where('id', '=', 'evt_a').execute()).rejects.toThrow(/immutable/);
  await expect(db.deleteFrom('order_events').where('id', '=', 'evt_a').execute()).rejects.toThrow(/immutable/);
  await db
    .insertInto('order_events')
    .values(event('evt_f', 'ord_2', 2))
    .execute();

  const indexes = await indexNames();
  for (const gone of ['orders_account_created', 'orders_account_external_id', 'journal_account']) expect(indexes).not.toContain(gone);
  expect(indexes).toEqual(expect.arrayContaining(['orders_list', 'orders_list_external_id', 'journal_history']));
});

async function indexNames(): Promise<string[]> {
  if (engine.name === 'postgres') {
    const rows = await db
      .selectFrom('pg_indexes' as never)
      .select('indexname' as never)
      .execute();
    return rows.map((r) => (r as { indexname: string }).indexname);
  }
  const rows = await db.selectFrom('sqlite_master').select('name').where('type', '=', 'index').execute();
  return rows.map((r) => r.name as string);
}
