import { type Kysely, type QueryCreator, sql } from 'kysely';
import type { Mode } from '../domain/api-key.js';
import type { EventType, OrderStatus } from '../domain/order-status.js';
import { isPublicId, newId } from '../domain/random.js';
import { type Authentication, authenticationOf, KEY_VERDICT_COLUMNS } from '../accounts/key-verdict.js';
import { coalescedRead, onPostgres, preparedQuery, rowsByKey } from '../db/prepared.js';
import type { Database } from '../db/schema.js';
import { enabledEndpointsOfOrder, enqueueOrderEvent } from '../webhooks/outbox.js';
import { EVENT_COLUMNS, type EventFields, eventFromRow, ORDER_COLUMNS, type Order, type OrderEvent, type OrderFields, orderFromRow } from './order.js';

// Reads and the event append shared by order creation, transitions and the API.

/** An order with its internal number: GET /orders/{id} reads the events by it (findOrderWithEvents). */
const selectOrder = coalescedRead(
  preparedQuery((db, id: string) =>
    db
      .selectFrom('orders')
      .select([...ORDER_COLUMNS, 'order_no'])
      .where('id', '=', id),
  ),
  preparedQuery((db, ids: string[]) =>
    db
      .selectFrom('orders')
      .select([...ORDER_COLUMNS, 'order_no'])
      .where('id', '=', sql<string>`any(${ids})`),
  ),
  (row) => row.id,
);

/**
 * A new order's number (schema.ts `order_no`): PostgreSQL's identity column fills it (undefined
 * leaves it out of the insert); SQLite has no sequences, and its one writer takes the next after
 * the highest, found at the end of the column's unique index.
 */
export function nextOrderNumber(db: Kysely<Database>) {
  return onPostgres(db) ? undefined : sql<bigint>`(select coalesce(max(order_no), 0) + 1 from orders)`;
}

async function findOrderRow(db: Kysely<Database>, id: string, scope: { accountId: string; mode: Mode }) {
  if (!isPublicId('ord', id)) return undefined;
  const [row] = await selectOrder(db, id);
  return row && row.account_id === scope.accountId && row.mode === scope.mode ? row : undefined;
}

/** The order, if it is the account's in that mode: another account's order is not found. */
export async function findOrder(db: Kysely<Database>, id: string, scope: { accountId: string; mode: Mode }): Promise<Order | undefined> {
  const row = await findOrderRow(db, id, scope);
  return row && orderFromRow(row);
}

export async function findOrderById(db: Kysely<Database>, id: string): Promise<Order | undefined> {
  const [row] = await selectOrder(db, id);
  return row && orderFromRow(row);
}

const selectOrderByIdempotencyKey = preparedQuery((db, accountId: string, mode: Mode, idempotencyKey: string) =>
  db.selectFrom('orders').select(ORDER_COLUMNS).where('account_id', '=', accountId).where('mode', '=', mode).where('idempotency_key', '=', idempotencyKey),
);

export async function findOrderByIdempotencyKey(db: Kysely<Database>, scope: { accountId: string; mode: Mode; idempotencyKey: string }): Promise<Order | undefined> {
  const [row] = await selectOrderByIdempotencyKey(db, scope.accountId, scope.mode, scope.idempotencyKey);
  return row && orderFromRow(row);
}

// Events are keyed by their order's number: the order's id leads to it.
const selectEvents = coalescedRead(
  preparedQuery((db, orderId: string) =>
    db
      .selectFrom('order_events')
      .select(EVENT_COLUMNS)
      .where('order_no', '=', (eb) => eb.selectFrom('orders').select('order_no').where('id', '=', orderId))
      .orderBy('seq'),
  ),
  preparedQuery((db, orderIds: string[]) =>
    db
      .selectFrom('order_events as e')
      .innerJoin('orders as o', 'o.order_no', 'e.order_no')
      .select(EVENT_COLUMNS.map((column) => `e.${column}` as const))
      .where('o.id', '=', sql<string>`any(${orderIds})`)
      .orderBy('e.order_no')
      .orderBy('e.seq'),
  ),
  (row) => row.order_id,
);

export async function listEvents(db: Kysely<Database>, orderId: string): Promise<OrderEvent[]> {
  const rows = await selectEvents(db, orderId);
  return rows.map(eventFromRow);
}

const selectEventsByNumber = preparedQuery((db, orderNo: bigint) => db.selectFrom('order_events').select(EVENT_COLUMNS).where('order_no', '=', orderNo).orderBy('seq'));

/**
 * PostgreSQL: an order with its events as one JSON array, in one round trip (instead of the
 * order, then its events). One statement also reads both in one snapshot. (On SQLite the same
 * statement, with json_group_array, was slower than the two: 3.5 against 2.6 µs with an
 * ordered aggregate. Over an ordered subquery it was as fast, 0.5 µs faster with two events,
 * but SQLite does not promise an aggregate the subquery's order.)
 */
