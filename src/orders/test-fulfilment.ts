import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { OrderStatus } from '../domain/order-status.js';
import { refusalMessage } from '../domain/recipient-refusal.js';
import { type TestOutcome, testOutcome } from '../providers/simulated/test-recipients.js';
import type { Order } from './order.js';
import { type Transition, transitionMany } from './transitions.js';

export interface TestFulfilmentTiming {
  /** processing → final (TEST_FULFILMENT_DELAY_MS). */
  delayMs: number;
  /** processing → delivered for @test_slow. */
  slowDelayMs: number;
}

/**
 * Test mode's simulated fulfilment (docs/api.md "Test mode"). Each call takes a batch of claimed
 * orders through the steps that are due and schedules the next through `next_run_at`, so a
 * slow order holds no worker and a restart resumes where the database says. The steps only
 * write to the database, so the worker runs a whole batch of them in the transaction that
 * claims them (one commit per batch), written together (transitionMany).
 */
export function testFulfilmentStep(timing: TestFulfilmentTiming) {
  return async (tx: Kysely<Database>, orders: Order[], now: number): Promise<Array<OrderStatus | undefined>> => {
    const statuses = await transitionMany(
      tx,
      orders.map((order) => ({ order, steps: dueTransitions(order, timing, now) })),
    );
    return orders.map((order) => statuses.get(order.id));
  };
}

/**
 * The transitions due now. A step already due (no delay configured) is taken in the same
 * transaction rather than costing another claim and another commit.
 */
function dueTransitions(order: Order, timing: TestFulfilmentTiming, now: number): Transition[] {
  const outcome = testOutcome(order.recipient, order.product);
  const steps: Transition[] = [];
  let status = order.status;
  for (let step = nextTransition(order, status, outcome, timing, now); step; step = nextTransition(order, status, outcome, timing, now)) {
    steps.push(step);
    if (step.nextRunAt === null || step.nextRunAt > now) break;
    status = step.to;
  }
  return steps;
}

function nextTransition(order: Order, status: OrderStatus, outcome: TestOutcome, timing: TestFulfilmentTiming, now: number): Transition | undefined {
  if (status === 'fulfillment_pending') {
    const delay = outcome === 'slow' ? timing.slowDelayMs : timing.delayMs;
    return { to: 'processing', nextRunAt: now + delay, now };
  }
  if (status !== 'processing') return undefined;
  if (typeof outcome === 'object') {
    const reason = outcome.refused;
    return { to: 'failed', failureReason: reason, message: refusalMessage(reason, order.recipient, order.product), nextRunAt: null, now };
  }
  if (outcome === 'recipient_invalid') {
    return { to: 'failed', failureReason: 'recipient_invalid', message: 'The recipient does not exist or cannot receive this product.', nextRunAt: null, now };
  }
  if (outcome === 'upstream_error') {
    return { to: 'failed', failureReason: 'upstream_error', message: 'The upstream marketplace rejected the purchase (test mode simulation).', nextRunAt: null, now };
  }
  return { to: 'delivered', nextRunAt: null, now };
}
