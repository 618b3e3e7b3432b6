import type { Kysely } from 'kysely';
import type { Mode } from '../domain/api-key.js';
import { preparedQuery } from '../db/prepared.js';
import type { Database } from '../db/schema.js';
import { MAX_TEST_BALANCE } from './test-funding.js';

/**
 * The low-balance alert of a balance (docs/api.md "Low-balance alert"): a threshold per account
 * and mode, kept on the balance row (`low_balance_threshold`, null = none). Every movement's
 * UPDATE returns it, and `applyMovement` tells whether that movement crossed it downwards
 * (`crossedBelow`); the caller then writes the `balance.low` event in the same transaction
 * (src/webhooks/outbox.ts). There is no armed flag to keep: the alert is re-armed by any
 * movement that brings the available balance back to or above the threshold.
 *
 * Setting or changing the threshold sends nothing, even when the balance is already below it:
 * the dashboard's banner says so at once, and the next event needs a crossing.
 */

/** The largest threshold accepted: as much as a balance can hold. */
export const MAX_LOW_BALANCE_THRESHOLD = MAX_TEST_BALANCE;

class ThresholdError extends Error {}

/** Sets (or, with null, removes) the threshold of a balance. False when the account has no such balance. */
export async function setLowBalanceThreshold(db: Kysely<Database>, ref: { accountId: string; mode: Mode }, threshold: bigint | null): Promise<boolean> {
  if (threshold !== null && (threshold <= 0n || threshold > MAX_LOW_BALANCE_THRESHOLD)) {
    throw new ThresholdError('the threshold must be more than 0 and at most the largest balance');
  }
  const result = await db.updateTable('balances').set({ low_balance_threshold: threshold }).where('account_id', '=', ref.accountId).where('mode', '=', ref.mode).executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

export interface LowBalanceAlert {
  mode: Mode;
  /** Null: no alert set. */
  threshold: bigint | null;
  available: bigint;
  /** The available balance is below the threshold (the dashboard's banner). */
  below: boolean;
}

const selectAlerts = preparedQuery((db, accountId: string) =>
  db.selectFrom('balances').select(['mode', 'available', 'low_balance_threshold']).where('account_id', '=', accountId).orderBy('mode'),
);

/** Both modes' alerts of an account (live first). */
export async function lowBalanceAlerts(db: Kysely<Database>, accountId: string): Promise<LowBalanceAlert[]> {
  const rows = await selectAlerts(db, accountId);
  return rows.map((row) => {
    const threshold = row.low_balance_threshold === null ? null : BigInt(row.low_balance_threshold);
    const available = BigInt(row.available);
    return { mode: row.mode, threshold, available, below: threshold !== null && available < threshold };
  });
}
