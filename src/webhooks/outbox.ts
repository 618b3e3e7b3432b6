import type { Kysely, QueryCreator, Selectable } from 'kysely';
import { newId } from '../domain/random.js';
import { preparedQuery } from '../db/prepared.js';
import { tonAmount } from '../domain/money.js';
import { formatTimestamp } from '../domain/time.js';
import { BALANCE_LOW_EVENT } from '../domain/webhook-events.js';
import type { AppliedMovement } from '../ledger/ledger.js';
import type { Database, WebhookAttemptsTable, WebhookEndpointsTable, WebhookMessagesTable } from '../db/schema.js';
import { orderBody } from '../orders/wire-format.js';
import { orderFromRow } from '../orders/order.js';
import { endpointFromRow, matches, TEST_EVENT_TYPE, type WebhookEndpoint } from './endpoints.js';

/**
 * The webhook outbox. Fan-out happens when the event is written: one message per matching
 * enabled endpoint, in the transaction of the order change. Why per endpoint rather than one
 * row per event fanned out later: each endpoint has its own retries, lease and log, the
 * dispatcher's claim is a single-table query, and an account without endpoints (the common
 * case) writes nothing at all. An endpoint added later does not receive earlier events.
 */

export interface OutboxEvent {
  id: string;
  type: string;
  createdAt: number;
  data: Record<string, unknown>;
}

/** The enabled endpoints of an order's account and mode (a builder: order-store.ts reuses it). */
export const enabledEndpointsOfOrder = (db: QueryCreator<Database>, orderId: string) =>
  db
    .selectFrom('webhook_endpoints')
    .innerJoin('orders', (join) => join.onRef('orders.account_id', '=', 'webhook_endpoints.account_id').onRef('orders.mode', '=', 'webhook_endpoints.mode'))
    .selectAll('webhook_endpoints')
    .where('orders.id', '=', orderId)
    .where('webhook_endpoints.status', '=', 'enabled');

const selectEnabledEndpoints = preparedQuery(enabledEndpointsOfOrder);

type Owner = { accountId: string; mode: string };

/** Tells, for each of these orders, whether its account has an enabled endpoint in its mode. */
export async function enabledEndpointsExist(db: Kysely<Database>, orders: Owner[]): Promise<(order: Owner) => boolean> {
  const key = (owner: Owner) => `${owner.accountId}\0${owner.mode}`;
  if (orders.length === 0) return () => false;
  const rows = await db
    .selectFrom('webhook_endpoints')
    .select(['account_id', 'mode'])
    .distinct()
    .where('status', '=', 'enabled')
    .where('account_id', 'in', [...new Set(orders.map((order) => order.accountId))])
    .execute();
  const owners = new Set(rows.map((row) => key({ accountId: row.account_id, mode: row.mode })));
  return (order) => owners.has(key(order));
}

/**
 * Writes the messages for an order event; call inside the transaction that appended it.
 * `endpoints`: the order's enabled endpoints when the caller already read them
 * (enabledEndpointsOfOrder).
 */
export async function enqueueOrderEvent(tx: Kysely<Database>, orderId: string, event: OutboxEvent, endpoints?: Array<Selectable<WebhookEndpointsTable>>): Promise<number> {
  // One indexed query in the common case (no endpoints): the order is read only when needed.
  endpoints ??= await selectEnabledEndpoints(tx, orderId);
  const targets = endpoints.map(endpointFromRow).filter((endpoint) => matches(endpoint, event.type));
  if (targets.length === 0) return 0;
  const order = await tx.selectFrom('orders').selectAll().where('id', '=', orderId).executeTakeFirstOrThrow();
  // status_url depends on the public origin, known to the sender, not here.
  const { status_url: _statusUrl, ...snapshot } = orderBody(orderFromRow(order), '');
  const payload = JSON.stringify({ id: event.id, type: event.type, created_at: formatTimestamp(event.createdAt), data: { order: snapshot, ...event.data } });
  await tx
    .insertInto('webhook_messages')
    .values(targets.map((endpoint) => messageRow(endpoint, event, payload)))
    .execute();
  announceQueued();
  return targets.length;
}

/**
 * How long after a message is queued this process's dispatchers look for it: its transaction
 * commits first (a few ms on either engine). Without it a message waited for the dispatcher's
 * poll, up to 250 ms, and more on a loaded machine. One wake-up covers every message queued
 * within the delay; processes elsewhere learn of them through their own polls and NOTIFY.
 */
const QUEUED_WAKE_DELAY_MS = 15;
const queuedListeners = new Set<() => void>();
let queuedWake: NodeJS.Timeout | undefined;

/** Calls `listener` soon after this process queues webhook messages; returns the unsubscribe. */
export function onMessagesQueued(listener: () => void): () => void {
  queuedListeners.add(listener);
  return () => queuedListeners.delete(listener);
}

function announceQueued(): void {
  if (queuedWake || queuedListeners.size === 0) return;
  queuedWake = setTimeout(() => {
    queuedWake = undefined;
    for (const listener of queuedListeners) listener();
  }, QUEUED_WAKE_DELAY_MS);
  queuedWake.unref();
}

