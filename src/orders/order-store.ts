import { type Kysely, sql } from 'kysely';
import type { Mode } from '../domain/api-key.js';
import type { EventType, OrderStatus } from '../domain/order-status.js';
import { isPublicId, newId } from '../domain/random.js';
import { coalescedRead, preparedQuery } from '../db/prepared.js';
import type { Database } from '../db/schema.js';
import { enqueueOrderEvent } from '../webhooks/outbox.js';
import { eventFromRow, type Order, type OrderEvent, orderFromRow } from './order.js';


/** Reads and the event append shared by order creation, transitions and the API. */
const selectOrder = coalescedRead(
  preparedQuery((db, id: string) => db.selectFrom('orders').selectAll().where('id', '=', id)),
  preparedQuery((db, ids: string[]) => db.selectFrom('orders').selectAll().where('id', '=', sql<string>`any(${ids})`)),
  (row) => row.id,
);

/** The order, if it is the account's in that mode: another account's order is not found. */
export async function findOrder(db: Kysely<Database>, id: string, scope: { accountId: string; mode: Mode }): Promise<Order | undefined> {
  if (!isPublicId('ord', id)) return undefined;
  const [row] = await selectOrder(db, id);
  return row && row.account_id === scope.accountId && row.mode === scope.mode ? orderFromRow(row) : undefined;
}

export async function findOrderById(db: Kysely<Database>, id: string): Promise<Order | undefined> {
  const [row] = await selectOrder(db, id);
  return row && orderFromRow(row);
}

const selectOrderByIdempotencyKey = preparedQuery((db, accountId: string, mode: Mode, idempotencyKey: string) =>
  db.selectFrom('orders').selectAll().where('account_id', '=', accountId).where('mode', '=', mode).where('idempotency_key', '=', idempotencyKey),
);

export async function findOrderByIdempotencyKey(
  db: Kysely<Database>,
  scope: { accountId: string; mode: Mode; idempotencyKey: string },
): Promise<Order | undefined> {
  const [row] = await selectOrderByIdempotencyKey(db, scope.accountId, scope.mode, scope.idempotencyKey);
  return row && orderFromRow(row);
}

const selectEvents = coalescedRead(
  preparedQuery((db, orderId: string) => db.selectFrom('order_events').selectAll().where('order_id', '=', orderId).orderBy('seq')),
  preparedQuery((db, orderIds: string[]) => db.selectFrom('order_events').selectAll().where('order_id', '=', sql<string>`any(${orderIds})`).orderBy('order_id').orderBy('seq')),
  (row) => row.order_id,
);

export async function listEvents(db: Kysely<Database>, orderId: string): Promise<OrderEvent[]> {
  const rows = await selectEvents(db, orderId);
  return rows.map(eventFromRow);
}

const selectLastSeq = preparedQuery((db, orderId: string) =>
  db.selectFrom('order_events').select(sql<bigint | null>`max(seq)`.as('seq')).where('order_id', '=', orderId),
);

const insertEvent = preparedQuery(
  (db, id: string, orderId: string, seq: bigint, type: EventType, status: OrderStatus, data: string, createdAt: number) =>
    db.insertInto('order_events').values({ id, order_id: orderId, seq, type, status, data, created_at: createdAt }),
);

export async function appendEvent(
  tx: Kysely<Database>,
  event: { orderId: string; type: EventType; status: OrderStatus; data: Record<string, unknown>; now: number },
): Promise<void> {
  // Transitions of one order are serialised by their conditional status update, so reading
  // the last position inside the same transaction is safe; the unique (order_id, seq)
  // constraint still turns any lost race into an error rather than a duplicate position.
  // An order's creation is its first event.
  const [last] = event.type === 'order.created' ? [] : await selectLastSeq(tx, event.orderId);
  const id = newId('evt');
  await insertEvent(tx, id, event.orderId, BigInt(last?.seq ?? 0) + 1n, event.type, event.status, JSON.stringify(event.data), event.now);
  // The webhook outbox is written in this same transaction: an event is never committed
  // without its deliveries, nor a delivery without its event.
  await enqueueOrderEvent(tx, event.orderId, { id, type: event.type, createdAt: event.now, data: event.data });
}