const eventsOfOrder = sql<
  EventFields[]
>`coalesce((select json_agg(json_build_object('id', e.id, 'order_id', e.order_id, 'seq', e.seq, 'type', e.type, 'status', e.status, 'data', e.data, 'created_at', e.created_at) order by e.seq) from order_events e where e.order_no = orders.order_no), '[]')`.as(
  'events',
);
const ordersWithEvents = (db: QueryCreator<Database>) =>
  db
    .selectFrom('orders')
    .select(ORDER_COLUMNS.map((column) => `orders.${column}` as const))
    .select(eventsOfOrder);
/**
 * PostgreSQL, GET /orders/{id}: an API key's verdict and the order it asks for, with its
 * events, in one statement (auth.ts Prefetch). Coalesced like the key's own lookup: the
 * requests of one turn share the statement. The keys and the orders are each found by their
 * own unique index (materialized, so that the planner cannot walk an account's orders to find
 * one) and then paired: an order comes back only beside a key of its account and mode.
 */
const keysWithOrders = (db: Kysely<Database>, keyHashes: string[], orderIds: string[]) =>
  db
    .with(
      (cte) => cte('asked').materialized(),
      (db) => ordersWithEvents(db).where('orders.id', '=', sql<string>`any(${orderIds})`),
    )
    .with(
      (cte) => cte('keys').materialized(),
      (db) =>
        // As keyVerdictSource (key-verdict.ts), which takes no query creator with CTEs.
        db
          .selectFrom('api_keys as k')
          .innerJoin('accounts as a', 'a.id', 'k.account_id')
          .leftJoin('account_plans as ap', 'ap.account_id', 'k.account_id')
          .where('k.key_hash', '=', sql<string>`any(${keyHashes})`)
          .select(['k.key_hash', ...KEY_VERDICT_COLUMNS]),
    )
    .selectFrom('keys')
    .leftJoin('asked', (join) => join.onRef('asked.account_id', '=', 'keys.key_account_id').onRef('asked.mode', '=', 'keys.key_mode'))
    .selectAll('keys')
    .selectAll('asked');
const selectKeysWithOrders = preparedQuery(keysWithOrders);
type KeyWithOrder = Awaited<ReturnType<typeof selectKeysWithOrders>>[number];

// A key's hash (hex) and an order id, as one key for coalescedRead: neither holds a space.
const askedPair = (keyHash: string, orderId: string) => `${keyHash} ${orderId}`;
const selectKeyWithOrder = coalescedRead(
  (db, pair: string) => pairKeysWithOrders(db, [pair]),
  pairKeysWithOrders,
  (answer) => answer.pair,
);
async function pairKeysWithOrders(db: Kysely<Database>, pairs: string[]): Promise<Array<{ pair: string; key: KeyWithOrder; order: KeyWithOrder | undefined }>> {
  const asked = pairs.map((pair) => ({ pair, keyHash: pair.slice(0, pair.indexOf(' ')), orderId: pair.slice(pair.indexOf(' ') + 1) }));
  const rows = await selectKeysWithOrders(
    db,
    asked.map((a) => a.keyHash),
    asked.map((a) => a.orderId),
  );
  const byKey = rowsByKey(rows, (row) => row.key_hash);
  return asked.flatMap(({ pair, keyHash, orderId }) => {
    const ofKey = byKey.get(keyHash);
    return ofKey ? [{ pair, key: ofKey[0]!, order: ofKey.find((row) => row.id === orderId) }] : [];
  });
}

/**
 * The read of a key's verdict with an order (readOrderOfKey) where the engine gains by it: on
 * PostgreSQL one statement instead of two round trips; undefined on SQLite (findOrderWithEvents then).
 */
export function orderWithKeyReader(db: Kysely<Database>): ((keyHash: string, id: string) => ReturnType<typeof readOrderOfKey>) | undefined {
  return onPostgres(db) ? (keyHash, id) => readOrderOfKey(db, keyHash, id) : undefined;
}

export async function readOrderOfKey(
  db: Kysely<Database>,
  keyHash: string,
  id: string,
): Promise<{ authentication: Authentication; data: { order: Order; events: OrderEvent[] } | undefined }> {
  // A malformed id still needs the key's verdict: it asks for an order no row has.
  const [answer] = await selectKeyWithOrder(db, askedPair(keyHash, isPublicId('ord', id) ? id : ''));
  const row = answer?.order;
  const found = row ? { order: orderFromRow(row as OrderFields), events: (row.events as EventFields[]).map(eventFromRow) } : undefined;
  return { authentication: authenticationOf(answer?.key), data: found };
}

