import type { Kysely } from 'kysely';
import type { Mode } from '../domain/api-key.js';
import type { Database, OrderRow } from '../db/schema.js';
import { formatTon } from '../domain/money.js';
import { formatTimestamp } from '../domain/time.js';
import { findPayment } from '../live/live-payments.js';
import { type Order, type OrderEvent, orderFromRow } from './order.js';
import { findOrderById, listEvents } from './order-store.js';
import { type Transition, transitionOrder } from './transitions.js';

/**
 * The operator's view of orders (CLI `order …`): any account, any mode, with the internals a
 * client never sees (the journal rows, the worker's lease), and the manual resolution of an
 * order held for review.
 */
interface JournalEntry {
  id: string;
  kind: string;
  availableDelta: bigint;
  reservedDelta: bigint;
  reason: string | null;
  createdAt: number;
}

/** What the fulfilment worker knows about the order. */
interface WorkerState {
  attempts: number;
  nextRunAt: number | null;
  leaseOwner: string | null;
  leaseUntil: number | null;
}

export interface OrderDetails {
  order: Order;
  events: OrderEvent[];
  journal: JournalEntry[];
  worker: WorkerState;
  /**
   * What the upstream (Fragment, the TON wallet) said about the order: the payment request
   * Fragment issued (live_payments) and the margin (liveMargin) between the reserve and what
   * it asks plus the fee allowance.
   * Null for test orders and for live orders that have no payment request yet.
   */
  upstream: Record<string, unknown> | null;
}

const optional = (value: bigint | null) => (value === null ? null : Number(value));

function workerState(row: OrderRow): WorkerState {
  return {
    attempts: Number(row.attempts),
    nextRunAt: optional(row.next_run_at),
    leaseOwner: row.lease_owner,
    leaseUntil: optional(row.lease_until),
  };
}

/**
 * A live order's margin, the same figure in `order show` and `wallet status`: what the order
 * keeps if it is paid as Fragment asks, after the network fee budgeted per payment
 * (reserved − Fragment's amount − LIVE_FEE_ALLOWANCE_TON). The real fee is usually below the
 * allowance, so this is the worst case the money-safety check allows for; it can be negative
 * within LIVE_PRICE_TOLERANCE_PERCENT.
 */
export function liveMargin(reserved: bigint, amount: bigint, feeAllowance: bigint): bigint {
  return reserved - amount - feeAllowance;
}

export async function orderDetails(db: Kysely<Database>, orderId: string, options: { feeAllowance: bigint }): Promise<OrderDetails | undefined> {
  const row = await db.selectFrom('orders').selectAll().where('id', '=', orderId).executeTakeFirst();
  if (!row) return undefined;
  const journal = await db.selectFrom('journal').selectAll().where('order_no', '=', row.order_no).orderBy('created_at').orderBy('id').execute();
  return {
    order: orderFromRow(row),
    events: await listEvents(db, orderId),
    journal: journal.map((j) => ({
      id: j.id,
      kind: j.kind,
      availableDelta: BigInt(j.available_delta),
      reservedDelta: BigInt(j.reserved_delta),
      reason: j.reason,
      createdAt: Number(j.created_at),
    })),
    worker: workerState(row),
    upstream: await upstreamOf(db, row, options.feeAllowance),
  };
}

async function upstreamOf(db: Kysely<Database>, row: OrderRow, feeAllowance: bigint): Promise<Record<string, unknown> | null> {
  const payment = await findPayment(db, row.id);
  if (!payment) return null;
  return {
    fragment_req_id: payment.fragmentReqId,
    recipient_name: payment.recipientName,
    quoted_amount: formatTon(payment.quotedAmount),
    destination: payment.destination,
    amount: formatTon(payment.amount),
    fee_allowance: formatTon(feeAllowance),
    // reserved − amount − fee_allowance (liveMargin), as `wallet status` shows it.
    margin: formatTon(liveMargin(BigInt(row.amount), payment.amount, feeAllowance)),
    valid_until: formatTimestamp(payment.validUntil),
    payload: payment.payload,
    requested_at: formatTimestamp(payment.createdAt),
    wallet_messages: await walletMessagesOf(db, row.id),
  };
}

