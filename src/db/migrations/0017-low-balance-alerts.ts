import type { Kysely } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * `balances.low_balance_threshold`: the client's low-balance alert of a balance (docs/api.md
 * "Low-balance alert"), in nanotons, null when none is set. On the balance row itself, so the
 * movement's own conditional UPDATE returns it beside the new balance: a crossing is seen in the
 * statement that makes it, with no extra query (and none at all when no threshold is set).
 * Nullable, no default: adding it rewrites no row on either engine.
 */
export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema.alterTable('balances').addColumn('low_balance_threshold', 'bigint').execute();
}
