import type { Kysely } from 'kysely';
import type { Db } from '../db/engine.js';
import type { Database, TeamRole } from '../db/schema.js';
import { hashSecret, isSecretFormat, newSecret } from './secrets.js';

/**
 * Dashboard sessions, kept in the database (so every API node sees a logout at once). The
 * browser holds a random 256-bit id; the table holds its SHA-256. A session ends on logout,
 * after SESSION_IDLE_MS without a request, or SESSION_MAX_AGE_MS after login, whichever
 * comes first. A session is a person looking at one account they are a member of: it ends
 * the moment that membership does (every lookup joins it), and its role is read on every
 * request. A right password alone gives a session in stage 'second_factor' when the person
 * has two-factor sign-in on: it reaches only the code form (docs/dashboard.md).
 */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
export const SESSION_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;
/** A password-only session has this long to give the second factor. */
const SECOND_FACTOR_STAGE_MS = 10 * 60 * 1000;
/** last_seen_at is written at most this often: most page views cost no write. */
const TOUCH_AFTER_MS = 60 * 1000;

export type SessionStage = 'active' | 'second_factor';
/** How long a removed member's cookie is still told why it no longer works. */
const SESSION_END_KEPT_MS = 7 * 24 * 60 * 60 * 1000;

export interface Session {
  idHash: string;
  personId: string;
  /** The person's e-mail (who is signed in). */
  email: string;
  accountId: string;
  /** The e-mail of the account being looked at. */
  accountEmail: string;
  role: TeamRole;
  stage: SessionStage;
  createdAt: number;
  expiresAt: number;
  /** When this session last gave the second factor, or undefined. */
  secondFactorAt: number | undefined;
  /** The person has enrolled TOTP. */
  twoFactor: boolean;
  /** The account's owner requires two-factor sign-in of every member. */
  twoFactorRequired: boolean;
  /** The person's address still waits for its verification link (the dashboard's banner). */
  emailUnverified: boolean;
}

/** Starts a session: always a new id (session fixation), and expired sessions are swept. */
export async function createSession(
  db: Db,
  personId: string,
  accountId: string,
  options: { stage?: SessionStage; secondFactorAt?: number } = {},
  now = Date.now(),
): Promise<{ id: string; session: Session }> {
  const id = newSecret();
  const stage = options.stage ?? 'active';
  const expiresAt = stage === 'active' ? now + SESSION_MAX_AGE_MS : now + SECOND_FACTOR_STAGE_MS;
  await db.kysely.transaction().execute(async (tx) => {
    await tx
      .deleteFrom('dashboard_sessions')
      .where((eb) => eb.or([eb('expires_at', '<=', BigInt(now)), eb('last_seen_at', '<=', BigInt(now - SESSION_IDLE_MS))]))
      .execute();
    await tx
      .insertInto('dashboard_sessions')
      .values({
        id_hash: hashSecret(id),
        account_id: accountId,
        person_id: personId,
        created_at: now,
        last_seen_at: now,
        expires_at: expiresAt,
        stage,
        second_factor_at: options.secondFactorAt ?? null,
      })
      .execute();
  });
  const session = await findSession(db, id, now);
  if (!session) throw new Error('the new session was not found');
  return { id, session };
}

/**
 * The live session for a cookie value, or undefined (unknown, expired, idle too long, the
 * account disabled, or the person no longer a member of it).
 */
export async function findSession(db: Db, id: unknown, now = Date.now()): Promise<Session | undefined> {
  const found = await lookUpSession(db, id, now);
  return 'session' in found ? found : undefined;
}

/**
 * Why a cookie's session is no longer live: the membership it looked at ended (`removed`), the
 * account was disabled, or it expired or never existed.
 */
export type SessionEnd = { ended: 'removed' | 'disabled' | 'expired' | 'unknown' };

