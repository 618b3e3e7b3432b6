import type { Kysely } from 'kysely';
import type { Mode } from '../domain/api-key.js';
import { formatTon } from '../domain/money.js';
import type { Db } from '../db/engine.js';
import type { Database } from '../db/schema.js';
import { enqueueBalanceLowEvent } from '../webhooks/outbox.js';
import { balanceLow } from '../notifications/notices.js';
import { applyMovement, type Balance, readBalance } from './ledger.js';

export class AdjustmentError extends Error {}

/**
 * An operator's credit (positive) or debit (negative) of an account's available balance,
 * journaled with its reason. It never takes available below zero. `within` runs inside the same
 * transaction after the movement (the operator's audit record), so both commit or neither.
 */
export async function adjustBalance(
  db: Db,
  input: { accountId: string; mode: Mode; amount: bigint; reason: string },
  now = Date.now(),
  within?: (tx: Kysely<Database>, after: Balance, before: Balance) => Promise<unknown>,
): Promise<Balance> {
  if (input.amount === 0n) throw new AdjustmentError('amount must not be zero');
  if (input.reason.trim() === '') throw new AdjustmentError('a reason is required');
  const ref = { accountId: input.accountId, mode: input.mode };
  return db.kysely.transaction().execute(async (tx) => {
    const before = await readBalance(tx, ref);
    if (!before) throw new AdjustmentError(`no account ${input.accountId}`);
    const moved = await applyMovement(tx, ref, { kind: 'adjustment', amount: input.amount, reason: input.reason, now });
    if (!moved) {
      throw new AdjustmentError(`the ${input.mode} available balance (${formatTon(before.available)} TON) cannot go below zero`);
    }
    // A debit can take the balance below the client's low-balance threshold.
    await enqueueBalanceLowEvent(tx, moved);
    await balanceLow(tx, moved);
    const after = (await readBalance(tx, ref)) as Balance;
    await within?.(tx, after, before);
    return after;
  });
}
