import { sql } from 'kysely';
import type { Mode } from '../../domain/api-key.js';
import { formatTon } from '../../domain/money.js';
import type { Db } from '../../db/engine.js';

/**
 * The overview's charts: per day of the last 30 (UTC), the orders delivered and failed with the
 * TON spent on delivered ones, and the available balance at the end of each day. One aggregate
 * query each: the orders grouped by day and status inside the database, read from the index
 * orders_list_status alone (it carries the amount); the balance as one index-only seek per day
 * on journal_daily (migration 0015). docs/dashboard.md ("Charts") has the timings with a million orders.
 */
export const CHART_DAYS = 30;
const DAY_MS = 86_400_000;

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
  const today = Math.floor(now / DAY_MS);
  const first = today - CHART_DAYS + 1;
  const since = first * DAY_MS;
  // A literal divisor: integer division on both engines, and the same expression in SELECT and GROUP BY.
  const day = sql<number>`created_at / ${sql.lit(DAY_MS)}`;
  const [orderRows, balanceRows] = await Promise.all([
    db.kysely
      .selectFrom('orders')
      .select([
        day.as('day'),
        'status',
        (eb) => eb.fn.countAll<string | number | bigint>().as('n'),
        (eb) => eb.fn.sum<string | number | bigint>('amount').as('amount'),
      ])
      .where('account_id', '=', ref.accountId)
      .where('mode', '=', ref.mode)
      .where('created_at', '>=', BigInt(since))
      .where('status', 'in', ['delivered', 'failed'])
      .groupBy([day, 'status'])
      .execute(),
    // The balance at the end of each day: per day, one backward seek on journal_daily
    // (account_id, mode, created_at, seq, balance_available) to the last movement before its end.
    sql<{ i: number; balance: string | number | bigint | null }>`${sql.join(
      Array.from({ length: CHART_DAYS }, (_, i) => {
        const end = (first + i + 1) * DAY_MS;
        return sql`select ${sql.lit(i)} as i, (select balance_available from journal where account_id = ${ref.accountId} and mode = ${ref.mode} and created_at < ${BigInt(end)} order by created_at desc, seq desc limit 1) as balance`;
      }),
      sql` union all `,
    )}`.execute(db.kysely),
  ]);

  const index = (d: unknown) => Number(d) - first;
  const delivered = new Array<number>(CHART_DAYS).fill(0);
  const failed = new Array<number>(CHART_DAYS).fill(0);
  const spent = new Array<bigint>(CHART_DAYS).fill(0n);
  for (const row of orderRows) {
    const i = index(row.day);
    if (i < 0 || i >= CHART_DAYS) continue;
    if (row.status === 'delivered') {
      delivered[i] = Number(row.n);
      spent[i] = BigInt(String(row.amount ?? 0));
    } else failed[i] = Number(row.n);
  }
  const ends = new Map(balanceRows.rows.map((row) => [Number(row.i), row.balance === null ? 0n : BigInt(String(row.balance))]));
  const balance = Array.from({ length: CHART_DAYS }, (_, i) => formatTon(ends.get(i) ?? 0n));
  return {
    days: Array.from({ length: CHART_DAYS }, (_, i) => ((first + i) * DAY_MS) / 1000),
    delivered,
    failed,
    spent: spent.map(formatTon),
    balance,
    totals: { delivered: delivered.reduce((a, b) => a + b, 0), failed: failed.reduce((a, b) => a + b, 0), spent: formatTon(spent.reduce((a, b) => a + b, 0n)) },
  };
}