/** As findSession, saying why there is none (the login page tells a removed member so). */
export async function lookUpSession(db: Db, id: unknown, now = Date.now()): Promise<(Session & { session: true }) | SessionEnd> {
  if (!isSecretFormat(id)) return { ended: 'unknown' };
  const idHash = hashSecret(id);
  const row = await db.kysely
    .selectFrom('dashboard_sessions as s')
    .innerJoin('accounts as a', 'a.id', 's.account_id')
    .leftJoin('memberships as m', (join) => join.onRef('m.account_id', '=', 's.account_id').onRef('m.person_id', '=', 's.person_id'))
    .leftJoin('people as p', 'p.id', 's.person_id')
    .select([
      's.account_id',
      's.person_id',
      's.created_at',
      's.last_seen_at',
      's.expires_at',
      's.stage',
      's.second_factor_at',
      'a.email as account_email',
      'a.status',
      'a.two_factor_required_at',
      'm.role',
      'p.email',
      'p.totp_enabled_at',
      'p.email_unverified_since',
    ])
    .where('s.id_hash', '=', idHash)
    .executeTakeFirst();
  if (!row) {
    const end = await db.kysely.selectFrom('session_ends').select('reason').where('id_hash', '=', idHash).executeTakeFirst();
    return end ? { ended: 'removed' } : { ended: 'unknown' };
  }
  const lastSeenAt = Number(row.last_seen_at);
  const expiresAt = Number(row.expires_at);
  if (now >= expiresAt || now - lastSeenAt >= SESSION_IDLE_MS || row.status !== 'active' || !row.role || !row.person_id || !row.email) {
    await db.kysely.deleteFrom('dashboard_sessions').where('id_hash', '=', idHash).execute();
    if (now >= expiresAt || now - lastSeenAt >= SESSION_IDLE_MS) return { ended: 'expired' };
    if (row.status !== 'active') return { ended: 'disabled' };
    return { ended: 'removed' };
  }
  if (now - lastSeenAt >= TOUCH_AFTER_MS) {
    await db.kysely.updateTable('dashboard_sessions').set({ last_seen_at: now }).where('id_hash', '=', idHash).execute();
  }
  return {
    session: true,
    idHash,
    personId: row.person_id,
    email: row.email,
    accountId: row.account_id,
    accountEmail: row.account_email,
    role: row.role,
    stage: row.stage,
    createdAt: Number(row.created_at),
    expiresAt,
    secondFactorAt: row.second_factor_at === null ? undefined : Number(row.second_factor_at),
    twoFactor: row.totp_enabled_at !== null,
    twoFactorRequired: row.two_factor_required_at !== null,
    emailUnverified: row.email_unverified_since !== null,
  };
}

export async function deleteSession(db: Db, idHash: string): Promise<void> {
  await db.kysely.deleteFrom('dashboard_sessions').where('id_hash', '=', idHash).execute();
}

/**
 * The second factor was just given again (a step-up confirmation, or turning two-factor on):
 * sensitive actions are allowed for the next 10 minutes. The session still ends
 * SESSION_MAX_AGE_MS after its sign-in: a code proves presence, it does not start a new sign-in.
 */
export async function markSecondFactor(db: Db, idHash: string, now = Date.now()): Promise<void> {
  await db.kysely.updateTable('dashboard_sessions').set({ second_factor_at: now }).where('id_hash', '=', idHash).execute();
}

/** Moves the session to another account of the same person (checked by the caller). */
export async function switchSessionAccount(db: Db, idHash: string, accountId: string): Promise<void> {
  await db.kysely.updateTable('dashboard_sessions').set({ account_id: accountId }).where('id_hash', '=', idHash).execute();
}

/** Logs a person out everywhere (after a password change, a two-factor reset). */
export async function deletePersonSessions(tx: Kysely<Database>, personId: string): Promise<void> {
  await tx.deleteFrom('dashboard_sessions').where('person_id', '=', personId).execute();
}

/** Ends a person's sessions on one account at once (removed from the team); their cookies are told why for a week. */
export async function deleteMemberSessions(tx: Kysely<Database>, accountId: string, personId: string, now = Date.now()): Promise<void> {
  const ended = await tx.selectFrom('dashboard_sessions').select('id_hash').where('account_id', '=', accountId).where('person_id', '=', personId).execute();
  await tx
    .deleteFrom('session_ends')
    .where('ended_at', '<', BigInt(now - SESSION_END_KEPT_MS))
    .execute();
  if (ended.length > 0) {
    await tx
      .insertInto('session_ends')
      .values(ended.map((s) => ({ id_hash: s.id_hash, reason: 'removed' as const, ended_at: now })))
      .onConflict((oc) => oc.column('id_hash').doNothing())
      .execute();
  }
  await tx.deleteFrom('dashboard_sessions').where('account_id', '=', accountId).where('person_id', '=', personId).execute();
}
