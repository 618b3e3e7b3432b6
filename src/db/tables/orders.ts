import type { Generated } from 'kysely';
import type { Int, NullableInt } from './columns.js';

/** Orders, their events, their per-day rollup and locked quotes (migrations 0001, 0004, 0013, 0015, 0018). */

/** Per account, mode and UTC day of creation: the orders that reached a final status (migration 0018; src/orders/order-days.ts). */
export interface OrderDaysTable {
  account_id: string;
  mode: 'live' | 'test';
  /** `created_at / 86400000` of the orders counted. */
  day: Int;
  delivered: Int;
  delivered_amount: Int;
  failed: Int;
  failed_amount: Int;
}

export interface OrdersTable {
  id: string;
  account_id: string;
  mode: 'live' | 'test';
  idempotency_key: string;
  fingerprint: string;
  product: 'stars' | 'premium';
  recipient: string;
  quantity: Int;
  amount: Int;
  external_id: string | null;
  status: 'fulfillment_pending' | 'processing' | 'delivered' | 'failed';
  failure_reason: string | null;
  created_at: Int;
  updated_at: Int;
  /** When a worker should next act on the order; null once final. */
  next_run_at: NullableInt;
  lease_owner: string | null;
  lease_until: NullableInt;
  attempts: Generated<bigint>;
  /**
   * Internal, never in the API: ascending in creation order, so that the rows keyed by it (an
   * order's events and movements) are appended to the same few index pages. PostgreSQL fills it
   * (identity); on SQLite the insert does (order-store.ts nextOrderNumber).
   */
  order_no: Generated<bigint>;
}

export interface OrderEventsTable {
  id: string;
  order_id: string;
  /** The order's `order_no`: with `seq`, the key. */
  order_no: Int;
  /** Per-order sequence: breaks timestamp ties in the events array. */
  seq: Int;
  type: string;
  status: string;
  data: string;
  created_at: Int;
}

/** A price given by GET /quote, which one order may lock (POST /orders `quote_id`). */
export interface QuotesTable {
  id: string;
  account_id: string;
  mode: 'live' | 'test';
  product: 'stars' | 'premium';
  quantity: Int;
  amount: Int;
  created_at: Int;
  expires_at: Int;
  used_by_order_id: string | null;
}
