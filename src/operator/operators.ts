import type { Kysely } from 'kysely';
import { normalizeEmail } from '../accounts/accounts.js';
import { hashPassword, passwordProblem } from '../accounts/passwords.js';
import { hashSecret, isSecretFormat, newSecret } from '../accounts/secrets.js';
import { recordAudit } from '../audit/audit.js';
import type { Db } from '../db/engine.js';
import type { Database, OperatorRole } from '../db/schema.js';
import { newId } from '../domain/random.js';
import { readableTime } from '../domain/time.js';

/**
 * The operator console's people (docs/operations.md "Operator console"): created by
 * `starport operator create` with a role and a one-time set-password link; apart from the
 * clients' `people`, so no client password, session or key ever opens the console. Two-factor
 * sign-in is required from the first sign-in (src/operator/operator-two-factor.ts).
 */
export const OPERATOR_ROLES: readonly OperatorRole[] = ['admin', 'support'];
/** A set-password link works once, for a day. */
export const OPERATOR_LINK_TTL_MS = 24 * 60 * 60 * 1000;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export class OperatorError extends Error {}

export interface Operator {
  id: string;
  email: string;
  role: OperatorRole;
  passwordSet: boolean;
  twoFactor: boolean;
}

export interface NewOperatorLink {
  operator: Operator;
  /** The one-time token of the set-password link (shown once, never stored). */
  token: string;
  expiresAt: number;
}

/** A new operator and their set-password link, audited (`operator.create`) in the same transaction. */
export async function createOperator(db: Db, input: { email: string; role: string; actor: string }, now = Date.now()): Promise<NewOperatorLink> {
  const email = normalizeEmail(input.email);
  if (!EMAIL.test(email) || email.length > 320) throw new OperatorError(`--email must be an e-mail address, got "${input.email}"`);
  if (!(OPERATOR_ROLES as readonly string[]).includes(input.role)) throw new OperatorError(`--role must be one of ${OPERATOR_ROLES.join(', ')}, got "${input.role}"`);
  const role = input.role as OperatorRole;
  return db.kysely.transaction().execute(async (tx) => {
    const existing = await tx.selectFrom('operators').select('id').where('email', '=', email).executeTakeFirst();
    if (existing) throw new OperatorError(`an operator with the e-mail ${email} already exists`);
    const id = newId('opr');
    await tx
      .insertInto('operators')
      .values({ id, email, role, password_hash: null, totp_secret: null, totp_enabled_at: null, totp_last_step: null, created_at: now, updated_at: now })
      .execute();
    const link = await issueOperatorLink(tx, id, now);
    await recordAudit(tx, { actor: input.actor, action: 'operator.create', details: { operator_id: id, email, role }, now });
    return { operator: { id, email, role, passwordSet: false, twoFactor: false }, ...link };
  });
}

/**
 * A new set-password link for an existing operator (a forgotten password, a lost device): the
 * password and two-factor are cleared and every session ends, so the link's holder sets both
 * up again. Audited (`operator.link`) in the same transaction.
 */
export async function newOperatorLink(db: Db, input: { email: string; actor: string }, now = Date.now()): Promise<NewOperatorLink> {
  const email = normalizeEmail(input.email);
  return db.kysely.transaction().execute(async (tx) => {
    const row = await tx.selectFrom('operators').select(['id', 'email', 'role']).where('email', '=', email).executeTakeFirst();
    if (!row) throw new OperatorError(`no operator with the e-mail ${email}`);
    await tx
      .updateTable('operators')
      .set({ password_hash: null, totp_secret: null, totp_enabled_at: null, totp_last_step: null, updated_at: now })
      .where('id', '=', row.id)
      .execute();
    await tx.deleteFrom('operator_sessions').where('operator_id', '=', row.id).execute();
    const link = await issueOperatorLink(tx, row.id, now);
    await recordAudit(tx, { actor: input.actor, action: 'operator.link', details: { operator_id: row.id, email }, now });
    return { operator: { id: row.id, email: row.email, role: row.role, passwordSet: false, twoFactor: false }, ...link };
  });
}

/** A set-password link for an operator, voiding the older ones, in the caller's transaction. */
async function issueOperatorLink(tx: Kysely<Database>, operatorId: string, now: number): Promise<{ token: string; expiresAt: number }> {
  const token = newSecret();
  const expiresAt = now + OPERATOR_LINK_TTL_MS;
  await tx.updateTable('operator_links').set({ voided_at: now }).where('operator_id', '=', operatorId).where('used_at', 'is', null).where('voided_at', 'is', null).execute();
  await tx
    .insertInto('operator_links')
    .values({ token_hash: hashSecret(token), operator_id: operatorId, created_at: now, expires_at: expiresAt, used_at: null, voided_at: null })
    .execute();
  return { token, expiresAt };
}

