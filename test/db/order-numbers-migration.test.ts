import type { Kysely } from 'kysely';
import { expect, test } from 'vitest';
import type { Engine } from '../../src/db/engine.js';
import { migrateToLatest, migrateUpTo } from '../../src/db/migrate.js';
import { nextOrderNumber } from '../../src/orders/order-store.js';
import { useUnmigratedDatabase } from '../support/database.js';

/**
 * Migration 0013-order-numbers on a database written before it: every order gets its own
 * number, each event and ledger movement its order's, events are keyed by (order_no, seq), both
 * tables stay immutable, and orders created afterwards are numbered after the existing ones.
 */

let db: Kysely<any>;
let engine: Engine;
useUnmigratedDatabase((opened) => ({ db, engine } = opened));

const order = (id: string) => ({
  id,
  account_id: 'acct_a',
  mode: 'test',
  idempotency_key: id,
  fingerprint: 'f',
  product: 'stars',
  recipient: 'someone',
  quantity: 50,
  amount: 3,
  status: 'delivered',
  created_at: 2,
  updated_at: 2,
});
const event = (id: string, orderId: string, seq: number) => ({ id, order_id: orderId, seq, type: 'order.created', status: 'fulfillment_pending', data: '{}', created_at: 5 });
const movement = (id: string, seq: number, kind: string, available: number, reserved: number, orderId: string | null) => ({
  id,
  account_id: 'acct_a',
  mode: 'test',
  kind,
  order_id: orderId,
  available_delta: available,
  reserved_delta: reserved,
  reason: null,
  created_at: 3,
  seq,
  balance_available: 0,
  balance_reserved: 0,
});

test('numbers the orders and keys their events and movements by the number', async () => {
  await migrateUpTo(db, engine, '0012-fewer-index-writes');
  await db.insertInto('accounts').values({ id: 'acct_a', email: 'a@example.com', status: 'active', created_at: 1 }).execute();
  await db
    .insertInto('orders')
    .values([order('ord_1'), order('ord_2'), order('ord_3')])
    .execute();
  await db
    .insertInto('order_events')
    .values([event('evt_a', 'ord_1', 1), event('evt_b', 'ord_1', 2), event('evt_c', 'ord_2', 1)])
    .execute();
  await db
    .insertInto('journal')
    .values([
      movement('jrn_a', 1, 'deposit', 10, 0, null),
      movement('jrn_b', 2, 'reserve', -3, 3, 'ord_1'),
      movement('jrn_c', 3, 'debit', 0, -3, 'ord_1'),
      movement('jrn_d', 4, 'reserve', -3, 3, 'ord_2'),
    ])
    .execute();

  await migrateToLatest(db, engine);
  const numbers = new Map((await db.selectFrom('orders').select(['id', 'order_no']).execute()).map((r) => [r.id as string, Number(r.order_no)]));
  expect(new Set(numbers.values()).size).toBe(3);
  const events = await db.selectFrom('order_events').select(['id', 'order_id', 'order_no', 'seq']).orderBy('id').execute();
  expect(events.map((e) => [e.id, e.order_id, Number(e.order_no), Number(e.seq)])).toEqual([
    ['evt_a', 'ord_1', numbers.get('ord_1'), 1],
    ['evt_b', 'ord_1', numbers.get('ord_1'), 2],
    ['evt_c', 'ord_2', numbers.get('ord_2'), 1],
  ]);
  const journal = await db.selectFrom('journal').select(['id', 'order_no']).orderBy('id').execute();
  expect(journal.map((j) => [j.id, j.order_no === null ? null : Number(j.order_no)])).toEqual([
    ['jrn_a', null],
    ['jrn_b', numbers.get('ord_1')],
    ['jrn_c', numbers.get('ord_1')],
    ['jrn_d', numbers.get('ord_2')],
  ]);

  // (order_no, seq) is the key; events and movements still cannot change.
  await expect(
    db
      .insertInto('order_events')
      .values({ ...event('evt_d', 'ord_1', 2), order_no: numbers.get('ord_1') })
      .execute(),
  ).rejects.toThrow();
  await expect(db.updateTable('order_events').set({ type: 'order.delivered' }).where('id', '=', 'evt_a').execute()).rejects.toThrow(/immutable/);
  await expect(db.deleteFrom('order_events').where('id', '=', 'evt_a').execute()).rejects.toThrow(/immutable/);
  await expect(db.updateTable('journal').set({ reason: 'x' }).where('id', '=', 'jrn_a').execute()).rejects.toThrow(/immutable/);
  await expect(db.deleteFrom('journal').where('id', '=', 'jrn_a').execute()).rejects.toThrow(/immutable/);
  // Two orders cannot share a number.
  await expect(
    db
      .updateTable('orders')
      .set({ order_no: numbers.get('ord_1') })
      .where('id', '=', 'ord_2')
      .execute(),
  ).rejects.toThrow();

  // The next order is numbered after every existing one, by the engine's own means.
  await db
    .insertInto('orders')
    .values({ ...order('ord_4'), order_no: nextOrderNumber(db) })
    .execute();
  const next = await db.selectFrom('orders').select('order_no').where('id', '=', 'ord_4').executeTakeFirstOrThrow();
  expect(Number(next.order_no)).toBeGreaterThan(Math.max(...numbers.values()));

  const indexes = await indexNames();
  expect(indexes).not.toContain('journal_order');
  expect(indexes).toEqual(expect.arrayContaining(['orders_order_no', 'journal_order_no']));
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
