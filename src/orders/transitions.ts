import { type Kysely, sql } from 'kysely';
import type { EventType, FailureReason, OrderStatus } from '../domain/order-status.js';
import { canTransition, isFinal } from '../domain/order-status.js';
import { formatTon } from '../domain/money.js';
import { preparedQuery } from '../db/prepared.js';
import type { Database } from '../db/schema.js';
import { newId } from '../domain/random.js';
import { move } from '../ledger/ledger.js';
import { enabledEndpointsExist } from '../webhooks/outbox.js';
import type { Order } from './order.js';
import { appendEvent } from './order-store.js';
import { addToOrderDays } from './order-days.js';
import { liveOrderFailed } from '../notifications/notices.js';

export class LedgerInvariantError extends Error {}

export interface Transition {
  to: OrderStatus;
  /** Event data beyond what the transition adds itself (amounts, reasons). */
  data?: Record<string, unknown>;
  failureReason?: FailureReason;
  message?: string;
  /** When the worker should act next; null for final states. */
  nextRunAt: number | null;
  now: number;
}

const EVENT_FOR: Record<OrderStatus, EventType> = {
  fulfillment_pending: 'order.created',
  processing: 'order.processing',
  delivered: 'order.delivered',
  failed: 'order.failed',
};

/**
 * Moves an order to a new status, with its event and ledger movement, in one transaction.
 * The update is conditional on the status the caller saw: if another worker or the operator
 * moved the order first, nothing is written and false is returned. `within` runs inside the
 * same transaction after a transition that happened (the operator's audit record). Given a
 * transaction, the transition joins it.
 */
export async function transitionOrder(db: Kysely<Database>, order: Order, transition: Transition, within?: (tx: Kysely<Database>) => Promise<unknown>): Promise<boolean> {
  if (!canTransition(order.status, transition.to)) {
    throw new Error(`order ${order.id}: no transition ${order.status} → ${transition.to}`);
  }
  return inTransaction(db, async (tx) => {
    const updated = await updateStatus(tx, order.id, order.status, transition.to, transition.failureReason ?? null, transition.now, transition.nextRunAt);
    if (updated.length !== 1) return false;
    // A final status counts in its day (order-days.ts), before the ledger move: a transaction
    // takes its day's row before its balance row, as a worker's batch does (transitionMany). A
    // batch adds all of its orders itself.
    if (isFinal(transition.to) && !rollupsHeldBack.has(tx)) await addToOrderDays(tx, [{ order, status: transition.to }]);
    const data = { ...transition.data, ...(await settle(tx, order, transition)) };
    await appendEvent(tx, { orderId: order.id, type: EVENT_FOR[transition.to], status: transition.to, data, now: transition.now });
    if (transition.to === 'failed' && order.mode === 'live') await liveOrderFailed(tx, order, transition.failureReason ?? null, transition.now);
    await within?.(tx);
    return true;
  });
}

/** One order's transitions to take now, in order (for example processing, then delivered). */
export interface TransitionChain {
  order: Order;
  steps: Transition[];
}

/**
 * transitionOrder for a worker's batch: many orders, each through its chain of transitions,
 * written with a few statements for the whole batch rather than a few per transition: one
 * status update per distinct outcome, one read of the orders' last event positions, one insert
 * of all the events. The ledger moves are the same as transitionOrder's (held back by
 * withLedgerMovesLast when the caller asked for that).
 *
 * The caller's transaction must hold the orders (the worker's claim locks them), so that no
 * one moves them between the update and the events. An order whose account has an enabled
 * webhook endpoint in its mode goes through transitionOrder step by step instead: each
 * outbox message snapshots the order as its own transition left it.
 *
 * Returns each order's status after the transitions written; an order another actor had
 * already moved has none.
 */
export async function transitionMany(tx: Kysely<Database>, chains: TransitionChain[]): Promise<Map<string, OrderStatus>> {
  const statuses = new Map<string, OrderStatus>();
  const due = chains.filter((chain) => chain.steps.length > 0);
  for (const { order, steps } of due) {
    steps.reduce((from, step) => {
      if (!canTransition(from, step.to)) throw new Error(`order ${order.id}: no transition ${from} → ${step.to}`);
      return step.to;
    }, order.status);
  }
  const hasEndpoints = await enabledEndpointsExist(
    tx,
    due.map((chain) => chain.order),
  );
  const batched: TransitionChain[] = [];
  rollupsHeldBack.add(tx);
  try {
    for (const chain of due) {
      if (!hasEndpoints(chain.order)) {
        batched.push(chain);
        continue;
      }
      const status = await transitionOneByOne(tx, chain);
      if (status) statuses.set(chain.order.id, status);
    }
  } finally {
    rollupsHeldBack.delete(tx);
  }
  for (const chain of await updateStatuses(tx, batched)) statuses.set(chain.order.id, chain.steps.at(-1)!.to);
  await appendEvents(
    tx,
    batched.filter((chain) => statuses.has(chain.order.id)),
  );
  // Every order this call moved to a final status, one by one or batched, in one upsert. Its
  // rows are locked before the balance rows when the ledger moves are held back
  // (withLedgerMovesLast, as the worker runs its batches), the order transitionOrder keeps:
  // the other order deadlocked against it on PostgreSQL. And the balance rows, which every
  // new order of their accounts waits for, stay locked no longer than before.
  await addToOrderDays(
    tx,
    due.flatMap(({ order }) => {
      const status = statuses.get(order.id);
      return status && isFinal(status) ? [{ order, status }] : [];
    }),
  );
  return statuses;
}

/** Transactions inside transitionMany, which adds their final orders to order_days itself. */
const rollupsHeldBack = new WeakSet<Kysely<Database>>();

