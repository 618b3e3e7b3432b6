import { clearLoginFailures, releaseLoginAttempt, reserveLoginAttempt } from '../accounts/auth-throttle.js';
import { normalizeEmail } from '../accounts/accounts.js';
import { spendVerificationTime, verifyPassword } from '../accounts/passwords.js';
import { recordAudit } from '../audit/audit.js';
import type { Db } from '../db/engine.js';
import { type Operator, operatorForSignIn } from './operators.js';
import { verifyOperatorCode } from './operator-two-factor.js';

/**
 * The console's sign-in, throttled as the dashboard's is (src/accounts/auth-throttle.ts: each
 * attempt counted before it is checked, per e-mail and per IP) on counters of their own: the
 * e-mail is counted as `operator:<e-mail>`, so a client's failures never lock an operator out
 * and the reverse. A wrong code counts as a failed attempt too.
 */
const throttleKey = (email: string) => `operator:${normalizeEmail(email)}`;

export type OperatorSignIn = { ok: true; operator: Operator } | { ok: false; reason: 'invalid' | 'throttled' };

export async function operatorPasswordSignIn(db: Db, input: { email: string; password: string; ip: string }, now = Date.now()): Promise<OperatorSignIn> {
  const attempt = await reserveLoginAttempt(db, throttleKey(input.email), input.ip, now);
  if (!attempt) return { ok: false, reason: 'throttled' };
  const operator = await operatorForSignIn(db.kysely, input.email);
  let valid = false;
  if (operator?.passwordHash) valid = await verifyPassword(operator.passwordHash, input.password);
  else await spendVerificationTime(input.password);
  if (!operator || !valid) {
    if (operator) await failed(db, operator, input.ip, 'password', now);
    return { ok: false, reason: 'invalid' };
  }
  await releaseLoginAttempt(db, attempt);
  const { passwordHash: _, ...rest } = operator;
  return { ok: true, operator: rest };
}

/** The code after the password; the attempt is counted first, like the password's. */
export async function operatorCodeSignIn(db: Db, operator: { id: string; email: string }, code: string, ip: string, now = Date.now()): Promise<'ok' | 'invalid' | 'throttled'> {
  const attempt = await reserveLoginAttempt(db, throttleKey(operator.email), ip, now);
  if (!attempt) return 'throttled';
  if (!(await verifyOperatorCode(db, operator.id, code, now))) {
    await failed(db, operator, ip, 'code', now);
    return 'invalid';
  }
  await clearLoginFailures(db, throttleKey(operator.email));
  await db.kysely.transaction().execute((tx) => recordAudit(tx, { actor: operator.email, source: 'console', operatorId: operator.id, ip, action: 'operator.sign_in', now }));
  return 'ok';
}

async function failed(db: Db, operator: { id: string; email: string }, ip: string, step: 'password' | 'code', now: number): Promise<void> {
  await db.kysely
    .transaction()
    .execute((tx) => recordAudit(tx, { actor: operator.email, source: 'console', operatorId: operator.id, ip, action: 'operator.sign_in_failed', details: { step }, now }));
}
