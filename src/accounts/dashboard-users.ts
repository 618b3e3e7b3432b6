import type { Db } from '../db/engine.js';
import { AccountError, createAccount, normalizeEmail } from './accounts.js';
import { clearLoginFailures, loginThrottled, recordLoginFailure, recordSignup, signupThrottled } from './auth-throttle.js';
import { hashPassword, passwordProblem, spendVerificationTime, verifyPassword } from './passwords.js';
import { hashSecret, isSecretFormat, newSecret } from './secrets.js';
import { deleteAccountSessions } from './sessions.js';

/**
 * The people behind accounts: sign-up, login and one-time set-password links. One dashboard
 * login per account (dashboard_users, keyed by account_id). The messages here are shown to the
 * user as they are, so they never say whether an e-mail has an account — except sign-up, which
 * cannot create a second account for an e-mail (see docs/dashboard.md).
 */
const PASSWORD_LINK_TTL_MS = 72 * 60 * 60 * 1000;

export type SignUpResult =
  | { ok: true; accountId: string; liveKey: string; testKey: string }
  | { ok: false; reason: 'invalid_email' | 'weak_password' | 'unavailable' | 'throttled'; message: string };

/**
 * A new account (both balances at 0, both keys issued) with a dashboard login. The two keys
 * are returned for the sign-up answer to show once; only their hashes are stored.
 */
export async function signUp(db: Db, input: { email: string; password: string; ip: string }, now = Date.now()): Promise<SignUpResult> {
  const email = normalizeEmail(input.email);
  const weak = passwordProblem(input.password);
  if (weak) return { ok: false, reason: 'weak_password', message: weak };
  if (await signupThrottled(db, input.ip, now)) {
    return { ok: false, reason: 'throttled', message: 'Too many sign-ups from your network. Try again in an hour.' };
  }
  await recordSignup(db, email, input.ip, now);
  const passwordHash = await hashPassword(input.password);
  let created: { accountId: string; liveKey: string; testKey: string };
  try {
    created = await createAccount(db, email, now);
  } catch (error) {
    if (!(error instanceof AccountError)) throw error;
    if (/already exists/.test(error.message)) {
      return {
        ok: false,
        reason: 'unavailable',
        message: 'We could not create an account with this e-mail address. If you already have an account, log in instead.',
      };
    }
    return { ok: false, reason: 'invalid_email', message: 'Enter a valid e-mail address, like you@example.com.' };
  }
  // createAccount commits on its own; the login row follows. Should this insert ever fail,
  // the account exists without a password and `account invite` gives it one.
  await db.kysely.insertInto('dashboard_users').values({ account_id: created.accountId, password_hash: passwordHash, created_at: now, updated_at: now }).execute();
  return { ok: true, ...created };
}

export type LogInResult = { ok: true; accountId: string } | { ok: false; reason: 'invalid' | 'throttled' | 'disabled' };

/**
 * Checks an e-mail and password. Throttled attempts are refused before any hashing; unknown
 * e-mails and accounts without a password spend the same time and count as failures too.
 */
export async function logIn(db: Db, input: { email: string; password: string; ip: string }, now = Date.now()): Promise<LogInResult> {
  const email = normalizeEmail(input.email);
  if (await loginThrottled(db, email, input.ip, now)) return { ok: false, reason: 'throttled' };
  const row = await db.kysely
    .selectFrom('accounts as a')
    .leftJoin('dashboard_users as u', 'u.account_id', 'a.id')
    .select(['a.id', 'a.status', 'u.password_hash'])
    .where('a.email', '=', email)
    .executeTakeFirst();
  let valid = false;
  if (row?.password_hash) valid = await verifyPassword(row.password_hash, input.password);
  else await spendVerificationTime(input.password);
  if (!row || !valid) {
    await recordLoginFailure(db, email, input.ip, now);
    return { ok: false, reason: 'invalid' };
  }
  await clearLoginFailures(db, email);
  if (row.status !== 'active') return { ok: false, reason: 'disabled' };
  return { ok: true, accountId: row.id };
}

