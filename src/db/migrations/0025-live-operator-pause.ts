import type { Kysely } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * The operator's maintenance pause of live fulfilment (docs/operations.md "Operator console",
 * `starport live pause`): three columns on the breaker's own row, so that every process sees it
 * in the one read of live_breaker it already does per order and per check. A pause is set
 * (`paused_reason`, `paused_by`, `paused_at`) and cleared only by the operator; the upstream's
 * state, failures and probe stay in the other columns and never touch these.
 *
 * And `wallet_messages_created`: the Live page lists the paying wallet's last payments, newest
 * first (src/live/wallet/recent-payments.ts), without sorting every message ever signed.
 */
export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema.alterTable('live_breaker').addColumn('paused_reason', 'text').execute();
  await db.schema.alterTable('live_breaker').addColumn('paused_by', 'text').execute();
  await db.schema.alterTable('live_breaker').addColumn('paused_at', 'bigint').execute();
  await db.schema.createIndex('wallet_messages_created').on('wallet_messages').column('created_at').execute();
}
