import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { watcherStatus, type WatcherStatus } from '../deposits/status.js';
import { unmatchedCount } from '../deposits/store.js';
import type { OrderStatus } from '../domain/order-status.js';
import { formatTon } from '../domain/money.js';
import { MS_PER_DAY } from '../domain/time.js';
import { averagePayment } from '../live/live-payments.js';
import { heldOrderCount, queueSummary } from '../orders/admin.js';
import { orderDaysOfAll } from '../orders/order-days.js';
import { outboxBacklog } from '../webhooks/outbox.js';
import { collectStats, startOfUtcDay } from './stats.js';

/**
 * The figures of the console's home page (docs/operations.md "Operator console"), live mode,
 * read from the database: what needs a person, the queue, today's orders, the last 30 days,
 * the deposit watcher and the webhook backlog. The breaker and the paying wallet's balance come
 * from Live and the chain (src/live).
 */
export const HOME_DAYS = 30;

export interface HomeFigures {
  held: number;
  unmatched: number;
  queue: { depth: number; oldestAt: number | null };
  today: Record<OrderStatus, number>;
  /** Per day of the last 30 (UTC), in the dashboard chart's shape (src/http/html/assets/app.js). */
  chart: { days: number[]; delivered: number[]; failed: number[]; spent: string[]; totals: { delivered: number; failed: number; spent: string } };
  deposits: WatcherStatus | undefined;
  webhookBacklog: number;
  /** What the paying wallet paid per live order on average over the 30 days (nanotons). */
  averagePayment: bigint | undefined;
}

export async function homeFigures(db: Kysely<Database>, options: { depositAddress: string | undefined }, now = Date.now()): Promise<HomeFigures> {
  const today = Math.floor(now / MS_PER_DAY);
  const first = today - HOME_DAYS + 1;
  const [held, unmatched, queue, stats, days, deposits, webhookBacklog, average] = await Promise.all([
    heldOrderCount(db),
    unmatchedCount(db),
    queueSummary(db, 'live'),
    collectStats(db, { since: startOfUtcDay(now), until: now + 1 }, now),
    orderDaysOfAll(db, 'live', first, today),
    options.depositAddress ? watcherStatus(db, options.depositAddress, now) : undefined,
    outboxBacklog(db),
    averagePayment(db, first * MS_PER_DAY),
  ]);
  const delivered = new Array<number>(HOME_DAYS).fill(0);
  const failed = new Array<number>(HOME_DAYS).fill(0);
  const spent = new Array<bigint>(HOME_DAYS).fill(0n);
  for (const row of days) {
    const i = row.day - first;
    if (i < 0 || i >= HOME_DAYS) continue;
    delivered[i] = row.delivered;
    failed[i] = row.failed;
    spent[i] = row.deliveredAmount;
  }
  const sum = (list: number[]) => list.reduce((a, b) => a + b, 0);
  return {
    held,
    unmatched,
    queue,
    today: stats.ordersToday.counts.live,
    chart: {
      days: Array.from({ length: HOME_DAYS }, (_, i) => ((first + i) * MS_PER_DAY) / 1000),
      delivered,
      failed,
      spent: spent.map(formatTon),
      totals: { delivered: sum(delivered), failed: sum(failed), spent: formatTon(spent.reduce((a, b) => a + b, 0n)) },
    },
    deposits,
    webhookBacklog,
    averagePayment: average,
  };
}
