import type { Mode } from '../../domain/api-key.js';
import { formatTon } from '../../domain/money.js';
import { MS_PER_DAY } from '../../domain/time.js';
import type { Db } from '../../db/engine.js';
import { availableAtDayEnds } from '../../ledger/balance-days.js';
import { orderDays } from '../../orders/order-days.js';

/**
 * The overview's charts: per day of the last 30 (UTC), the orders delivered and failed (by the
 * day they were created) with the TON spent on delivered ones, and the available balance at the
 * end of each day. One statement each, on the daily rollups of migration 0018: at most 30 rows of
 * order_days, and the balance row with at most 30 rows of balance_days, whatever the number of
 * orders (docs/architecture.md "Daily rollups"; timings in docs/dashboard.md, "Charts").
 */
export const CHART_DAYS = 30;

export interface ChartData {
  /** Each day's start, epoch seconds (uPlot's x axis), oldest first; the last one is today. */
  days: number[];
  delivered: number[];
  failed: number[];
  /** TON spent on the day's delivered orders, decimal strings (never floats). */
  spent: string[];
  /** Available balance at the end of each day, decimal TON strings. */
  balance: string[];
  totals: { delivered: number; failed: number; spent: string };
}

export async function chartData(db: Db, ref: { accountId: string; mode: Mode }, now = Date.now()): Promise<ChartData> {
  const today = Math.floor(now / MS_PER_DAY);
  const first = today - CHART_DAYS + 1;
  const [days, ends] = await Promise.all([orderDays(db.kysely, ref, first, today), availableAtDayEnds(db.kysely, ref, first, CHART_DAYS)]);

  const delivered = new Array<number>(CHART_DAYS).fill(0);
  const failed = new Array<number>(CHART_DAYS).fill(0);
  const spent = new Array<bigint>(CHART_DAYS).fill(0n);
  for (const row of days) {
    const i = row.day - first;
    if (i < 0 || i >= CHART_DAYS) continue;
    delivered[i] = row.delivered;
    failed[i] = row.failed;
    spent[i] = row.deliveredAmount;
  }
  const balance = ends.map(formatTon);
  return {
    days: Array.from({ length: CHART_DAYS }, (_, i) => ((first + i) * MS_PER_DAY) / 1000),
    delivered,
    failed,
    spent: spent.map(formatTon),
    balance,
    totals: { delivered: delivered.reduce((a, b) => a + b, 0), failed: failed.reduce((a, b) => a + b, 0), spent: formatTon(spent.reduce((a, b) => a + b, 0n)) },
  };
}
