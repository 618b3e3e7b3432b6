import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';
import { type Decimal, pow10 } from '../domain/decimal.js';
import { formatTon } from '../domain/money.js';
import type { FailureReason, OrderStatus } from '../domain/order-status.js';
import { refusalMessage } from '../domain/recipient-refusal.js';
import type { Database } from '../db/schema.js';
import type { Order } from '../orders/order.js';
import { appendEvent } from '../orders/order-store.js';
import { transitionOrder } from '../orders/transitions.js';
import { type CircuitBreaker, paused } from './breaker.js';
import type { FragmentClient, WalletAccount } from './fragment/client.js';
import { FragmentError } from './fragment/errors.js';
import { recordKyc } from './fragment/session-store.js';
import { findPayment, storePayment } from './live-payments.js';
import type { PaymentSender, StoredPayment } from './payment-sender.js';

/**
 * The worker step of live orders, Fragment half (docs/architecture.md "Ports and adapters"). Each call does one step and
 * schedules the next through next_run_at, like test mode:
 *
 * 1. fulfillment_pending → processing (order.processing).
 * 2. processing, no payment request yet: search the recipient, init the purchase, get the
 *    transaction for our wallet, check the amount against the reserve (money safety), store the
 *    payment request (live_payments), then hand over to the PaymentSender.
 * 3. processing with a stored payment request: the PaymentSender's turn, every time it is due.
 *
 * Outcomes before anything is stored (so nothing can have been paid): a refused recipient fails
 * the order with the refusal's reason (not_found, not_a_user, already_premium, not_eligible); transient errors record order.attempt_failed and retry with
 * backoff; upstream unavailable opens the breaker and the order waits; an order still without a
 * payment request LIVE_MAX_WAIT_SECONDS after creation fails upstream_unavailable; an upstream
 * amount (+ fee allowance) above the reserve (+ tolerance) fails price_moved. Failures release
 * the reserve through the usual transition.
 */
export interface LiveStepOptions {
  db: Kysely<Database>;
  client: FragmentClient;
  breaker: CircuitBreaker;
  /** The paying wallet as TON Connect describes it; undefined until it is configured. */
  wallet: () => Promise<WalletAccount | undefined>;
  sender: PaymentSender;
  logger: Logger;
  maxWaitMs: number;
  feeAllowance: bigint;
  tolerancePercent: Decimal;
  /** First retry delay after a transient error; doubles per attempt up to retryMaxMs. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Told about every upstream error (a metric). */
  onUpstreamError?: (error: FragmentError) => void;
}

export function liveFulfilmentStep(options: LiveStepOptions) {
  return async (order: Order, now: number): Promise<OrderStatus | undefined> => {
    if (order.status === 'fulfillment_pending') {
      return (await transitionOrder(options.db, order, { to: 'processing', nextRunAt: now, now })) ? 'processing' : undefined;
    }
    if (order.status !== 'processing') return undefined;
    const stored = await findPayment(options.db, order.id);
    if (stored) return handOver(options, order, stored, now);
    return requestPayment(options, order, now);
  };
}

async function requestPayment(options: LiveStepOptions, order: Order, now: number): Promise<OrderStatus | undefined> {
  const { db, breaker } = options;
  if (now >= deadline(options, order)) {
    return fail(options, order, 'upstream_unavailable', 'The upstream marketplace stayed unavailable too long; the order was not bought and its amount was released.', now);
  }
  const state = await breaker.read();
  const wallet = paused(state) ? undefined : await options.wallet();
  if (!wallet) {
    // Wait for the breaker's probe, the operator's resume (or the wallet), but never past the max wait.
    const retryAt = Math.max(now + 1000, state.retryAt ?? now + 30_000);
    await reschedule(db, order, Math.min(retryAt, deadline(options, order)), now);
    return 'processing';
  }
  try {
    const payment = await buy(options, order, wallet, now);
    const moved = priceMoved(options, order, payment.amount);
    if (moved) return fail(options, order, 'price_moved', moved, now);
    const stored = await storePayment(db, payment);
    return handOver(options, order, stored, now);
  } catch (error) {
    if (!(error instanceof FragmentError)) throw error;
    if (!(error instanceof PriceMoved)) options.onUpstreamError?.(error);
    return upstreamFailed(options, order, error, now);
  }
}

/** When an order still without a payment request gives up (LIVE_MAX_WAIT_SECONDS after creation). */
function deadline(options: LiveStepOptions, order: Order): number {
  return order.createdAt + options.maxWaitMs + 1;
}

/** search → init (amount checked early) → transaction: the payment request, not yet stored. */
async function buy(options: LiveStepOptions, order: Order, wallet: WalletAccount, now: number): Promise<StoredPayment> {
  const { client, breaker, db } = options;
  const found = await client.searchRecipient(order.product, order.recipient, order.quantity);
  const invoice = await client.initBuy(order.product, found.token, order.quantity);
  const moved = priceMoved(options, order, invoice.amount);
  if (moved) throw new PriceMoved(moved);
  const request = await client.getTransaction(order.product, invoice.reqId, wallet);
  await breaker.recordSuccess(now);
  await recordKyc(db, 'verified', now);
  return {
    orderId: order.id,
    fragmentReqId: invoice.reqId,
    recipientName: found.name,
    quotedAmount: invoice.amount,
    destination: request.message.address,
    amount: request.message.amount,
    payload: request.message.payload,
    validUntil: request.validUntil * 1000,
    createdAt: now,
  };
}

