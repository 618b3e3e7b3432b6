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
 * its e-mail's failures.
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

export async function loginThrottled(db: Db, email: string, ip: string, now = Date.now()): Promise<boolean> {
  const row = await db.kysely
    .selectFrom('auth_attempts')
    .select([sql<unknown>`sum(case when email = ${emailKey(email)} then 1 else 0 end)`.as('by_email'), sql<unknown>`sum(case when ip = ${ip} then 1 else 0 end)`.as('by_ip')])
    .where('kind', '=', 'login_failed')
    .where('created_at', '>', BigInt(now - LOGIN_WINDOW_MS))
    .where((eb) => eb.or([eb('email', '=', emailKey(email)), eb('ip', '=', ip)]))
    .executeTakeFirst();
  return toNumber(row?.by_email) >= LOGIN_FAILURES_PER_EMAIL || toNumber(row?.by_ip) >= LOGIN_FAILURES_PER_IP;
}

export async function recordLoginFailure(db: Db, email: string, ip: string, now = Date.now()): Promise<void> {
  await record(db, 'login_failed', email, ip, now);
}

export async function clearLoginFailures(db: Db, email: string): Promise<void> {
  await db.kysely.deleteFrom('auth_attempts').where('kind', '=', 'login_failed').where('email', '=', emailKey(email)).execute();
}

export async function signupThrottled(db: Db, ip: string, now = Date.now()): Promise<boolean> {
  const row = await db.kysely
    .selectFrom('auth_attempts')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('kind', '=', 'signup')
    .where('ip', '=', ip)
    .where('created_at', '>', BigInt(now - SIGNUP_WINDOW_MS))
    .executeTakeFirst();
  return toNumber(row?.n) >= SIGNUPS_PER_IP;
}

export async function recordSignup(db: Db, email: string, ip: string, now = Date.now()): Promise<void> {
  await record(db, 'signup', email, ip, now);
}

async function record(db: Db, kind: 'login_failed' | 'signup', email: string, ip: string, now: number): Promise<void> {
  await db.kysely.transaction().execute(async (tx) => {
    await tx
      .deleteFrom('auth_attempts')
      .where('created_at', '<', BigInt(now - KEEP_MS))
      .execute();
    await tx
      .insertInto('auth_attempts')
      .values({ id: `att_${randomBase62(22)}`, kind, email: emailKey(email), ip, created_at: now })
      .execute();
  });
}
