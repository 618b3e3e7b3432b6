import type { Kysely } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * A deposit-wallet backlog walked in pieces (docs/architecture.md "Live top-ups: the deposit watcher"): when more transactions are new
 * than one poll may page through (long downtime, or a first start on a wallet with a long
 * history), the watcher processes what it collected, newest first, and records here how far
 * back it got. At most one walk per deposit wallet:
 *
 * - top_*: the newest transaction when the walk started; the cursor moves there when the walk
 *   reaches the cursor (or the start of the history), never before: the transactions between
 *   are not all processed until then.
 * - resume_*: the oldest transaction processed so far. Every transaction from it up to top is
 *   processed; the next poll pages on from it, back towards the cursor.
 *
 * Written in the same database transaction as each processed transaction, like the cursor.
 */
export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema
    .createTable('deposit_walks')
    .addColumn('address', 'text', (c) => c.primaryKey())
    .addColumn('top_lt', 'bigint', (c) => c.notNull())
    // Lowercase hex, like the cursor's.
    .addColumn('top_hash', 'text', (c) => c.notNull())
    // Block time of the top transaction (epoch ms): the cursor's chain_time once the walk ends.
    .addColumn('top_chain_time', 'bigint', (c) => c.notNull())
    .addColumn('resume_lt', 'bigint', (c) => c.notNull())
    .addColumn('resume_hash', 'text', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}