async function inFlightPayment(db: Kysely<Database>, orderId: string) {
  return db
    .selectFrom('wallet_message_orders as l')
    .innerJoin('wallet_messages as m', 'm.hash', 'l.message_hash')
    .select(['m.seqno', 'm.state', 'm.valid_until'])
    .where('l.order_id', '=', orderId)
    .where('m.state', 'in', ['signed', 'broadcast'])
    .executeTakeFirst();
}

/** The paying wallet's messages for the order, oldest first (held = needs the operator). */
async function walletMessagesOf(db: Kysely<Database>, orderId: string): Promise<Record<string, unknown>[]> {
  const rows = await db
    .selectFrom('wallet_message_orders as l')
    .innerJoin('wallet_messages as m', 'm.hash', 'l.message_hash')
    .select(['m.hash', 'm.wallet', 'm.seqno', 'm.state', 'm.valid_until', 'm.tx_hash', 'm.created_at', 'l.outcome'])
    .where('l.order_id', '=', orderId)
    .orderBy('m.created_at')
    .execute();
  return rows.map((m) => ({
    hash: m.hash,
    wallet: m.wallet,
    seqno: Number(m.seqno),
    state: m.state,
    outcome: m.outcome,
    tx_hash: m.tx_hash,
    signed_at: formatTimestamp(Number(m.created_at)),
    valid_until: formatTimestamp(Number(m.valid_until)),
  }));
}

export class ResolveError extends Error {}

export type Outcome = 'delivered' | 'failed';

export interface Resolution {
  order: Order;
  /** False when the order already had this outcome: nothing was written, no money moved. */
  changed: boolean;
}

/** What the client reads in the order.failed event (the operator's reason stays in the audit log). */
const OPERATOR_FAILED_MESSAGE = 'The order was reviewed by the operator and failed; its amount was released to the balance.';

/**
 * Resolves an order held for review (status processing) by hand, through the same transition
 * as the worker: delivered debits the reserve, failed releases it (failure_reason
 * operator_failed), and the event is recorded. The transition's conditional status update
 * makes this move money at most once however many times, or however concurrently, it runs:
 * a second run finds the order final and changes nothing.
 *
 * An order whose worker holds a live lease may be mid-purchase; it is refused unless `force`.
 */
export async function resolveOrder(
  db: Kysely<Database>,
  input: { orderId: string; outcome: Outcome; force?: boolean; now: number },
  within?: (tx: Kysely<Database>, order: Order) => Promise<unknown>,
): Promise<Resolution> {
  const row = await db.selectFrom('orders').selectAll().where('id', '=', input.orderId).executeTakeFirst();
  if (!row) throw new ResolveError(`no order ${input.orderId}`);
  const order = orderFromRow(row);
  if (order.status === input.outcome) return { order, changed: false };
  if (order.status !== 'processing') {
    throw new ResolveError(
      order.status === 'fulfillment_pending'
        ? `order ${order.id} is fulfillment_pending (queued, not yet held for review): only processing orders can be resolved`
        : `order ${order.id} is already ${order.status}; it cannot be marked ${input.outcome}`,
    );
  }
  const worker = workerState(row);
  if (!input.force && worker.leaseUntil !== null && worker.leaseUntil > input.now) {
    throw new ResolveError(
      `order ${order.id} is being worked on by ${worker.leaseOwner} until ${new Date(worker.leaseUntil).toISOString()}; ` +
        'retry after that, or pass --force if that worker is stuck (it may be paying the upstream right now)',
    );
  }
  // A signed wallet message that can still land may yet pay the order: failing it now could
  // release money that is being spent. Held messages (unconfirmable) are what resolve is for.
  const inFlight = input.force ? undefined : await inFlightPayment(db, order.id);
  if (inFlight) {
    throw new ResolveError(
      `order ${order.id} is being paid by wallet message seqno ${inFlight.seqno} (${inFlight.state}, valid until ${formatTimestamp(Number(inFlight.valid_until))}); ` +
        'wait until it is confirmed or expires, or pass --force',
    );
  }
  const transition: Transition =
    input.outcome === 'delivered'
      ? { to: 'delivered', nextRunAt: null, now: input.now }
      : { to: 'failed', failureReason: 'operator_failed', message: OPERATOR_FAILED_MESSAGE, nextRunAt: null, now: input.now };
  const moved = await transitionOrder(db, order, transition, within && ((tx) => within(tx, order)));
  const current = (await findOrderById(db, order.id)) as Order;
  if (moved) return { order: current, changed: true };
  // Someone else (a concurrent resolve, the worker) moved the order first.
  if (current.status === input.outcome) return { order: current, changed: false };
  throw new ResolveError(`order ${order.id} became ${current.status} meanwhile; nothing was changed`);
}