function messageRow(endpoint: WebhookEndpoint, event: OutboxEvent, payload: string) {
  return {
    id: newId('msg'),
    endpoint_id: endpoint.id,
    account_id: endpoint.accountId,
    mode: endpoint.mode,
    event_id: event.id,
    event_type: event.type,
    payload,
    status: 'pending' as const,
    attempts: 0,
    next_attempt_at: event.createdAt,
    created_at: event.createdAt,
  };
}

/**
 * Writes the messages of a `balance.low` event when `movement` took its balance below the
 * account's low-balance threshold (docs/api.md "Low-balance alert"); call inside the movement's
 * transaction, so the event commits with the money or not at all. Nothing is read when the
 * movement crossed nothing: the ledger's UPDATE already said so. Returns the messages written.
 */
export async function enqueueBalanceLowEvent(tx: Kysely<Database>, movement: AppliedMovement): Promise<number> {
  const threshold = movement.crossedBelow;
  if (threshold === null) return 0;
  const type = BALANCE_LOW_EVENT;
  const endpoints = await tx
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', movement.accountId)
    .where('mode', '=', movement.mode)
    .where('status', '=', 'enabled')
    .execute();
  const targets = endpoints.map(endpointFromRow).filter((endpoint) => matches(endpoint, type));
  if (targets.length === 0) return 0;
  const event = { id: newId('evt'), type, createdAt: movement.createdAt, data: {} };
  const payload = JSON.stringify({
    id: event.id,
    type,
    created_at: formatTimestamp(event.createdAt),
    data: { mode: movement.mode, available: tonAmount(movement.after.available), threshold: tonAmount(threshold) },
  });
  await tx
    .insertInto('webhook_messages')
    .values(targets.map((endpoint) => messageRow(endpoint, event, payload)))
    .execute();
  announceQueued();
  return targets.length;
}

/** Queues a `webhook.test` event for one endpoint (dashboard "send test event"). */
export async function enqueueTestEvent(db: Kysely<Database>, endpoint: WebhookEndpoint, now: number): Promise<string> {
  const event = { id: newId('evt'), type: TEST_EVENT_TYPE, createdAt: now, data: { endpoint_id: endpoint.id } };
  const payload = JSON.stringify({ id: event.id, type: event.type, created_at: formatTimestamp(now), data: event.data });
  const row = messageRow(endpoint, event, payload);
  await db.insertInto('webhook_messages').values(row).execute();
  announceQueued();
  return row.id;
}

/**
 * Sends a message again now, with the same webhook-id (receivers deduplicate on it). A failed
 * message gets one more attempt; a pending one is simply brought forward.
 */
export async function redeliver(db: Kysely<Database>, endpointId: string, messageId: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('webhook_messages')
    .set({ status: 'pending', next_attempt_at: now })
    .where('id', '=', messageId)
    .where('endpoint_id', '=', endpointId)
    .executeTakeFirst();
  if (result.numUpdatedRows === 1n) announceQueued();
  return result.numUpdatedRows === 1n;
}

export type MessageRow = Selectable<WebhookMessagesTable>;
export type AttemptRow = Selectable<WebhookAttemptsTable>;

/** The newest messages of an endpoint with their attempts, for the delivery log. */
export async function deliveryLog(db: Kysely<Database>, endpointId: string, limit = 50): Promise<{ message: MessageRow; attempts: AttemptRow[] }[]> {
  const messages = await db.selectFrom('webhook_messages').selectAll().where('endpoint_id', '=', endpointId).orderBy('created_at', 'desc').orderBy('id').limit(limit).execute();
  if (messages.length === 0) return [];
  const attempts = await db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where(
      'message_id',
      'in',
      messages.map((m) => m.id),
    )
    .orderBy('attempt', 'desc')
    .execute();
  return messages.map((message) => ({ message, attempts: attempts.filter((a) => a.message_id === message.id) }));
}

/** Delivered and failed messages (with their attempt log) are kept this long, then pruned. */
export const MESSAGE_RETENTION_MS = 30 * 86_400_000;

/**
 * Deletes up to `limit` finished messages created before `before`, with their attempts, and
 * returns how many. Pending messages are never pruned. Safe to run on several workers at once.
 */
export async function pruneMessages(db: Kysely<Database>, before: number, limit = 1000): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const rows = await tx
      .selectFrom('webhook_messages')
      .select('id')
      .where('status', 'in', ['succeeded', 'failed'])
      .where('created_at', '<', BigInt(before))
      .limit(limit)
      .execute();
    if (rows.length === 0) return 0;
    const ids = rows.map((r) => r.id);
    await tx.deleteFrom('webhook_attempts').where('message_id', 'in', ids).execute();
    const deleted = await tx.deleteFrom('webhook_messages').where('id', 'in', ids).where('status', '<>', 'pending').executeTakeFirst();
    return Number(deleted.numDeletedRows);
  });
}

/** Messages waiting to be delivered: pending, to enabled endpoints (the `starport_webhook_outbox_backlog` gauge). */
export async function outboxBacklog(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('webhook_messages')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('status', '=', 'pending')
    .where('endpoint_id', 'in', (sub) => sub.selectFrom('webhook_endpoints').select('id').where('status', '=', 'enabled'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
