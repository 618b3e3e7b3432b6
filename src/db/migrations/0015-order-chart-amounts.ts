import { type Kysely, sql } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * `orders_list_status` gains `amount` as its last column, so the overview's orders-per-day chart
 * (src/http/web/charts.ts) reads only this index: count and sum per day and status, without a
 * table row per order. No extra index write: an order's amount never changes, and its entry here
 * is already rewritten when its status changes. GET /orders?status= uses the same prefix.
 *
 * `journal_daily` (account_id, mode, created_at, seq, balance_available) gives the balance chart
 * the last movement before each day's end as one index-only seek. It costs one index write per
 * movement: the journal had no index by time since 0012 (nothing read it by time then), and
 * without one each day's balance is a scan of the account's whole journal (10–15 s with a
 * million rows on SQLite). docs/dashboard.md ("Charts") has the timings with a million orders.
 */
export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await sql`drop index orders_list_status`.execute(db);
  await db.schema.createIndex('orders_list_status').on('orders').columns(['account_id', 'mode', 'status', 'created_at', 'id', 'amount']).execute();
  await db.schema.createIndex('journal_daily').on('journal').columns(['account_id', 'mode', 'created_at', 'seq', 'balance_available']).execute();
}
