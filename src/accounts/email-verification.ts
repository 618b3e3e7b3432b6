import type { Kysely } from 'kysely';
import type { Db } from '../db/engine.js';
import { DEFAULT_BRAND_NAME } from '../domain/brand.js';
import type { Database } from '../db/schema.js';
import { enqueueMail, isMailAddress } from '../notifications/outbox.js';
import { normalizeEmail } from './accounts.js';
import { checkEmailToken, type EmailTokenLookup, issueEmailToken, spendEmailToken } from './email-tokens.js';
import { reserveMailRequest } from './mail-requests.js';
import { verifyPassword } from './passwords.js';

/**
 * Verified e-mail addresses (docs/dashboard.md "Verified e-mail, password reset and invites by
 * e-mail"). Sign-up marks the new person's address unverified and mails a link (24 hours, one
 * use; a new one can be asked for, throttled). Until then the dashboard shows a banner and the
 * address gets nothing but the verification mail (the outbox skips it). The account waits too:
 * with SIGNUP_VERIFY=required its live key answers 403 email_unverified until one of its owners
 * has verified an address. People the operator created, or who joined by an invite, were
 * vouched for and are not waiting. A change of address is verified at the new address before it
 * takes effect, and the old address is told.
 */

/** Queues the verification mail for `email` in the caller's transaction (a new link voids the older ones). */
export async function queueVerificationMail(tx: Kysely<Database>, input: { personId: string; email: string; origin: string; brand: string }, now = Date.now()): Promise<void> {
  const { token } = await issueEmailToken(tx, { purpose: 'verify_email', personId: input.personId, email: input.email }, now);
  const link = `${input.origin}/verify-email/${token}`;
  await enqueueMail(
    tx,
    {
      to: input.email,
      topic: 'verify_email',
      personId: input.personId,
      secrets: [token],
      message: {
        subject: `Verify your e-mail address for ${input.brand}`,
        parts: [
          `Someone, hopefully you, signed up to ${input.brand} with ${input.email}. Open this link within 24 hours to confirm that the address is yours:`,
          { link, label: 'Verify my address' },
          'The link works once. If you did not sign up, ignore this e-mail: the address will get nothing more from us.',
        ],
      },
    },
    now,
  );
}

/** The person's address waits for its link (sign-up), and so does every account they own. */
export async function markUnverified(tx: Kysely<Database>, personId: string, accountId: string, now: number): Promise<void> {
  await tx.updateTable('people').set({ email_unverified_since: now }).where('id', '=', personId).execute();
  await tx.updateTable('accounts').set({ unverified_since: now }).where('id', '=', accountId).execute();
}

/**
 * The accounts this person owns stop waiting, if the person's address is verified (or vouched
 * for): called when an address is verified and when a person becomes an owner.
 */
export async function releaseOwnedAccounts(tx: Kysely<Database>, personId: string): Promise<void> {
  const person = await tx.selectFrom('people').select('email_unverified_since').where('id', '=', personId).executeTakeFirst();
  if (!person || person.email_unverified_since !== null) return;
  await tx
    .updateTable('accounts')
    .set({ unverified_since: null })
    .where('unverified_since', 'is not', null)
    .where('id', 'in', (eb) => eb.selectFrom('memberships').select('account_id').where('person_id', '=', personId).where('role', '=', 'owner'))
    .execute();
}

export type VerifyResult = { ok: true; personId: string; email: string } | Extract<EmailTokenLookup, { ok: false }>;

/** Spends a verification link: the address is verified, and the accounts its person owns stop waiting. */
export async function verifyEmail(db: Db, token: unknown, now = Date.now()): Promise<VerifyResult> {
  const lookup = await checkEmailToken(db.kysely, 'verify_email', token, now);
  if (!lookup.ok) return lookup;
  const done = await db.kysely.transaction().execute(async (tx) => {
    if (!(await spendEmailToken(tx, 'verify_email', token as string, now))) return false;
    await tx.updateTable('people').set({ email_unverified_since: null, updated_at: now }).where('id', '=', lookup.personId).where('email', '=', lookup.email).execute();
    await releaseOwnedAccounts(tx, lookup.personId);
    return true;
  });
  if (!done) {
    const after = await checkEmailToken(db.kysely, 'verify_email', token, now);
    return after.ok ? { ok: false, reason: 'used', message: 'This link was already used. It works once.' } : after;
  }
  return { ok: true, personId: lookup.personId, email: lookup.email };
}

/** A new verification link for a signed-in person whose address is not verified yet (throttled). */
export async function resendVerification(
  db: Db,
  input: { personId: string; ip: string; origin: string; brand: string },
  now = Date.now(),
): Promise<'sent' | 'verified' | 'throttled'> {
  const person = await db.kysely.selectFrom('people').select(['email', 'email_unverified_since']).where('id', '=', input.personId).executeTakeFirst();
  if (!person || person.email_unverified_since === null) return 'verified';
  if (!(await reserveMailRequest(db, 'verify_email', person.email, input.ip, now))) return 'throttled';
  await db.kysely.transaction().execute((tx) => queueVerificationMail(tx, { personId: input.personId, email: person.email, origin: input.origin, brand: input.brand }, now));
  return 'sent';
}

