import type { Kysely } from 'kysely';
import type { Database, EmailTokensTable } from '../db/schema.js';
import { readableTime } from '../domain/time.js';
import { hashSecret, isSecretFormat, newSecret } from './secrets.js';

/**
 * One-time links sent by e-mail (docs/dashboard.md "Verified e-mail, password reset and invites
 * by e-mail"): a password reset (1 hour), an address's verification and a change of address
 * (24 hours). The token is 256 random bits; only its SHA-256 is stored, and it is looked up by
 * that hash (no secret is compared). A link works once: it is spent by one conditional update.
 * A newer link of the same purpose for the same person (or address) voids the older ones.
 */
export type EmailTokenPurpose = EmailTokensTable['purpose'];

export const EMAIL_TOKEN_TTL_MS: Record<EmailTokenPurpose, number> = {
  password_reset: 60 * 60 * 1000,
  verify_email: 24 * 60 * 60 * 1000,
  change_email: 24 * 60 * 60 * 1000,
};

/** Swept when new links are issued: long enough after expiry to still say "expired". */
const KEEP_AFTER_EXPIRY_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * A new link token, written in the caller's transaction (with the mail that carries it). The
 * same statements run whether `personId` is a person or null (an address nobody has).
 */
export async function issueEmailToken(
  tx: Kysely<Database>,
  input: { purpose: EmailTokenPurpose; personId: string | null; email: string },
  now = Date.now(),
): Promise<{ token: string; expiresAt: number }> {
  const token = newSecret();
  const expiresAt = now + EMAIL_TOKEN_TTL_MS[input.purpose];
  await tx
    .deleteFrom('email_tokens')
    .where('expires_at', '<', BigInt(now - KEEP_AFTER_EXPIRY_MS))
    .execute();
  let older = tx.updateTable('email_tokens').set({ voided_at: now }).where('purpose', '=', input.purpose).where('used_at', 'is', null).where('voided_at', 'is', null);
  older = input.personId === null || input.purpose === 'password_reset' ? older.where('email', '=', input.email) : older.where('person_id', '=', input.personId);
  await older.execute();
  await tx
    .insertInto('email_tokens')
    .values({
      token_hash: hashSecret(token),
      purpose: input.purpose,
      person_id: input.personId,
      email: input.email,
      created_at: now,
      expires_at: expiresAt,
      used_at: null,
      voided_at: null,
    })
    .execute();
  return { token, expiresAt };
}

export type EmailTokenProblem = 'invalid' | 'used' | 'replaced' | 'expired';

export type EmailTokenLookup = { ok: true; personId: string; email: string; expiresAt: number } | { ok: false; reason: EmailTokenProblem; message: string; expiredAt?: number };

const INVALID = { ok: false, reason: 'invalid', message: 'This link is not valid. Check that you copied all of it.' } as const;

/** The link's person and address, or why it does not work (used, replaced, expired and when). */
export async function checkEmailToken(db: Kysely<Database>, purpose: EmailTokenPurpose, token: unknown, now = Date.now()): Promise<EmailTokenLookup> {
  if (!isSecretFormat(token)) return INVALID;
  const row = await db
    .selectFrom('email_tokens')
    .select(['person_id', 'email', 'expires_at', 'used_at', 'voided_at'])
    .where('token_hash', '=', hashSecret(token))
    .where('purpose', '=', purpose)
    .executeTakeFirst();
  if (!row || row.person_id === null) return INVALID;
  if (row.used_at !== null) return { ok: false, reason: 'used', message: `This link was already used, on ${readableTime(Number(row.used_at))}. It works once.` };
  if (row.voided_at !== null) return { ok: false, reason: 'replaced', message: 'A newer link replaced this one: use the one in the most recent e-mail.' };
  const expiresAt = Number(row.expires_at);
  if (expiresAt <= now) return { ok: false, reason: 'expired', message: `This link expired on ${readableTime(expiresAt)}.`, expiredAt: expiresAt };
  return { ok: true, personId: row.person_id, email: row.email, expiresAt };
}

/** Spends the link in the caller's transaction; false when another request spent it first (or it lapsed). */
export async function spendEmailToken(tx: Kysely<Database>, purpose: EmailTokenPurpose, token: string, now = Date.now()): Promise<boolean> {
  const spent = await tx
    .updateTable('email_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', hashSecret(token))
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('voided_at', 'is', null)
    .where('expires_at', '>', BigInt(now))
    .executeTakeFirst();
  return spent.numUpdatedRows === 1n;
}