class PriceMoved extends FragmentError {
  constructor(readonly explanation: string) {
    super('price_changed', explanation);
  }
}

/**
 * Money safety (docs/upstreams.md "Fragment: payment request"): what the wallet will spend (Fragment's amount + the fee
 * allowance) must stay within the reserved amount + LIVE_PRICE_TOLERANCE_PERCENT of it. In
 * integers: (amount + fee) × 100 × 10^s ≤ reserved × (100 × 10^s + tolerance units).
 */
function priceMoved(options: LiveStepOptions, order: Order, upstream: bigint): string | undefined {
  const spend = upstream + options.feeAllowance;
  if (withinReserve(upstream, order.amount, options.feeAllowance, options.tolerancePercent)) return undefined;
  return `The upstream price moved: paying it would cost ${formatTon(spend)} TON with fees, more than the ${formatTon(order.amount)} TON reserved allows; the amount was released.`;
}

/** The money-safety rule itself, shared with the wallet's re-check at signing. */
export function withinReserve(upstream: bigint, reserved: bigint, feeAllowance: bigint, tolerancePercent: Decimal): boolean {
  const { units, scale } = tolerancePercent;
  return (upstream + feeAllowance) * 100n * pow10(scale) <= reserved * (100n * pow10(scale) + units);
}

async function upstreamFailed(options: LiveStepOptions, order: Order, error: FragmentError, now: number): Promise<OrderStatus | undefined> {
  const { breaker, db, logger } = options;
  if (error instanceof PriceMoved) return fail(options, order, 'price_moved', error.explanation, now);
  const refusal = error.refusal;
  if (refusal) {
    await breaker.recordSuccess(now);
    return fail(options, order, refusal, refusalMessage(refusal, order.recipient, order.product), now);
  }
  if (error.kind === 'unavailable') {
    if (error.code === 'kyc_required') await recordKyc(db, 'required', now);
    await breaker.open(error.code, error.message, now);
    const state = await breaker.read();
    const nextRunAt = Math.min(state.retryAt ?? now + 30_000, deadline(options, order));
    await attemptFailed(db, order, { reason: 'upstream_unavailable', message: 'The upstream marketplace is unavailable; the order waits and will be retried.', nextRunAt, now });
    return 'processing';
  }
  await breaker.recordTransient(error.message, now);
  const attempts = await attemptCount(db, order.id);
  const delay = Math.min(options.retryMaxMs ?? 60_000, (options.retryBaseMs ?? 2_000) * 2 ** Math.min(attempts, 16));
  logger.warn({ order_id: order.id, code: error.code, attempt: attempts + 1 }, 'live order: transient upstream error, will retry');
  await attemptFailed(db, order, { reason: 'upstream_error', message: 'The upstream marketplace did not answer properly; retrying.', nextRunAt: now + delay, now });
  return 'processing';
}

async function handOver(options: LiveStepOptions, order: Order, payment: StoredPayment, now: number): Promise<OrderStatus | undefined> {
  const progress = await options.sender.pay(order, payment, now);
  if (progress.kind === 'delivered') {
    return (await transitionOrder(options.db, order, { to: 'delivered', nextRunAt: null, now })) ? 'delivered' : undefined;
  }
  if (progress.kind === 'failed') return fail(options, order, progress.reason, progress.message, now);
  if (progress.kind === 'reinit') {
    // A new invoice is asked for at once (the old one expired with nothing paid).
    await reschedule(options.db, order, now, now);
    return 'processing';
  }
  await reschedule(options.db, order, progress.checkAt, now);
  return 'processing';
}

function fail(options: LiveStepOptions, order: Order, reason: FailureReason, message: string, now: number): Promise<OrderStatus | undefined> {
  return transitionOrder(options.db, order, { to: 'failed', failureReason: reason, message, nextRunAt: null, now }).then((moved) => (moved ? 'failed' : undefined));
}

/** When to look at the order again; gives the lease back. */
async function reschedule(db: Kysely<Database>, order: Order, nextRunAt: number | null, _now: number): Promise<void> {
  await db.updateTable('orders').set({ next_run_at: nextRunAt, lease_owner: null, lease_until: null }).where('id', '=', order.id).where('status', '=', 'processing').execute();
}

async function attemptCount(db: Kysely<Database>, orderId: string): Promise<number> {
  const row = await db.selectFrom('orders').select('attempts').where('id', '=', orderId).executeTakeFirst();
  return Number(row?.attempts ?? 0);
}

/** order.attempt_failed (docs/api.md "Events": a transient upstream problem, will retry) and the next try, in one transaction. */
async function attemptFailed(db: Kysely<Database>, order: Order, input: { reason: FailureReason; message: string; nextRunAt: number; now: number }): Promise<void> {
  await db.transaction().execute(async (tx) => {
    const updated = await tx
      .updateTable('orders')
      .set({ attempts: sql`attempts + 1`, next_run_at: input.nextRunAt, updated_at: input.now, lease_owner: null, lease_until: null })
      .where('id', '=', order.id)
      .where('status', '=', 'processing')
      .executeTakeFirst();
    if (updated.numUpdatedRows !== 1n) return;
    await appendEvent(tx, { orderId: order.id, type: 'order.attempt_failed', status: 'processing', data: { reason: input.reason, message: input.message }, now: input.now });
  });
}
