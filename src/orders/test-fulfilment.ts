import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { testOutcome } from '../providers/simulated/test-recipients.js';
import type { Order } from './order.js';
import { transitionOrder } from './transitions.js';

export interface TestFulfilmentTiming {
  /** processing → final (TEST_FULFILMENT_DELAY_MS). */
  delayMs: number;
  /** processing → delivered for @test_slow. */
  slowDelayMs: number;
}

/**
 * Test mode's simulated fulfilment (CONTRACT "Test mode"). Each call performs one step and
 * schedules the next through `next_run_at`, so a slow order holds no worker and a restart
 * resumes where the database says.
 */
export function testFulfilmentStep(db: Kysely<Database>, timing: TestFulfilmentTiming) {
  return async (order: Order, now: number): Promise<void> => {
    const outcome = testOutcome(order.recipient);
    if (order.status === 'fulfillment_pending') {
      const delay = outcome === 'slow' ? timing.slowDelayMs : timing.delayMs;
      await transitionOrder(db, order, { to: 'processing', nextRunAt: now + delay, now });
    } else if (order.status === 'processing') {
      if (outcome === 'recipient_invalid') {
        await transitionOrder(db, order, { to: 'failed', failureReason: 'recipient_invalid', message: 'The recipient does not exist or cannot receive this product.', nextRunAt: null, now });
      } else if (outcome === 'upstream_error') {
        await transitionOrder(db, order, { to: 'failed', failureReason: 'upstream_error', message: 'The upstream marketplace rejected the purchase (test mode simulation).', nextRunAt: null, now });
      } else {
        await transitionOrder(db, order, { to: 'delivered', nextRunAt: null, now });
      }
    }
  };
}
