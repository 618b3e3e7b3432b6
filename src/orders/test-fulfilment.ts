import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { OrderStatus } from '../domain/order-status.js';
import { type TestOutcome, testOutcome } from '../providers/simulated/test-recipients.js';
import type { Order } from './order.js';
import { type Transition, transitionOrder } from './transitions.js';

export interface TestFulfilmentTiming {
  /** processing → final (TEST_FULFILMENT_DELAY_MS). */
  delayMs: number;
  /** processing → delivered for @test_slow. */
  slowDelayMs: number;
}

/**
 * Test mode's simulated fulfilment (CONTRACT "Test mode"). Each call performs the steps that
 * are due and schedules the next through `next_run_at`, so a slow order holds no worker and a
 * restart resumes where the database says. A step only writes to the database, so the worker runs a
 * whole batch of them in the transaction that claims them (one commit per batch).
 */
export function testFulfilmentStep(timing: TestFulfilmentTiming) {
  return async (tx: Kysely<Database>, order: Order, now: number): Promise<OrderStatus | undefined> => {
    const outcome = testOutcome(order.recipient);
    let current = order;
    let status: OrderStatus | undefined;
    // A step already due (no delay configured) is taken in the same transaction rather than
    // costing another claim and another commit.
    for (let transition = nextTransition(current, outcome, timing, now); transition; transition = nextTransition(current, outcome, timing, now)) {
      if (!(await transitionOrder(tx, current, transition))) return status;
      status = transition.to;
      if (transition.nextRunAt === null || transition.nextRunAt > now) return status;
      current = { ...current, status: transition.to, nextRunAt: transition.nextRunAt, updatedAt: now };
    }
    return status;
  };
}

function nextTransition(order: Order, outcome: TestOutcome, timing: TestFulfilmentTiming, now: number): Transition | undefined {
  if (order.status === 'fulfillment_pending') {
    const delay = outcome === 'slow' ? timing.slowDelayMs : timing.delayMs;
    return { to: 'processing', nextRunAt: now + delay, now };
  }
  if (order.status !== 'processing') return undefined;
  if (outcome === 'recipient_invalid') {
    return { to: 'failed', failureReason: 'recipient_invalid', message: 'The recipient does not exist or cannot receive this product.', nextRunAt: null, now };
  }
  if (outcome === 'upstream_error') {
    return { to: 'failed', failureReason: 'upstream_error', message: 'The upstream marketplace rejected the purchase (test mode simulation).', nextRunAt: null, now };
  }
  return { to: 'delivered', nextRunAt: null, now };
}