/** The chain through transitionOrder; the status it reached (undefined if it took no step). */
async function transitionOneByOne(tx: Kysely<Database>, { order, steps }: TransitionChain): Promise<OrderStatus | undefined> {
  let current = order;
  for (const step of steps) {
    if (!(await transitionOrder(tx, current, step))) break;
    current = { ...current, status: step.to, failureReason: step.failureReason ?? null, nextRunAt: step.nextRunAt, updatedAt: step.now };
  }
  return current === order ? undefined : current.status;
}

/** Each chain's final status, one UPDATE per distinct outcome; returns the chains it moved. */
async function updateStatuses(tx: Kysely<Database>, chains: TransitionChain[]): Promise<TransitionChain[]> {
  const groups = new Map<string, TransitionChain[]>();
  for (const chain of chains) {
    const last = chain.steps.at(-1)!;
    const key = JSON.stringify([chain.order.status, last.to, last.failureReason ?? null, last.now, last.nextRunAt]);
    groups.set(key, [...(groups.get(key) ?? []), chain]);
  }
  const moved = new Set<string>();
  for (const group of groups.values()) {
    const last = group[0]!.steps.at(-1)!;
    const rows = await tx
      .updateTable('orders')
      .set({ status: last.to, failure_reason: last.failureReason ?? null, updated_at: last.now, next_run_at: last.nextRunAt, lease_owner: null, lease_until: null })
      .where(
        'id',
        'in',
        group.map((chain) => chain.order.id),
      )
      .where('status', '=', group[0]!.order.status)
      .returning('id')
      .execute();
    for (const row of rows) moved.add(row.id);
  }
  return chains.filter((chain) => moved.has(chain.order.id));
}

/** Every step's event (and its ledger move, through settle), numbered after each order's last. */
async function appendEvents(tx: Kysely<Database>, chains: TransitionChain[]): Promise<void> {
  if (chains.length === 0) return;
  // Each order's number (its events' key) and its last event's position.
  const last = await tx
    .selectFrom('orders as o')
    .select(['o.id', 'o.order_no', sql<bigint | null>`(select max(e.seq) from order_events e where e.order_no = o.order_no)`.as('seq')])
    .where(
      'o.id',
      'in',
      chains.map((chain) => chain.order.id),
    )
    .execute();
  const byOrder = new Map(last.map((row) => [row.id, { orderNo: row.order_no, seq: BigInt(row.seq ?? 0n) }]));
  const rows = [];
  for (const { order, steps } of chains) {
    const found = byOrder.get(order.id);
    if (!found) throw new Error(`order ${order.id} is not stored`);
    let seq = found.seq;
    for (const step of steps) {
      const data = { ...step.data, ...(await settle(tx, order, step)) };
      rows.push({
        id: newId('evt'),
        order_id: order.id,
        order_no: found.orderNo,
        seq: ++seq,
        type: EVENT_FOR[step.to],
        status: step.to,
        data: JSON.stringify(data),
        created_at: step.now,
      });
    }
  }
  await tx.insertInto('order_events').values(rows).execute();
}

const updateStatus = preparedQuery((db, id: string, from: OrderStatus, to: OrderStatus, failureReason: FailureReason | null, now: number, nextRunAt: number | null) =>
  db
    .updateTable('orders')
    .set({ status: to, failure_reason: failureReason, updated_at: now, next_run_at: nextRunAt, lease_owner: null, lease_until: null })
    .where('id', '=', id)
    .where('status', '=', from)
    .returning('id'),
);

/** Joins the caller's transaction (a worker's batch) or opens one. */
function inTransaction<T>(db: Kysely<Database>, work: (tx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work);
}

/** Final states settle the reservation: delivery debits it, failure releases it. */
async function settle(tx: Kysely<Database>, order: Order, transition: Transition): Promise<Record<string, unknown>> {
  const ref = { accountId: order.accountId, mode: order.mode };
  const amount = formatTon(order.amount);
  if (transition.to === 'delivered') {
    await mustMove(tx, ref, order, 'debit', transition.now);
    return { amount };
  }
  if (transition.to === 'failed') {
    await mustMove(tx, ref, order, 'release', transition.now);
    return { reason: transition.failureReason, message: transition.message ?? '', amount };
  }
  return {};
}

async function mustMove(tx: Kysely<Database>, ref: { accountId: string; mode: Order['mode'] }, order: Order, kind: 'debit' | 'release', now: number) {
  const apply = async () => {
    if (!(await move(tx, ref, { kind, amount: order.amount, orderId: order.id, now }))) {
      throw new LedgerInvariantError(`order ${order.id}: reserved balance does not cover its ${kind} of ${order.amount} nanotons`);
    }
  };
  const deferred = deferredMoves.get(tx);
  if (deferred) deferred.push(apply);
  else await apply();
}

/** The held-back ledger moves of a transaction inside withLedgerMovesLast. */
const deferredMoves = new WeakMap<Kysely<Database>, Array<() => Promise<void>>>();

/**
 * Runs `work`, transitions of many orders in transaction `tx` (a worker's batch), with their
 * ledger moves held back until it is done, then applies them in the order they were asked for.
 * On PostgreSQL a move locks its balance row until the commit, and every new order of that
 * account waits for the lock: moved last, the batch holds its locks for the moves alone, not
 * while it writes every other order's status and events. A refused move still throws, and
 * the whole batch rolls back.
 */
export async function withLedgerMovesLast<T>(tx: Kysely<Database>, work: () => Promise<T>): Promise<T> {
  const moves: Array<() => Promise<void>> = [];
  deferredMoves.set(tx, moves);
  let result: T;
  try {
    result = await work();
  } finally {
    deferredMoves.delete(tx);
  }
  for (const apply of moves) await apply();
  return result;
}
