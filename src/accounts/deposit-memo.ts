import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db/engine.js';

/**
 * Each account's deposit comment (memo) for live top-ups to the service's single deposit
 * wallet (research/ton.md §1). Ten characters of an alphabet without look-alikes (no I, O, 0,
 * 1), so a person can read it out and the deposit watcher can match it case-insensitively
 * after trimming. Derived from the account id, so it is stable, and stored (unique) so that the
 * watcher can look the account up by memo; a collision (2^-50) falls back to a random memo.
 */
export const MEMO_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
export const MEMO_LENGTH = 10;
export const MEMO_PATTERN = /^[A-HJ-NP-Z2-9]{10}$/;

function encode(bytes: Buffer): string {
  // 256 is a multiple of 32: every character is uniform.
  return [...bytes.subarray(0, MEMO_LENGTH)].map((b) => MEMO_ALPHABET[b % 32]).join('');
}

export function derivedMemo(accountId: string): string {
  return encode(createHash('sha256').update(`starport deposit memo\0${accountId}`).digest());
}

/** The account's memo, created on first use. */
export async function depositMemo(db: Db, accountId: string, now = Date.now()): Promise<string> {
  const existing = await db.kysely.selectFrom('deposit_memos').select('memo').where('account_id', '=', accountId).executeTakeFirst();
  if (existing) return existing.memo;
  for (const memo of [derivedMemo(accountId), encode(randomBytes(16)), encode(randomBytes(16))]) {
    try {
      await db.kysely
        .insertInto('deposit_memos')
        .values({ account_id: accountId, memo, created_at: now })
        .onConflict((oc) => oc.column('account_id').doNothing())
        .execute();
    } catch (error) {
      if (db.engine.isUniqueViolation(error)) continue; // another account holds this memo
      throw error;
    }
    const row = await db.kysely.selectFrom('deposit_memos').select('memo').where('account_id', '=', accountId).executeTakeFirst();
    if (row) return row.memo;
  }
  throw new Error(`could not assign a deposit memo to ${accountId}`);
}
