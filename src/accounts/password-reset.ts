import { DEFAULT_BRAND_NAME } from '../domain/brand.js';
import type { Db } from '../db/engine.js';
import { passwordChanged } from '../notifications/notices.js';
import { enqueueMail, isMailAddress } from '../notifications/outbox.js';
import { normalizeEmail } from './accounts.js';
import { clearLoginFailures } from './auth-throttle.js';
import { checkEmailToken, type EmailTokenLookup, issueEmailToken, spendEmailToken } from './email-tokens.js';
import { releaseOwnedAccounts } from './email-verification.js';
import { reserveMailRequest } from './mail-requests.js';
import { hashPassword, passwordProblem } from './passwords.js';
import { deletePersonSessions } from './sessions.js';

/**
 * "Forgot your password?" (docs/dashboard.md "Verified e-mail, password reset and invites by
 * e-mail"). Whoever asks gets the same answer whether or not the address has a login, in the
 * same time: the request path only counts the request (admitPasswordReset: per address and per
 * IP, the same statements for every address); the lookup and the mail come after the answer is
 * sent (sendPasswordReset), where their cost cannot be timed by the asker. Even there the work
 * is alike: one transaction looks the address up, voids its older links and writes a link row —
 * for an address nobody has, a row with no person, which can never be used — and only the mail
 * is queued or not. The link works once, for an
 * hour; setting the new password ends every session of the person, sends the "password
 * changed" notice and leaves two-factor as it was (asked at the next sign-in). Opening the link
 * proves the address, so an address still waiting for its verification is verified by it.
 */

/**
 * Counts a request for a reset link (throttled per address and per IP, each request written
 * before it is counted). Returns the normalized address to send to, or undefined (malformed,
 * or throttled): the caller answers the same either way.
 */
export async function admitPasswordReset(db: Db, input: { email: string; ip: string }, now = Date.now()): Promise<string | undefined> {
  const email = normalizeEmail(input.email);
  if (!isMailAddress(email)) return undefined;
  return (await reserveMailRequest(db, 'password_reset', email, input.ip, now)) ? email : undefined;
}

/** Writes the link and queues its mail if the (admitted) address has a login; nothing is mailed otherwise. */
export async function sendPasswordReset(db: Db, input: { email: string; origin: string; brand: string }, now = Date.now()): Promise<void> {
  const { email } = input;
  await db.kysely.transaction().execute(async (tx) => {
    const person = await tx.selectFrom('people').select('id').where('email', '=', email).executeTakeFirst();
    const { token } = await issueEmailToken(tx, { purpose: 'password_reset', personId: person?.id ?? null, email }, now);
    if (!person) return;
    await enqueueMail(
      tx,
      {
        to: email,
        topic: 'password_reset',
        personId: person.id,
        secrets: [token],
        message: {
          subject: `Reset your ${input.brand} password`,
          parts: [
            `Someone, hopefully you, asked to reset the password of your ${input.brand} dashboard sign-in. Open this link within an hour to choose a new one:`,
            { link: `${input.origin}/reset-password/${token}`, label: 'Choose a new password' },
            'The link works once. If you did not ask for it, ignore this e-mail: your password stays as it is.',
          ],
        },
      },
      now,
    );
  });
}

export function checkResetLink(db: Db, token: unknown, now = Date.now()): Promise<EmailTokenLookup> {
  return checkEmailToken(db.kysely, 'password_reset', token, now);
}

export type ResetResult = { ok: true; personId: string; email: string } | Extract<EmailTokenLookup, { ok: false }> | { ok: false; reason: 'weak_password'; message: string };

/** Sets the new password through a reset link (spent by one conditional update) and ends every session of the person. */
export async function resetPassword(db: Db, token: unknown, password: string, now = Date.now(), brand = DEFAULT_BRAND_NAME): Promise<ResetResult> {
  const lookup = await checkResetLink(db, token, now);
  if (!lookup.ok) return lookup;
  const weak = passwordProblem(password);
  if (weak) return { ok: false, reason: 'weak_password', message: weak };
  const passwordHash = await hashPassword(password);
  const done = await db.kysely.transaction().execute(async (tx) => {
    if (!(await spendEmailToken(tx, 'password_reset', token as string, now))) return false;
    // The address changed since the link was sent: it no longer resets anything.
    const set = await tx
      .updateTable('people')
      .set({ password_hash: passwordHash, email_unverified_since: null, updated_at: now })
      .where('id', '=', lookup.personId)
      .where('email', '=', lookup.email)
      .executeTakeFirst();
    if (set.numUpdatedRows !== 1n) return 'moved';
    await releaseOwnedAccounts(tx, lookup.personId);
    await deletePersonSessions(tx, lookup.personId);
    await passwordChanged(tx, lookup.personId, now, brand);
    return true;
  });
  if (done === 'moved') return { ok: false, reason: 'invalid', message: 'This link is for an address that no longer signs in.' };
  if (!done) {
    const after = await checkResetLink(db, token, now);
    return after.ok ? { ok: false, reason: 'used', message: 'This link was already used. It works once.' } : after;
  }
  // The old password's failures no longer mean anything.
  await clearLoginFailures(db, lookup.email);
  return { ok: true, personId: lookup.personId, email: lookup.email };
}
