import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { generateSecret, generateURI, verify } from 'otplib';
import type { Db } from '../db/engine.js';
import { DEFAULT_BRAND_NAME } from '../domain/brand.js';
import type { Database } from '../db/schema.js';
import { deletePersonSessions } from './sessions.js';
import { twoFactorTurnedOff } from '../notifications/notices.js';

/**
 * Two-factor sign-in (docs/dashboard.md, "Two-factor sign-in"): TOTP per RFC 6238 (otplib;
 * 30-second steps, 6 digits, SHA-1, one step of drift either way, as authenticator apps
 * expect), and ten one-time recovery codes shown once. A code works once: the last accepted
 * time step is stored and only a later one is accepted, by a conditional update, so two
 * requests with the same code cannot both pass. Recovery codes are stored as SHA-256 of the
 * person id and the code (50 random bits each) and spent by a conditional update too.
 */
const RECOVERY_CODE_COUNT = 10;
/** Revealing a live key, changing a webhook endpoint or the team asks again after this long. */
const STEP_UP_MS = 10 * 60 * 1000;
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
const RECOVERY_FORMAT = /^[a-z2-7]{5}-?[a-z2-7]{5}$/;
const TOTP_FORMAT = /^\d{6}$/;

function newRecoveryCode(): string {
  const bytes = randomBytes(10);
  let out = '';
  for (let i = 0; i < 10; i++) out += BASE32[(bytes[i] ?? 0) & 31];
  return `${out.slice(0, 5)}-${out.slice(5)}`;
}

function recoveryHash(personId: string, code: string): string {
  return createHash('sha256')
    .update(`${personId}\0${code.replace('-', '')}`)
    .digest('hex');
}

/** What the person typed, without spaces and in lower case. */
function normalizeCode(input: string): string {
  return input.replace(/\s+/g, '').toLowerCase();
}

export interface Enrolment {
  secret: string;
  uri: string;
}

/** A new TOTP secret and the otpauth URI an authenticator app reads (label: the e-mail). */
export function newTotpSecret(): string {
  return generateSecret();
}

export function totpUri(email: string, secret: string, issuer = DEFAULT_BRAND_NAME): string {
  return generateURI({ issuer, label: email, secret });
}

/**
 * Starts (or restarts) enrolment: a new secret, stored but not in force until a code computed
 * from it is confirmed. A person who already has two-factor on must turn it off first.
 */
export async function startEnrolment(db: Db, personId: string, email: string, issuer = DEFAULT_BRAND_NAME, now = Date.now()): Promise<Enrolment> {
  const secret = generateSecret();
  const updated = await db.kysely
    .updateTable('people')
    .set({ totp_secret: secret, totp_last_step: null, updated_at: now })
    .where('id', '=', personId)
    .where('totp_enabled_at', 'is', null)
    .executeTakeFirst();
  if (updated.numUpdatedRows !== 1n) throw new Error('two-factor sign-in is already on');
  return { secret, uri: generateURI({ issuer, label: email, secret }) };
}

/** The secret of an enrolment in progress, to show again (the page is reloaded). */
export async function pendingEnrolment(db: Db, personId: string, email: string, issuer = DEFAULT_BRAND_NAME): Promise<Enrolment | undefined> {
  const row = await db.kysely.selectFrom('people').select(['totp_secret', 'totp_enabled_at']).where('id', '=', personId).executeTakeFirst();
  if (!row?.totp_secret || row.totp_enabled_at !== null) return undefined;
  return { secret: row.totp_secret, uri: generateURI({ issuer, label: email, secret: row.totp_secret }) };
}

/** The time step of a right TOTP code later than `lastStep`, or undefined (also used by the operator console's sign-in). */
export async function checkTotp(secret: string, code: string, lastStep: bigint | null, now: number): Promise<number | undefined> {
  if (!TOTP_FORMAT.test(code)) return undefined;
  const result = await verify({
    secret,
    token: code,
    epoch: Math.floor(now / 1000),
    epochTolerance: 30,
    ...(lastStep !== null && { afterTimeStep: Number(lastStep) }),
  }).catch(() => ({ valid: false as const }));
  return result.valid ? (result as { timeStep: number }).timeStep : undefined;
}

/**
 * Confirms enrolment with a code from the app: two-factor is on from now, and the ten recovery
 * codes are returned to be shown once. Undefined when the code is wrong.
 */
