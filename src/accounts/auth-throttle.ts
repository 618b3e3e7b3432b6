import { sql } from 'kysely';
import type { Db } from '../db/engine.js';
import { randomBase62 } from '../domain/random.js';

/**
 * Login and sign-up throttling, kept in the database (auth_attempts) so that it holds across
 * API nodes and restarts. Counted per e-mail and per client IP over a sliding window:
 *
 *   failed logins   5 per e-mail and 30 per IP in 15 minutes
 *   sign-ups        10 per IP in an hour
 *
 * Unknown e-mails are counted exactly like known ones, so a throttled answer says nothing
 * about whether an account exists. A wrong two-factor code is a failed login too (same
 * counters), so the second factor cannot be guessed past the first. A complete sign-in clears
 * its e-mail's failures. Every attempt is counted before it is checked (reserveLoginAttempt),
 * so a concurrent burst cannot slip past the limit while the password is being hashed.
 */
const LOGIN_WINDOW_MS = 15 * 60 * 1000;
export const LOGIN_FAILURES_PER_EMAIL = 5;
export const LOGIN_FAILURES_PER_IP = 30;
const SIGNUP_WINDOW_MS = 60 * 60 * 1000;
export const SIGNUPS_PER_IP = 10;
/** Rows older than this are swept when new ones are written. */
const KEEP_MS = 24 * 60 * 60 * 1000;

/** E-mails as typed can be anything; the column only needs enough to tell them apart. */
const emailKey = (email: string) => email.slice(0, 320);

const toNumber = (value: unknown) => Number(String(value ?? 0));

/**
 * Counts a sign-in attempt before it is checked, and says whether it may be checked at all: the
 * attempt is written first (committed), then the window is counted with it included. Any number
 * of concurrent attempts, on any number of nodes, cannot all see a count under the limit: the
 * sixth to commit sees six, so at most LOGIN_FAILURES_PER_EMAIL are ever checked (argon2 or a
 * code) per window, however fast they arrive. A refused attempt takes its row back (it was
 * never checked; rows still in flight only make the count higher, never lower). Returns the
 * attempt's id, to release if it turns out right, or undefined when throttled.
 */
export async function reserveLoginAttempt(db: Db, email: string, ip: string, now = Date.now()): Promise<string | undefined> {
  const id = await record(db, 'login_failed', email, ip, now);
  const row = await db.kysely
    .selectFrom('auth_attempts')
    .select([sql<unknown>`sum(case when email = ${emailKey(email)} then 1 else 0 end)`.as('by_email'), sql<unknown>`sum(case when ip = ${ip} then 1 else 0 end)`.as('by_ip')])
    .where('kind', '=', 'login_failed')
    .where('created_at', '>', BigInt(now - LOGIN_WINDOW_MS))
    .where((eb) => eb.or([eb('email', '=', emailKey(email)), eb('ip', '=', ip)]))
    .executeTakeFirst();
  if (toNumber(row?.by_email) <= LOGIN_FAILURES_PER_EMAIL && toNumber(row?.by_ip) <= LOGIN_FAILURES_PER_IP) return id;
  await releaseLoginAttempt(db, id);
  return undefined;
}

/** The attempt was right (a password before its code): it does not count as a failure. */
export async function releaseLoginAttempt(db: Db, id: string): Promise<void> {
  await db.kysely.deleteFrom('auth_attempts').where('id', '=', id).execute();
}

export async function clearLoginFailures(db: Db, email: string): Promise<void> {
  await db.kysely.deleteFrom('auth_attempts').where('kind', '=', 'login_failed').where('email', '=', emailKey(email)).execute();
}

/**
 * Counts a sign-up before it is made, as reserveLoginAttempt does: false (and nothing kept) when
 * the IP has had SIGNUPS_PER_IP in the last hour, this one included.
 */
export async function reserveSignup(db: Db, email: string, ip: string, now = Date.now()): Promise<boolean> {
  const id = await record(db, 'signup', email, ip, now);
  const row = await db.kysely
    .selectFrom('auth_attempts')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('kind', '=', 'signup')
    .where('ip', '=', ip)
    .where('created_at', '>', BigInt(now - SIGNUP_WINDOW_MS))
    .executeTakeFirst();
  if (toNumber(row?.n) <= SIGNUPS_PER_IP) return true;
  await db.kysely.deleteFrom('auth_attempts').where('id', '=', id).execute();
  return false;
}

/** Writes an attempt (committed before the caller counts) and sweeps old ones. */
async function record(db: Db, kind: 'login_failed' | 'signup', email: string, ip: string, now: number): Promise<string> {
  const id = `att_${randomBase62(22)}`;
  await db.kysely.transaction().execute(async (tx) => {
    await tx
      .deleteFrom('auth_attempts')
      .where('created_at', '<', BigInt(now - KEEP_MS))
      .execute();
    await tx
      .insertInto('auth_attempts')
      .values({ id, kind, email: emailKey(email), ip, created_at: now })
      .execute();
  });
  return id;
}
