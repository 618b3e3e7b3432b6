import { type Kysely, sql } from 'kysely';
import type { Mode } from '../domain/api-key.js';
import { newId } from '../domain/random.js';
import { preparedQuery } from '../db/prepared.js';
import type { Database, JournalTable } from '../db/schema.js';

/**
 * The two-phase ledger (DESIGN "Ledger"): every balance movement is one conditional UPDATE of
 * the balance row plus one immutable journal row, always inside the caller's transaction so
 * that the order change, the balance and the journal commit together or not at all.
 *
 *   deposit / adjustment  available ±x
 *   reserve               available −x, reserved +x   (order created)
 *   debit                 reserved −x                 (order delivered: posted)
 *   release               available +x, reserved −x   (order failed: voided)
 */
export interface BalanceRef {
  accountId: string;
  mode: Mode;
}

export interface Balance {
  available: bigint;
  reserved: bigint;
}

type Kind = JournalTable['kind'];
const DELTAS: Record<Kind, (amount: bigint) => [available: bigint, reserved: bigint]> = {
  deposit: (x) => [x, 0n],
  adjustment: (x) => [x, 0n],
  reserve: (x) => [-x, x],
  debit: (x) => [0n, -x],
  release: (x) => [x, -x],
};

export interface Movement {
  kind: Kind;
  /** Positive, except for adjustments, which may be negative. */
  amount: bigint;
  orderId?: string;
  reason?: string;
  now: number;
}

/**
 * Applies a movement if neither side of the balance would go negative. Returns false (and
 * writes nothing) otherwise. The check and the change are one statement: no read-modify-write.
 */
export async function move(tx: Kysely<Database>, ref: BalanceRef, movement: Movement): Promise<boolean> {
  const [availableDelta, reservedDelta] = DELTAS[movement.kind](movement.amount);
  const result = await tx
    .updateTable('balances')
    .set({
      available: sql`available + ${availableDelta}`,
      reserved: sql`reserved + ${reservedDelta}`,
    })
    .where('account_id', '=', ref.accountId)
    .where('mode', '=', ref.mode)
    .where(sql<boolean>`available + ${availableDelta} >= 0`)
    .where(sql<boolean>`reserved + ${reservedDelta} >= 0`)
    .executeTakeFirst();
  if (result.numUpdatedRows !== 1n) return false;
  await tx
    .insertInto('journal')
    .values({
      id: newId('jrn'),
      account_id: ref.accountId,
      mode: ref.mode,
      kind: movement.kind,
      order_id: movement.orderId ?? null,
      available_delta: availableDelta,
      reserved_delta: reservedDelta,
      reason: movement.reason ?? null,
      created_at: movement.now,
    })
    .execute();
  return true;
}

export async function openBalances(tx: Kysely<Database>, accountId: string): Promise<void> {
  await tx
    .insertInto('balances')
    .values((['live', 'test'] as const).map((mode) => ({ account_id: accountId, mode, available: 0, reserved: 0 })))
    .execute();
}

const selectBalance = preparedQuery((db, accountId: string, mode: Mode) =>
  db.selectFrom('balances').select(['available', 'reserved']).where('account_id', '=', accountId).where('mode', '=', mode),
);

export async function readBalance(db: Kysely<Database>, ref: BalanceRef): Promise<Balance | undefined> {
  const [row] = await selectBalance(db, ref.accountId, ref.mode);
  return row && { available: BigInt(row.available), reserved: BigInt(row.reserved) };
}