export async function confirmEnrolment(db: Db, personId: string, code: string, now = Date.now()): Promise<string[] | undefined> {
  const row = await db.kysely.selectFrom('people').select(['totp_secret', 'totp_enabled_at', 'totp_last_step']).where('id', '=', personId).executeTakeFirst();
  if (!row?.totp_secret || row.totp_enabled_at !== null) return undefined;
  const step = await checkTotp(row.totp_secret, normalizeCode(code), row.totp_last_step, now);
  if (step === undefined) return undefined;
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
  const done = await db.kysely.transaction().execute(async (tx) => {
    const updated = await tx
      .updateTable('people')
      .set({ totp_enabled_at: now, totp_last_step: step, updated_at: now })
      .where('id', '=', personId)
      .where('totp_enabled_at', 'is', null)
      .where('totp_secret', '=', row.totp_secret)
      .executeTakeFirst();
    if (updated.numUpdatedRows !== 1n) return false;
    await tx.deleteFrom('recovery_codes').where('person_id', '=', personId).execute();
    await tx
      .insertInto('recovery_codes')
      .values(codes.map((c) => ({ person_id: personId, code_hash: recoveryHash(personId, c), created_at: now, used_at: null })))
      .execute();
    return true;
  });
  return done ? codes : undefined;
}

export type SecondFactorResult = { ok: true; method: 'totp' | 'recovery_code'; recoveryCodesLeft?: number } | { ok: false };

/** Checks a TOTP code or a recovery code of an enrolled person, spending it. */
export async function verifySecondFactor(db: Db, personId: string, input: string, now = Date.now()): Promise<SecondFactorResult> {
  const code = normalizeCode(input);
  const row = await db.kysely.selectFrom('people').select(['totp_secret', 'totp_enabled_at', 'totp_last_step']).where('id', '=', personId).executeTakeFirst();
  if (!row?.totp_secret || row.totp_enabled_at === null) return { ok: false };
  if (RECOVERY_FORMAT.test(code)) {
    const spent = await db.kysely
      .updateTable('recovery_codes')
      .set({ used_at: now })
      .where('person_id', '=', personId)
      .where('code_hash', '=', recoveryHash(personId, code))
      .where('used_at', 'is', null)
      .executeTakeFirst();
    if (spent.numUpdatedRows !== 1n) return { ok: false };
    const left = await db.kysely
      .selectFrom('recovery_codes')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('person_id', '=', personId)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return { ok: true, method: 'recovery_code', recoveryCodesLeft: Number(String(left?.n ?? 0)) };
  }
  const step = await checkTotp(row.totp_secret, code, row.totp_last_step, now);
  if (step === undefined) return { ok: false };
  const taken = await db.kysely
    .updateTable('people')
    .set({ totp_last_step: step })
    .where('id', '=', personId)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', BigInt(step))]))
    .executeTakeFirst();
  return taken.numUpdatedRows === 1n ? { ok: true, method: 'totp' } : { ok: false };
}

/**
 * Turns two-factor off for a person: secret and recovery codes deleted, every session ended.
 * The operator's `account 2fa reset` (audited) and the person's own "turn off".
 */
export async function resetTwoFactor(tx: Kysely<Database>, personId: string, now = Date.now()): Promise<boolean> {
  const enrolled = await tx.selectFrom('people').select('totp_enabled_at').where('id', '=', personId).executeTakeFirst();
  if (enrolled?.totp_enabled_at) await twoFactorTurnedOff(tx, personId, now);
  const updated = await tx
    .updateTable('people')
    .set({ totp_secret: null, totp_enabled_at: null, totp_last_step: null, updated_at: now })
    .where('id', '=', personId)
    .executeTakeFirst();
  await tx.deleteFrom('recovery_codes').where('person_id', '=', personId).execute();
  await deletePersonSessions(tx, personId);
  return updated.numUpdatedRows === 1n;
}

/**
 * The active accounts of a person whose owners require two-factor sign-in of every member (their
 * e-mails): while there is one, the person may not turn their own two-factor off, from any of
 * their accounts.
 */
export async function accountsRequiringTwoFactor(db: Kysely<Database>, personId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('memberships as m')
    .innerJoin('accounts as a', 'a.id', 'm.account_id')
    .select('a.email')
    .where('m.person_id', '=', personId)
    .where('a.status', '=', 'active')
    .where('a.two_factor_required_at', 'is not', null)
    .orderBy('a.email')
    .execute();
  return rows.map((r) => r.email);
}

/**
 * A person turns their own two-factor off (the code was checked by the caller): refused, with the
 * accounts that require it, while any does; checked in the transaction that turns it off.
 */
export async function turnOffTwoFactor(db: Db, personId: string, within?: (tx: Kysely<Database>) => Promise<unknown>): Promise<{ ok: true } | { ok: false; requiredBy: string[] }> {
  return db.kysely.transaction().execute(async (tx) => {
    const requiredBy = await accountsRequiringTwoFactor(tx, personId);
    if (requiredBy.length > 0) return { ok: false, requiredBy } as const;
    await resetTwoFactor(tx, personId);
    await within?.(tx);
    return { ok: true } as const;
  });
}

/** Whether an enrolled session gave its second factor recently enough for a sensitive action. */
export function steppedUp(session: { twoFactor: boolean; secondFactorAt: number | undefined }, now = Date.now()): boolean {
  if (!session.twoFactor) return true;
  return session.secondFactorAt !== undefined && now - session.secondFactorAt <= STEP_UP_MS;
}