export type EmailChangeRequest = { ok: true; email: string } | { ok: false; reason: 'invalid_email' | 'same' | 'taken' | 'wrong_password' | 'throttled'; message: string };

/**
 * Asks to change the person's sign-in address: the current password, then a link to the new
 * address (24 hours). Nothing changes until that link is opened. Throttled per person and IP.
 */
export async function requestEmailChange(
  db: Db,
  input: { personId: string; password: string; newEmail: string; ip: string; origin: string; brand: string },
  now = Date.now(),
): Promise<EmailChangeRequest> {
  const email = normalizeEmail(input.newEmail);
  if (!isMailAddress(email) || !email.includes('.', email.indexOf('@')))
    return { ok: false, reason: 'invalid_email', message: 'Enter a valid e-mail address, like you@example.com.' };
  const person = await db.kysely.selectFrom('people').select(['email', 'password_hash']).where('id', '=', input.personId).executeTakeFirst();
  if (!person) return { ok: false, reason: 'wrong_password', message: 'That password is not right.' };
  if (person.email === email) return { ok: false, reason: 'same', message: 'That is already your address.' };
  if (!(await reserveMailRequest(db, 'change_email', person.email, input.ip, now))) {
    return { ok: false, reason: 'throttled', message: 'Too many changes asked for. Try again in an hour.' };
  }
  if (!person.password_hash || !(await verifyPassword(person.password_hash, input.password)))
    return { ok: false, reason: 'wrong_password', message: 'That password is not right.' };
  if (await db.kysely.selectFrom('people').select('id').where('email', '=', email).executeTakeFirst()) {
    return { ok: false, reason: 'taken', message: `That address already signs in to ${input.brand}: it cannot be yours too.` };
  }
  await db.kysely.transaction().execute(async (tx) => {
    const { token } = await issueEmailToken(tx, { purpose: 'change_email', personId: input.personId, email }, now);
    await enqueueMail(
      tx,
      {
        to: email,
        topic: 'change_email',
        personId: input.personId,
        secrets: [token],
        message: {
          subject: `Confirm your new ${input.brand} sign-in address`,
          parts: [
            `Someone signed in as ${person.email} asked to sign in to ${input.brand} with ${email} from now on. Open this link within 24 hours to confirm it:`,
            { link: `${input.origin}/confirm-email/${token}`, label: 'Use this address' },
            'Nothing changes until the link is opened. If this was not you, ignore this e-mail.',
          ],
        },
      },
      now,
    );
  });
  return { ok: true, email };
}

export type EmailChangeResult =
  | { ok: true; personId: string; email: string; previous: string }
  | Extract<EmailTokenLookup, { ok: false }>
  | { ok: false; reason: 'taken'; message: string };

/** Spends a change-of-address link: the new address signs in from now on (verified), and the old one is told. */
export async function confirmEmailChange(db: Db, token: unknown, now = Date.now(), brand = DEFAULT_BRAND_NAME): Promise<EmailChangeResult> {
  const lookup = await checkEmailToken(db.kysely, 'change_email', token, now);
  if (!lookup.ok) return lookup;
  try {
    const previous = await db.kysely.transaction().execute(async (tx) => {
      if (!(await spendEmailToken(tx, 'change_email', token as string, now))) return undefined;
      const person = await tx.selectFrom('people').select(['email', 'email_unverified_since']).where('id', '=', lookup.personId).executeTakeFirstOrThrow();
      await tx.updateTable('people').set({ email: lookup.email, email_unverified_since: null, updated_at: now }).where('id', '=', lookup.personId).execute();
      await releaseOwnedAccounts(tx, lookup.personId);
      // The old address is told, unless it was never verified (it gets nothing but its link).
      if (person.email_unverified_since === null && isMailAddress(person.email)) {
        await enqueueMail(
          tx,
          {
            to: person.email,
            topic: 'security',
            personId: lookup.personId,
            message: {
              subject: `Your ${brand} sign-in address was changed`,
              parts: [`Your dashboard sign-in address is now ${lookup.email}; ${person.email} no longer signs in. If this was not you, contact your ${brand} operator at once.`],
            },
          },
          now,
        );
      }
      return person.email;
    });
    if (previous === undefined) {
      const after = await checkEmailToken(db.kysely, 'change_email', token, now);
      return after.ok ? { ok: false, reason: 'used', message: 'This link was already used. It works once.' } : after;
    }
    return { ok: true, personId: lookup.personId, email: lookup.email, previous };
  } catch (error) {
    if (db.engine.isUniqueViolation(error)) return { ok: false, reason: 'taken', message: `That address signs in to ${brand} already: it cannot be used for a second login.` };
    throw error;
  }
}
