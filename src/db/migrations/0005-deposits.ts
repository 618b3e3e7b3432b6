import { type Kysely, sql } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * Live top-ups: every incoming transfer the deposit watcher decided about, and its
 * cursor per deposit wallet. A deposit row is unique per transaction hash, and the watcher
 * writes it, the ledger credit and the cursor in one transaction: re-reading a transaction
 * (restart, overlapping pages, a second watcher) finds the row and credits nothing.
 */
export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema
    .createTable('deposits')
    // Public id (dep_…): the API's list cursor.
    .addColumn('id', 'text', (c) => c.primaryKey())
    // Transaction hash, lowercase hex: the chain's identity of the transfer.
    .addColumn('tx_hash', 'text', (c) => c.notNull().unique())
    .addColumn('lt', 'bigint', (c) => c.notNull())
    // Deposit wallet (raw 0:…) and sender (raw), as the chain says.
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('sender', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount >= 0`))
    // The text comment as received (null: none, or not a text comment), at most 1024 characters kept.
    .addColumn('comment', 'text')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('credited', 'unmatched')`))
    // Why it was not credited automatically (kept after an operator assigns it).
    .addColumn('reason', 'text', (c) => c.check(sql`reason is null or reason in ('no_comment', 'memo_invalid', 'memo_unknown', 'below_minimum')`))
    .addColumn('account_id', 'text', (c) => c.references('accounts.id'))
    // Block time of the transaction (epoch ms), when the watcher saw it, when it was credited.
    .addColumn('chain_time', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('credited_at', 'bigint')
    .addColumn('credited_by', 'text', (c) => c.check(sql`credited_by is null or credited_by in ('watcher', 'operator')`))
    .addCheckConstraint('deposits_credited_has_account', sql`(status = 'credited') = (account_id is not null and credited_at is not null)`)
    .execute();
  await db.schema.createIndex('deposits_account').on('deposits').columns(['account_id', 'lt']).execute();
  await db.schema.createIndex('deposits_status').on('deposits').columns(['status', 'lt']).execute();

  await db.schema
    .createTable('deposit_cursors')
    .addColumn('address', 'text', (c) => c.primaryKey())
    // The newest fully processed transaction (docs/upstreams.md "toncenter v2": keep lt AND hash).
    .addColumn('lt', 'bigint', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull())
    .addColumn('chain_time', 'bigint', (c) => c.notNull())
    // Last poll that reached the chain's newest transaction (epoch ms).
    .addColumn('checked_at', 'bigint', (c) => c.notNull())
    .execute();

  // Memos gain a check character (11 characters). There is no production data yet, and a
  // memo is recreated, derived from the account id, on first use: the old ones simply go.
  await db.deleteFrom('deposit_memos').execute();
}
