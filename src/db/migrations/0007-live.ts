import { type Kysely, sql } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * Live fulfilment, Fragment side:
 * - live_settings: operator-set values every process reads on its next call (the Fragment
 *   session set by `fragment session set`, the last KYC observation). Values may be secrets:
 *   they are never logged or printed.
 * - live_breaker: the circuit breaker of the live upstream, one row per upstream, shared by
 *   every API node and worker so that all of them pause together.
 * - live_payments: the payment request Fragment issued for a live order (one current invoice per
 *   order), stored before anything is paid so that the paying side (part B) works from it.
 */
export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema
    .createTable('live_settings')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('live_breaker')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('closed', 'open')`))
    // Why it opened: session_expired, kyc_required, need_ton, access_denied, upstream_down, …
    .addColumn('reason', 'text')
    .addColumn('message', 'text')
    // Consecutive transient failures; at the threshold the breaker opens (upstream_down).
    .addColumn('failures', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('opened_at', 'bigint')
    // When the half-open probe may run (end of the cool-down).
    .addColumn('retry_at', 'bigint')
    // A probe in flight holds this until then, so that only one process probes at a time.
    .addColumn('probe_until', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('live_payments')
    .addColumn('order_id', 'text', (c) => c.primaryKey().references('orders.id'))
    .addColumn('fragment_req_id', 'text', (c) => c.notNull())
    .addColumn('recipient_name', 'text')
    // What init quoted, and what the transaction message asks (nanotons).
    .addColumn('quoted_amount', 'bigint', (c) => c.notNull())
    .addColumn('destination', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
    // Fragment's payload BOC exactly as received (base64url): passed through unchanged.
    .addColumn('payload', 'text', (c) => c.notNull())
    // Epoch milliseconds (Fragment's validUntil is unix seconds).
    .addColumn('valid_until', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}
