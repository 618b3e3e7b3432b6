import type { Kysely } from 'kysely';
import type { EventType, FailureReason, OrderStatus } from '../domain/order-status.js';
import { canTransition } from '../domain/order-status.js';
import { formatTon } from '../domain/money.js';
import { preparedQuery } from '../db/prepared.js';
import type { Database } from '../db/schema.js';
import { move } from '../ledger/ledger.js';
import type { Order } from './order.js';
import { appendEvent } from './order-store.js';

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
export async function transitionOrder(
  db: Kysely<Database>,
  order: Order,
  transition: Transition,
  within?: (tx: Kysely<Database>) => Promise<unknown>,
): Promise<boolean> {
  if (!canTransition(order.status, transition.to)) {
    throw new Error(`order ${order.id}: no transition ${order.status} → ${transition.to}`);
  }
  return inTransaction(db, async (tx) => {
    const updated = await updateStatus(tx, order.id, order.status, transition.to, transition.failureReason ?? null, transition.now, transition.nextRunAt);
    if (updated.length !== 1) return false;
    const data = { ...transition.data, ...(await settle(tx, order, transition)) };
    await appendEvent(tx, { orderId: order.id, type: EVENT_FOR[transition.to], status: transition.to, data, now: transition.now });
    await within?.(tx);
    return true;
  });
}

const updateStatus = preparedQuery(
  (db, id: string, from: OrderStatus, to: OrderStatus, failureReason: FailureReason | null, now: number, nextRunAt: number | null) =>
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
