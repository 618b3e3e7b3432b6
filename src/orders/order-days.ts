import { type Kysely, sql } from 'kysely';
import type { Mode } from '../domain/api-key.js';
import type { OrderStatus } from '../domain/order-status.js';
import { utcDay } from '../domain/time.js';
import { preparedQuery } from '../db/prepared.js';
import type { Database } from '../db/schema.js';
import type { Order } from './order.js';

/**
 * `order_days` (migration 0018): per account, mode and UTC day of creation, the orders delivered
 * and failed and their amounts. A transition to a final status adds its order here in the
 * transition's own transaction (transitions.ts), so the rows always equal a count of the orders
 * themselves; the dashboard's orders-per-day chart reads at most 30 of them
 * (docs/architecture.md "Daily rollups").
 */

export interface OrderDay {
  day: number;
  delivered: number;
  deliveredAmount: bigint;
  failed: number;
  failedAmount: bigint;
}

/** One order reaching a final status. */
export interface FinalOrder {
  order: Pick<Order, 'accountId' | 'mode' | 'createdAt' | 'amount'>;
  status: OrderStatus;
}

const KEY = ['account_id', 'mode', 'day'] as const;
const sumOf = (column: 'delivered' | 'delivered_amount' | 'failed' | 'failed_amount') => sql<bigint>`${sql.ref(`order_days.${column}`)} + ${sql.ref(`excluded.${column}`)}`;
const CHUNK = 500;

/**
 * Adds the orders to their days: one upsert, of one row per account, mode and day (PostgreSQL
 * refuses two rows of one key in one upsert). The rows go in key order, so that two
 * transactions adding to the same days take their row locks in the same order.
 */
export async function addToOrderDays(tx: Kysely<Database>, finals: readonly FinalOrder[]): Promise<void> {
  const rows = new Map<string, { account_id: string; mode: Mode; day: number; delivered: number; delivered_amount: bigint; failed: number; failed_amount: bigint }>();
  for (const { order, status } of finals) {
    if (status !== 'delivered' && status !== 'failed') continue;
    const day = utcDay(order.createdAt);
    const key = `${order.accountId}\u0000${order.mode}\u0000${String(day).padStart(8, '0')}`;
    let row = rows.get(key);
    if (!row) rows.set(key, (row = { account_id: order.accountId, mode: order.mode, day, delivered: 0, delivered_amount: 0n, failed: 0, failed_amount: 0n }));
    if (status === 'delivered') {
      row.delivered += 1;
      row.delivered_amount += order.amount;
    } else {
      row.failed += 1;
      row.failed_amount += order.amount;
    }
  }
  const sorted = [...rows.keys()].sort().map((key) => rows.get(key)!);
  if (sorted.length === 1) {
    const row = sorted[0]!;
    await addOneDay(tx, row.account_id, row.mode, row.day, row.delivered, row.delivered_amount, row.failed, row.failed_amount);
    return;
  }
  for (let i = 0; i < sorted.length; i += CHUNK) {
    await tx
      .insertInto('order_days')
      .values(sorted.slice(i, i + CHUNK))
      .onConflict((oc) =>
        oc.columns(KEY).doUpdateSet({ delivered: sumOf('delivered'), delivered_amount: sumOf('delivered_amount'), failed: sumOf('failed'), failed_amount: sumOf('failed_amount') }),
      )
      .execute();
  }
}

/** The one-row case (a single transition, or a batch of one account's orders of one day), compiled once. */
const addOneDay = preparedQuery((db, accountId: string, mode: Mode, day: number, delivered: number, deliveredAmount: bigint, failed: number, failedAmount: bigint) =>
  db
    .insertInto('order_days')
    .values({ account_id: accountId, mode, day, delivered, delivered_amount: deliveredAmount, failed, failed_amount: failedAmount })
    .onConflict((oc) =>
      oc.columns(KEY).doUpdateSet({ delivered: sumOf('delivered'), delivered_amount: sumOf('delivered_amount'), failed: sumOf('failed'), failed_amount: sumOf('failed_amount') }),
    ),
);

const selectOrderDays = preparedQuery((db, accountId: string, mode: Mode, fromDay: bigint, toDay: bigint) =>
  db
    .selectFrom('order_days')
    .select(['day', 'delivered', 'delivered_amount', 'failed', 'failed_amount'])
    .where('account_id', '=', accountId)
    .where('mode', '=', mode)
    .where('day', '>=', fromDay)
    .where('day', '<=', toDay),
);

/** The days from `fromDay` to `toDay` (inclusive) that have final orders, in no particular order. */
export async function orderDays(db: Kysely<Database>, ref: { accountId: string; mode: Mode }, fromDay: number, toDay: number): Promise<OrderDay[]> {
  const rows = await selectOrderDays(db, ref.accountId, ref.mode, BigInt(fromDay), BigInt(toDay));
  return rows.map((row) => ({
    day: Number(row.day),
    delivered: Number(row.delivered),
    deliveredAmount: BigInt(row.delivered_amount),
    failed: Number(row.failed),
    failedAmount: BigInt(row.failed_amount),
  }));
}

/** The days from `fromDay` to `toDay` of every account of one mode, summed (the operator console's chart). */
export async function orderDaysOfAll(db: Kysely<Database>, mode: Mode, fromDay: number, toDay: number): Promise<OrderDay[]> {
  const rows = await db
    .selectFrom('order_days')
    .select([
      'day',
      sql<string>`sum(delivered)`.as('delivered'),
      sql<string>`sum(delivered_amount)`.as('delivered_amount'),
      sql<string>`sum(failed)`.as('failed'),
      sql<string>`sum(failed_amount)`.as('failed_amount'),
    ])
    .where('mode', '=', mode)
    .where('day', '>=', BigInt(fromDay))
    .where('day', '<=', BigInt(toDay))
    .groupBy('day')
    .execute();
  return rows.map((row) => ({
    day: Number(row.day),
    delivered: Number(row.delivered),
    deliveredAmount: BigInt(String(row.delivered_amount)),
    failed: Number(row.failed),
    failedAmount: BigInt(String(row.failed_amount)),
  }));
}
