import type { Kysely } from 'kysely';
import { DEFAULT_BRAND_NAME } from '../domain/brand.js';
import type { Database } from '../db/schema.js';
import type { Db } from '../db/engine.js';
import { AccountError, createAccount, normalizeEmail } from './accounts.js';
import { clearLoginFailures, releaseLoginAttempt, reserveLoginAttempt, reserveSignup } from './auth-throttle.js';
import { hashPassword, passwordProblem, spendVerificationTime, verifyPassword } from './passwords.js';
import { hashSecret, isSecretFormat, newSecret } from './secrets.js';
import { findPersonByEmail } from './people.js';
import { deletePersonSessions } from './sessions.js';
import { passwordChanged, signedIn } from '../notifications/notices.js';
import { isMailAddress } from '../notifications/outbox.js';
import { readableTime } from '../domain/time.js';
import { markUnverified, queueVerificationMail } from './email-verification.js';

/**
 * The people behind accounts: sign-up, login and one-time set-password links. A person signs
 * in with an e-mail and a password and is a member of one or more accounts
 * (src/accounts/team.ts). The messages here are shown to the user as they are, so they never
 * say whether an e-mail has an account — except sign-up, which cannot create a second account
 * for an e-mail (see docs/dashboard.md).
 */
const PASSWORD_LINK_TTL_MS = 72 * 60 * 60 * 1000;

export type SignUpResult =
  | { ok: true; accountId: string; personId: string; liveKey: string; testKey: string }
  | { ok: false; reason: 'invalid_email' | 'weak_password' | 'unavailable' | 'throttled'; message: string };

const UNAVAILABLE = 'We could not create an account with this e-mail address. If you already have an account, log in instead.';

/**
 * A new account (both balances at 0, both keys issued) owned by a new person with this
 * password. The two keys are returned for the sign-up answer to show once; only their hashes
 * are stored. An e-mail that already signs in (a teammate of another account) cannot sign up.
 * The address is unverified until the link mailed in the same transaction is opened
 * (email-verification.ts); `origin` is the links' base URL.
 */