export interface PasswordLink {
  accountId: string;
  email: string;
  token: string;
  expiresAt: number;
}

/**
 * A one-time link token to set (invite) or reset (forgotten) the password of an existing
 * account. Issuing one invalidates the account's earlier unused links.
 */
export async function issuePasswordLink(db: Db, email: string, now = Date.now()): Promise<PasswordLink> {
  const normalized = normalizeEmail(email);
  const account = await db.kysely.selectFrom('accounts').select(['id', 'email']).where('email', '=', normalized).executeTakeFirst();
  if (!account) throw new AccountError(`no account with e-mail ${normalized} (create it first: starport account create --email ${normalized})`);
  const token = newSecret();
  const expiresAt = now + PASSWORD_LINK_TTL_MS;
  await db.kysely.transaction().execute(async (tx) => {
    await tx
      .insertInto('dashboard_users')
      .values({ account_id: account.id, password_hash: null, created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('account_id').doNothing())
      .execute();
    await tx.updateTable('password_tokens').set({ used_at: now }).where('account_id', '=', account.id).where('used_at', 'is', null).execute();
    await tx
      .insertInto('password_tokens')
      .values({ token_hash: hashSecret(token), account_id: account.id, created_at: now, expires_at: expiresAt, used_at: null })
      .execute();
  });
  return { accountId: account.id, email: account.email, token, expiresAt };
}

/** The account a link token may still set the password of, or undefined (unknown, used or expired). */
export async function checkPasswordLink(db: Db, token: unknown, now = Date.now()): Promise<{ accountId: string; email: string } | undefined> {
  if (!isSecretFormat(token)) return undefined;
  const row = await db.kysely
    .selectFrom('password_tokens as t')
    .innerJoin('accounts as a', 'a.id', 't.account_id')
    .select(['a.id', 'a.email'])
    .where('t.token_hash', '=', hashSecret(token))
    .where('t.used_at', 'is', null)
    .where('t.expires_at', '>', BigInt(now))
    .executeTakeFirst();
  return row && { accountId: row.id, email: row.email };
}

export type UsePasswordLinkResult = { ok: true; accountId: string } | { ok: false; reason: 'invalid_link' | 'weak_password'; message: string };

/**
 * Sets the password through a link: the token is spent by one conditional update (two
 * concurrent uses cannot both succeed), and every existing session of the account ends.
 */
export async function usePasswordLink(db: Db, token: unknown, password: string, now = Date.now()): Promise<UsePasswordLinkResult> {
  const invalid = { ok: false, reason: 'invalid_link', message: 'This link is invalid, already used or expired. Ask your operator for a new one.' } as const;
  if (!(await checkPasswordLink(db, token, now))) return invalid;
  const weak = passwordProblem(password);
  if (weak) return { ok: false, reason: 'weak_password', message: weak };
  const passwordHash = await hashPassword(password);
  const tokenHash = hashSecret(token as string);
  return db.kysely.transaction().execute(async (tx) => {
    const spent = await tx
      .updateTable('password_tokens')
      .set({ used_at: now })
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', BigInt(now))
      .executeTakeFirst();
    if (spent.numUpdatedRows !== 1n) return invalid;
    const { account_id: accountId } = await tx.selectFrom('password_tokens').select('account_id').where('token_hash', '=', tokenHash).executeTakeFirstOrThrow();
    await tx
      .insertInto('dashboard_users')
      .values({ account_id: accountId, password_hash: passwordHash, created_at: now, updated_at: now })
      .onConflict((oc) => oc.column('account_id').doUpdateSet({ password_hash: passwordHash, updated_at: now }))
      .execute();
    await deleteAccountSessions(tx, accountId);
    return { ok: true, accountId } as const;
  });
}