/** Live orders held for review: processing, with a paying-wallet message the operator must decide on. */
export async function heldOrderCount(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('orders as o')
    .select((eb) => eb.fn.count<string | bigint>('o.id').distinct().as('n'))
    .innerJoin('wallet_message_orders as l', 'l.order_id', 'o.id')
    .innerJoin('wallet_messages as m', 'm.hash', 'l.message_hash')
    .where('o.status', '=', 'processing')
    .where('m.state', '=', 'held')
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The held-for-review queue (the console's /orders?held=1): heldOrderCount's orders, oldest first. */
export async function listHeldOrders(db: Kysely<Database>, limit: number): Promise<Order[]> {
  const rows = await db
    .selectFrom('orders as o')
    .selectAll('o')
    .where('o.status', '=', 'processing')
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('wallet_message_orders as l')
          .innerJoin('wallet_messages as m', 'm.hash', 'l.message_hash')
          .select('l.order_id')
          .whereRef('l.order_id', '=', 'o.id')
          .where('m.state', '=', 'held'),
      ),
    )
    .orderBy('o.created_at')
    .orderBy('o.id')
    .limit(limit)
    .execute();
  return rows.map(orderFromRow);
}

export interface HeldEvidence {
  /** The Fragment request the order paid for; null when no payment was recorded. */
  fragmentReqId: string | null;
  /** The paying wallet's messages for the order, oldest first. */
  walletMessages: { wallet: string; seqno: number; state: string }[];
}

/**
 * The evidence the held queue is decided on, for all its orders in one query (not orderDetails
 * once per row): each order's Fragment request and paying-wallet messages.
 */
export async function heldEvidence(db: Kysely<Database>, orderIds: string[]): Promise<Map<string, HeldEvidence>> {
  const evidence = new Map<string, HeldEvidence>();
  if (orderIds.length === 0) return evidence;
  const rows = await db
    .selectFrom('wallet_message_orders as l')
    .innerJoin('wallet_messages as m', 'm.hash', 'l.message_hash')
    .leftJoin('live_payments as p', 'p.order_id', 'l.order_id')
    .select(['l.order_id', 'p.fragment_req_id', 'm.wallet', 'm.seqno', 'm.state'])
    .where('l.order_id', 'in', orderIds)
    .orderBy('l.order_id')
    .orderBy('m.created_at')
    .execute();
  for (const row of rows) {
    const entry = evidence.get(row.order_id) ?? { fragmentReqId: row.fragment_req_id, walletMessages: [] };
    entry.walletMessages.push({ wallet: row.wallet, seqno: Number(row.seqno), state: row.state });
    evidence.set(row.order_id, entry);
  }
  return evidence;
}

/** The queue: orders waiting for the worker (fulfillment_pending) in `mode`, and when the oldest was created. */
export async function queueSummary(db: Kysely<Database>, mode: Mode): Promise<{ depth: number; oldestAt: number | null }> {
  const row = await db
    .selectFrom('orders')
    .select((eb) => [eb.fn.countAll<string | bigint>().as('n'), eb.fn.min('created_at').as('oldest')])
    .where('status', '=', 'fulfillment_pending')
    .where('mode', '=', mode)
    .executeTakeFirst();
  return { depth: Number(row?.n ?? 0), oldestAt: row?.oldest === null || row?.oldest === undefined ? null : Number(row.oldest) };
}
