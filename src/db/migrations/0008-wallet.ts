import { type Kysely, sql } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * The paying wallet (docs/architecture.md "Live fulfilment: the paying wallet"):
 * - wallet_state: one row per paying wallet (raw address). Sending transactions lock it first
 *   (an UPDATE of the row: a row lock on PostgreSQL, the single writer under BEGIN IMMEDIATE on
 *   SQLite), so that every process signs for that wallet one at a time.
 * - wallet_messages: every signed external message, written (committed) before it is
 *   broadcast: the BOC, its normalized hash (TEP-467, the key to find it on chain), the seqno
 *   and valid_until it was signed with, and where it stands.
 * - wallet_message_orders: which orders a message pays (one internal message each) and, once
 *   the message is confirmed, whether the order's own out message was found in it.
 */
export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema
    .createTable('wallet_state')
    .addColumn('address', 'text', (c) => c.primaryKey())
    .addColumn('locked_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('wallet_messages')
    // The normalized external message hash, hex.
    .addColumn('hash', 'text', (c) => c.primaryKey())
    .addColumn('wallet', 'text', (c) => c.notNull())
    .addColumn('seqno', 'bigint', (c) => c.notNull())
    // Epoch milliseconds (the message's valid_until is whole unix seconds).
    .addColumn('valid_until', 'bigint', (c) => c.notNull())
    // The external message BOC, base64: re-broadcast as is; public once on chain, no secret.
    .addColumn('boc', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('signed', 'broadcast', 'confirmed', 'expired', 'held')`))
    .addColumn('total', 'bigint', (c) => c.notNull())
    .addColumn('tx_hash', 'text')
    .addColumn('tx_lt', 'text')
    .addColumn('broadcasts', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('last_broadcast_at', 'bigint')
    // Cross-process de-duplication of chain look-ups: one process claims each check.
    .addColumn('checked_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('resolved_at', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('wallet_messages_wallet_state').on('wallet_messages').columns(['wallet', 'state']).execute();

  await db.schema
    .createTable('wallet_message_orders')
    .addColumn('message_hash', 'text', (c) => c.notNull().references('wallet_messages.hash'))
    .addColumn('order_id', 'text', (c) => c.notNull().references('orders.id'))
    .addColumn('destination', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull())
    // Hash (hex) of the body cell: Fragment's payload, passed through unchanged.
    .addColumn('body_hash', 'text', (c) => c.notNull())
    // pending until the message is resolved; then paid (own out message found) or unpaid.
    .addColumn('outcome', 'text', (c) => c.notNull().check(sql`outcome in ('pending', 'paid', 'unpaid', 'held')`))
    .addPrimaryKeyConstraint('wallet_message_orders_pk', ['message_hash', 'order_id'])
    .execute();
  await db.schema.createIndex('wallet_message_orders_order').on('wallet_message_orders').column('order_id').execute();
}