export type OperatorLinkCheck = { ok: true; operator: Operator } | { ok: false; message: string };

/** The operator a set-password link is for, or why it does not work. */
export async function checkOperatorLink(db: Kysely<Database>, token: unknown, now = Date.now()): Promise<OperatorLinkCheck> {
  if (!isSecretFormat(token)) return { ok: false, message: 'This link is not valid. Check that you copied all of it.' };
  const row = await db.selectFrom('operator_links').select(['operator_id', 'expires_at', 'used_at', 'voided_at']).where('token_hash', '=', hashSecret(token)).executeTakeFirst();
  if (!row) return { ok: false, message: 'This link is not valid. Check that you copied all of it.' };
  if (row.used_at !== null) return { ok: false, message: `This link was already used, on ${readableTime(Number(row.used_at))}. It works once.` };
  if (row.voided_at !== null) return { ok: false, message: 'A newer link replaced this one.' };
  if (Number(row.expires_at) <= now) return { ok: false, message: `This link expired on ${readableTime(Number(row.expires_at))}. Ask an administrator for a new one.` };
  const operator = await operatorById(db, row.operator_id);
  return operator ? { ok: true, operator } : { ok: false, message: 'This link is not valid.' };
}

/**
 * Sets the password through a link: the link is spent by a conditional update in the same
 * transaction (two tabs cannot both use it). Returns the problem with the password, or the
 * operator whose password it now is.
 */
export async function setOperatorPassword(
  db: Db,
  input: { token: string; password: string; ip: string },
  now = Date.now(),
): Promise<{ ok: true; operator: Operator } | { ok: false; message: string }> {
  const problem = passwordProblem(input.password);
  if (problem) return { ok: false, message: problem };
  const checked = await checkOperatorLink(db.kysely, input.token, now);
  if (!checked.ok) return checked;
  const hash = await hashPassword(input.password);
  const spent = await db.kysely.transaction().execute(async (tx) => {
    const used = await tx
      .updateTable('operator_links')
      .set({ used_at: now })
      .where('token_hash', '=', hashSecret(input.token))
      .where('used_at', 'is', null)
      .where('voided_at', 'is', null)
      .where('expires_at', '>', BigInt(now))
      .executeTakeFirst();
    if (used.numUpdatedRows !== 1n) return false;
    const { operator } = checked;
    await tx.updateTable('operators').set({ password_hash: hash, updated_at: now }).where('id', '=', operator.id).execute();
    await tx.deleteFrom('operator_sessions').where('operator_id', '=', operator.id).execute();
    await recordAudit(tx, { actor: operator.email, source: 'console', operatorId: operator.id, ip: input.ip, action: 'operator.password_set', now });
    return true;
  });
  if (!spent) return { ok: false, message: 'This link was just used. It works once.' };
  return { ok: true, operator: { ...checked.operator, passwordSet: true } };
}

const OPERATOR_COLUMNS = ['id', 'email', 'role', 'password_hash', 'totp_enabled_at'] as const;

function operatorOf(row: { id: string; email: string; role: OperatorRole; password_hash: string | null; totp_enabled_at: bigint | null }): Operator {
  return { id: row.id, email: row.email, role: row.role, passwordSet: row.password_hash !== null, twoFactor: row.totp_enabled_at !== null };
}

export async function operatorById(db: Kysely<Database>, id: string): Promise<Operator | undefined> {
  const row = await db.selectFrom('operators').select(OPERATOR_COLUMNS).where('id', '=', id).executeTakeFirst();
  return row ? operatorOf(row) : undefined;
}

/** Every operator, by e-mail (the console's audit page: its operator filter and names). */
export async function listOperators(db: Kysely<Database>): Promise<Operator[]> {
  const rows = await db.selectFrom('operators').select(OPERATOR_COLUMNS).orderBy('email').execute();
  return rows.map(operatorOf);
}

/** The operator and their password hash, for the sign-in (the e-mail as typed). */
export async function operatorForSignIn(db: Kysely<Database>, email: string): Promise<(Operator & { passwordHash: string | null }) | undefined> {
  const row = await db.selectFrom('operators').select(OPERATOR_COLUMNS).where('email', '=', normalizeEmail(email)).executeTakeFirst();
  return row ? { ...operatorOf(row), passwordHash: row.password_hash } : undefined;
}