/**
 * findOrder and then its events, by the number its row carries. On PostgreSQL, GET /orders/{id}
 * reads the order with the key instead (readOrderOfKey), in one statement.
 */
export async function findOrderWithEvents(db: Kysely<Database>, id: string, scope: { accountId: string; mode: Mode }): Promise<{ order: Order; events: OrderEvent[] } | undefined> {
  const row = await findOrderRow(db, id, scope);
  return row && { order: orderFromRow(row), events: (await selectEventsByNumber(db, BigInt(row.order_no))).map(eventFromRow) };
}

/** The order if it is the account's in that mode: another account's order is not found. */
export function inScope<T extends { order: Order }>(found: T | undefined, scope: { accountId: string; mode: Mode }): T | undefined {
  return found && found.order.accountId === scope.accountId && found.order.mode === scope.mode ? found : undefined;
}

/**
 * An order's next event: its position is one past the last, read in the same statement, and it
 * is keyed by the order's number, read there too. Transitions of one order are serialised by
 * their conditional status update, so the read is safe; the unique (order_no, seq) key still
 * turns any lost race into an error rather than a duplicate position. The event is read from
 * the order's row, so an order id with no row would insert nothing (the foreign key used to
 * refuse it): every caller appends to an order its own transaction has just written or moved.
 */
const eventInsert = (db: QueryCreator<Database>, id: string, orderId: string, type: EventType, status: OrderStatus, data: string, createdAt: number) =>
  db
    .insertInto('order_events')
    .columns(['id', 'order_id', 'order_no', 'seq', 'type', 'status', 'data', 'created_at'])
    .expression((eb) =>
      eb
        .selectFrom('orders as o')
        .where('o.id', '=', orderId)
        .select([
          sql<string>`cast(${id} as text)`.as('id'),
          'o.id',
          'o.order_no',
          sql<bigint>`coalesce((select max(e.seq) from order_events e where e.order_no = o.order_no), 0) + 1`.as('seq'),
          sql<EventType>`cast(${type} as text)`.as('type'),
          sql<OrderStatus>`cast(${status} as text)`.as('status'),
          sql<string>`cast(${data} as text)`.as('data'),
          sql<bigint>`cast(${createdAt} as bigint)`.as('created_at'),
        ]),
    );

const insertEvent = preparedQuery(eventInsert);

/**
 * PostgreSQL: the insert and the webhook outbox's endpoint lookup in one round trip (SQLite
 * has no INSERT in a WITH clause).
 */
const insertEventReadingEndpoints = preparedQuery((db, id: string, orderId: string, type: EventType, status: OrderStatus, data: string, createdAt: number) =>
  enabledEndpointsOfOrder(
    // The CTE adds a table the lookup does not use: it is still a query creator of Database.
    db.with('appended', (q) => eventInsert(q, id, orderId, type, status, data, createdAt)) as unknown as QueryCreator<Database>,
    orderId,
  ),
);

export async function appendEvent(
  tx: Kysely<Database>,
  event: { orderId: string; type: EventType; status: OrderStatus; data: Record<string, unknown>; now: number },
): Promise<void> {
  const id = newId('evt');
  const row = [tx, id, event.orderId, event.type, event.status, JSON.stringify(event.data), event.now] as const;
  const endpoints = onPostgres(tx) ? await insertEventReadingEndpoints(...row) : await insertEvent(...row).then(() => undefined);
  // The webhook outbox is written in this same transaction: an event is never committed
  // without its deliveries, nor a delivery without its event.
  await enqueueOrderEvent(tx, event.orderId, { id, type: event.type, createdAt: event.now, data: event.data }, endpoints);
}

/** How many orders are in each mode and status (the `starport_orders` gauge); absent pairs have none. */
export async function countOrdersByModeAndStatus(db: Kysely<Database>): Promise<{ mode: Mode; status: OrderStatus; count: number }[]> {
  const rows = await db
    .selectFrom('orders')
    .select(['mode', 'status', (eb) => eb.fn.countAll().as('n')])
    .groupBy(['mode', 'status'])
    .execute();
  return rows.map((row) => ({ mode: row.mode, status: row.status, count: Number(row.n) }));
}

/** The fulfilment queue: orders in fulfillment_pending and the creation time of the oldest (null when none). */
export async function pendingQueue(db: Kysely<Database>): Promise<{ depth: number; oldestCreatedAt: number | null }> {
  const row = await db
    .selectFrom('orders')
    .select([(eb) => eb.fn.countAll().as('depth'), sql<bigint | null>`min(created_at)`.as('oldest')])
    .where('status', '=', 'fulfillment_pending')
    .executeTakeFirst();
  const oldest = row?.oldest;
  return { depth: Number(row?.depth ?? 0), oldestCreatedAt: oldest === null || oldest === undefined ? null : Number(oldest) };
}