export async function signUp(db: Db, input: { email: string; password: string; ip: string; origin: string; brand: string }, now = Date.now()): Promise<SignUpResult> {
  const email = normalizeEmail(input.email);
  if (!isMailAddress(email)) return { ok: false, reason: 'invalid_email', message: 'Enter a valid e-mail address, like you@example.com.' };
  const weak = passwordProblem(input.password);
  if (weak) return { ok: false, reason: 'weak_password', message: weak };
  if (!(await reserveSignup(db, email, input.ip, now))) {
    return { ok: false, reason: 'throttled', message: 'Too many sign-ups from your network. Try again in an hour.' };
  }
  const passwordHash = await hashPassword(input.password);
  if (await findPersonByEmail(db.kysely, email)) return { ok: false, reason: 'unavailable', message: UNAVAILABLE };
  let created: { accountId: string; liveKey: string; testKey: string };
  let personId = '';
  try {
    created = await createAccount(db, email, now, async (tx, account) => {
      await tx.updateTable('people').set({ password_hash: passwordHash, updated_at: now }).where('email', '=', email).execute();
      personId = (await tx.selectFrom('people').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;
      await markUnverified(tx, personId, account.accountId, now);
      await queueVerificationMail(tx, { personId, email, origin: input.origin, brand: input.brand }, now);
    });
  } catch (error) {
    if (!(error instanceof AccountError)) throw error;
    if (/already exists/.test(error.message)) return { ok: false, reason: 'unavailable', message: UNAVAILABLE };
    return { ok: false, reason: 'invalid_email', message: 'Enter a valid e-mail address, like you@example.com.' };
  }
  return { ok: true, personId, ...created };
}

export type LogInResult = { ok: true; personId: string; accountId: string; twoFactor: boolean } | { ok: false; reason: 'invalid' | 'throttled' | 'disabled' | 'removed' };

/**
 * Checks an e-mail and password. Every attempt is counted as a failure before the password is
 * hashed (reserveLoginAttempt), and throttled ones are refused before any hashing; a right
 * password takes its count back. Unknown e-mails and people without a password spend the same
 * time and count as failures too. The
 * session opens on the account of the person's own e-mail if they are a member of it, else on
 * their oldest active membership; a person with no active membership is 'disabled'.
 * `twoFactor`: the password is not enough, the session must give a code next.
 */
export async function logIn(db: Db, input: { email: string; password: string; ip: string; brand?: string }, now = Date.now()): Promise<LogInResult> {
  const email = normalizeEmail(input.email);
  const attempt = await reserveLoginAttempt(db, email, input.ip, now);
  if (!attempt) return { ok: false, reason: 'throttled' };
  const row = await db.kysely.selectFrom('people').select(['id', 'password_hash', 'totp_enabled_at']).where('email', '=', email).executeTakeFirst();
  let valid = false;
  if (row?.password_hash) valid = await verifyPassword(row.password_hash, input.password);
  else await spendVerificationTime(input.password);
  if (!row || !valid) return { ok: false, reason: 'invalid' };
  await releaseLoginAttempt(db, attempt);
  const accountId = await defaultAccount(db, row.id, email);
  if (!accountId) return { ok: false, reason: (await hasAnyMembership(db, row.id)) ? 'disabled' : 'removed' };
  // With two-factor on, failures are cleared only once the code is right as well.
  if (row.totp_enabled_at === null) await clearLoginFailures(db, email);
  await db.kysely.transaction().execute((tx) => signedIn(tx, row.id, input.ip, now, input.brand));
  return { ok: true, personId: row.id, accountId, twoFactor: row.totp_enabled_at !== null };
}

/** Whether the person belongs to any account at all, disabled ones included (else they were removed from every team). */
async function hasAnyMembership(db: Db, personId: string): Promise<boolean> {
  return (await db.kysely.selectFrom('memberships').select('account_id').where('person_id', '=', personId).limit(1).executeTakeFirst()) !== undefined;
}

/** The account a sign-in opens on: the person's own e-mail's if a member, else the oldest active membership. */
async function defaultAccount(db: Db, personId: string, email: string): Promise<string | undefined> {
  const rows = await db.kysely
    .selectFrom('memberships as m')
    .innerJoin('accounts as a', 'a.id', 'm.account_id')
    .select(['a.id', 'a.email'])
    .where('m.person_id', '=', personId)
    .where('a.status', '=', 'active')
    .orderBy('m.created_at')
    .orderBy('a.id')
    .execute();
  return (rows.find((r) => r.email === email) ?? rows[0])?.id;
}

export interface PasswordLink {
  accountId: string;
  email: string;
  token: string;
  expiresAt: number;
}

/**
 * A one-time link token to set (invite) or reset (forgotten) the password of a person: the
 * owner e-mail of an account, or a teammate. Issuing one invalidates the person's earlier
 * unused links.
 */
export async function issuePasswordLink(
  db: Db,
  email: string,
  now = Date.now(),
  /** Records the issue in the link's transaction (the console's audit entry; never the token). */
  audit?: (tx: Kysely<Database>, link: { accountId: string; email: string }) => Promise<unknown>,
): Promise<PasswordLink> {
  const normalized = normalizeEmail(email);
  const person = await findPersonByEmail(db.kysely, normalized);
  const account = person && (await db.kysely.selectFrom('memberships').select('account_id').where('person_id', '=', person.id).orderBy('created_at').executeTakeFirst());
  if (!person || !account) throw new AccountError(`no account with e-mail ${normalized} (create it first: starport account create --email ${normalized})`);
  const own = await db.kysely.selectFrom('accounts').select('id').where('email', '=', normalized).executeTakeFirst();
  const accountId = own?.id ?? account.account_id;
  const token = newSecret();
  const expiresAt = now + PASSWORD_LINK_TTL_MS;
  await db.kysely.transaction().execute(async (tx) => {
    await tx.updateTable('password_tokens').set({ used_at: now }).where('person_id', '=', person.id).where('used_at', 'is', null).execute();
    await tx
      .insertInto('password_tokens')
      .values({ token_hash: hashSecret(token), account_id: accountId, person_id: person.id, created_at: now, expires_at: expiresAt, used_at: null })
      .execute();
    await audit?.(tx, { accountId, email: person.email });
  });
  return { accountId, email: person.email, token, expiresAt };
}

/** The person a link token may still set the password of, or undefined (unknown, used or expired). */
export async function checkPasswordLink(db: Db, token: unknown, now = Date.now()): Promise<{ accountId: string; personId: string; email: string } | undefined> {
  if (!isSecretFormat(token)) return undefined;
  const row = await db.kysely
    .selectFrom('password_tokens as t')
    .innerJoin('people as p', 'p.id', 't.person_id')
    .select(['t.account_id', 'p.id', 'p.email'])
    .where('t.token_hash', '=', hashSecret(token))
    .where('t.used_at', 'is', null)
    .where('t.expires_at', '>', BigInt(now))
    .executeTakeFirst();
  return row && { accountId: row.account_id, personId: row.id, email: row.email };
}

/** Why a set-password link does not work, in a sentence: unknown, used (or replaced), or expired and when. */
export async function passwordLinkProblem(db: Db, token: unknown, now = Date.now()): Promise<string> {
  const unknown = 'This link is not valid. Check that you copied all of it.';
  if (!isSecretFormat(token)) return unknown;
  const row = await db.kysely.selectFrom('password_tokens').select(['expires_at', 'used_at']).where('token_hash', '=', hashSecret(token)).executeTakeFirst();
  if (!row) return unknown;
  // A newer link marks the older ones used (issuePasswordLink).
  if (row.used_at !== null) return `This link was already used, or a newer link replaced it (${readableTime(Number(row.used_at))}). It works once.`;
  if (Number(row.expires_at) <= now) return `This link expired on ${readableTime(Number(row.expires_at))}.`;
  return unknown;
}

export type UsePasswordLinkResult =
  | { ok: true; accountId: string | undefined; personId: string; twoFactor: boolean; member: boolean }
  | { ok: false; reason: 'invalid_link' | 'weak_password'; message: string };

/**
 * Sets the password through a link: the token is spent by one conditional update (two
 * concurrent uses cannot both succeed), and every existing session of the person ends. A
 * person with two-factor on still gives a code after this (the link replaces only the password).
 * `record` runs in the same transaction (the activity log's entry: both commit or neither).
 */
export async function usePasswordLink(
  db: Db,
  token: unknown,
  password: string,
  now = Date.now(),
  record?: (tx: Kysely<Database>, used: { accountId: string; personId: string }) => Promise<void>,
  brand = DEFAULT_BRAND_NAME,
): Promise<UsePasswordLinkResult> {
  const invalid = { ok: false, reason: 'invalid_link', message: 'This link is invalid, already used or expired. Ask your operator for a new one.' } as const;
  if (!(await checkPasswordLink(db, token, now))) return invalid;
  const weak = passwordProblem(password);
  if (weak) return { ok: false, reason: 'weak_password', message: weak };
  const passwordHash = await hashPassword(password);
  const tokenHash = hashSecret(token as string);
  return db.kysely
    .transaction()
    .execute(async (tx) => {
      const spent = await tx
        .updateTable('password_tokens')
        .set({ used_at: now })
        .where('token_hash', '=', tokenHash)
        .where('used_at', 'is', null)
        .where('expires_at', '>', BigInt(now))
        .executeTakeFirst();
      if (spent.numUpdatedRows !== 1n) return invalid;
      const link = await tx
        .selectFrom('password_tokens as t')
        .innerJoin('people as p', 'p.id', 't.person_id')
        .select(['t.account_id', 'p.id', 'p.totp_enabled_at', 'p.password_hash'])
        .where('t.token_hash', '=', tokenHash)
        .executeTakeFirstOrThrow();
      await tx.updateTable('people').set({ password_hash: passwordHash, updated_at: now }).where('id', '=', link.id).execute();
      if (link.password_hash !== null) await passwordChanged(tx, link.id, now, brand);
      await deletePersonSessions(tx, link.id);
      await record?.(tx, { accountId: link.account_id, personId: link.id });
      return { personId: link.id, twoFactor: link.totp_enabled_at !== null };
    })
    .then(async (done) => {
      if (!('personId' in done)) return done;
      const person = await db.kysely.selectFrom('people').select('email').where('id', '=', done.personId).executeTakeFirstOrThrow();
      // The session opens where a sign-in would; undefined when no account of theirs is active.
      return { ok: true, accountId: await defaultAccount(db, done.personId, person.email), member: await hasAnyMembership(db, done.personId), ...done } as const;
    });
}
