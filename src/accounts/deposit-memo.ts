import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Db } from '../db/engine.js';
import type { Database } from '../db/schema.js';

/**
 * Each account's deposit comment (memo) for live top-ups to the service's single deposit
 * wallet (docs/upstreams.md "Comments and memos"): ten random characters of an alphabet without look-alikes (no
 * I, O, 0, 1) and one check character, so a person can read it out and a typo is caught
 * instead of crediting another account. Derived from the account id, so it is stable, and
 * stored (unique) so that the deposit watcher can look the account up by memo; a collision
 * (2^-50) falls back to a random memo.
 */
export const MEMO_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const MEMO_DATA_LENGTH = 10;
export const MEMO_PATTERN = /^[A-HJ-NP-Z2-9]{11}$/;

/**
 * The check character: the characters (values 0–31) read as elements of GF(32) (polynomial
 * x^5 + x^2 + 1) and folded Horner-style, s = 2·s ⊕ v, then the check c makes 2·s ⊕ c = 0.
 * Every weight is a distinct non-zero field element, so a single substitution anywhere
 * (check character included) changes the sum; swapping neighbours x,y changes it by
 * 2^k·3·(x ⊕ y) ≠ 0. A plain weighted sum mod 32 cannot do both (its weights would have to
 * be odd and differ by an odd number), which is why the arithmetic is GF(32), not mod 32.
 */
function times2(value: number): number {
  const shifted = value << 1;
  return shifted & 0x20 ? shifted ^ 0x25 : shifted;
}

function fold(values: number[]): number {
  return values.reduce((sum, v) => times2(sum) ^ v, 0);
}

export function checkCharacter(data: string): string {
  return MEMO_ALPHABET[times2(fold([...data].map((c) => MEMO_ALPHABET.indexOf(c))))] as string;
}

/** The memo as a person typed it: trimmed and upper-cased (case-folded), nothing else. */
export function normalizeMemo(text: string): string {
  return text.trim().toUpperCase();
}

/** True when `memo` (already normalized) has the shape and a correct check character. */
export function isWellFormedMemo(memo: string): boolean {
  if (!MEMO_PATTERN.test(memo)) return false;
  return fold([...memo].map((c) => MEMO_ALPHABET.indexOf(c))) === 0;
}

function encode(bytes: Buffer): string {
  // 256 is a multiple of 32: every character is uniform.
  const data = [...bytes.subarray(0, MEMO_DATA_LENGTH)].map((b) => MEMO_ALPHABET[b % 32]).join('');
  return data + checkCharacter(data);
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

/** The account a well-formed memo belongs to, if any. */
export async function accountForMemo(db: Kysely<Database>, memo: string): Promise<string | undefined> {
  const row = await db.selectFrom('deposit_memos').select('account_id').where('memo', '=', memo).executeTakeFirst();
  return row?.account_id;
}
