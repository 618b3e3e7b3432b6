import type { Kysely } from 'kysely';
import type { Db } from '../db/engine.js';
import type { Database } from '../db/schema.js';
import { hashSecret, isSecretFormat, newSecret } from './secrets.js';

/**
 * Dashboard sessions, kept in the database (so every API node sees a logout at once). The
 * browser holds a random 256-bit id; the table holds its SHA-256. A session ends on logout,
 * after SESSION_IDLE_MS without a request, or SESSION_MAX_AGE_MS after login, whichever
 * comes first.
 */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
export const SESSION_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;
/** last_seen_at is written at most this often: most page views cost no write. */
const TOUCH_AFTER_MS = 60 * 1000;

export interface Session {
  idHash: string;
  accountId: string;
  email: string;
  createdAt: number;
  expiresAt: number;
}

/** Starts a session: always a new id (session fixation), and expired sessions are swept. */
export async function createSession(db: Db, accountId: string, now = Date.now()): Promise<{ id: string; session: Session }> {
  const id = newSecret();
  const expiresAt = now + SESSION_MAX_AGE_MS;
  const account = await db.kysely.selectFrom('accounts').select('email').where('id', '=', accountId).executeTakeFirstOrThrow();
  await db.kysely.transaction().execute(async (tx) => {
    await tx
      .deleteFrom('dashboard_sessions')
      .where((eb) => eb.or([eb('expires_at', '<=', BigInt(now)), eb('last_seen_at', '<=', BigInt(now - SESSION_IDLE_MS))]))
      .execute();
    await tx
      .insertInto('dashboard_sessions')
      .values({ id_hash: hashSecret(id), account_id: accountId, created_at: now, last_seen_at: now, expires_at: expiresAt })
      .execute();
  });
  return { id, session: { idHash: hashSecret(id), accountId, email: account.email, createdAt: now, expiresAt } };
}

/** The live session for a cookie value, or undefined (unknown, expired, idle too long, or the account disabled). */
export async function findSession(db: Db, id: unknown, now = Date.now()): Promise<Session | undefined> {
  if (!isSecretFormat(id)) return undefined;
  const idHash = hashSecret(id);
  const row = await db.kysely
    .selectFrom('dashboard_sessions as s')
    .innerJoin('accounts as a', 'a.id', 's.account_id')
    .select(['s.account_id', 's.created_at', 's.last_seen_at', 's.expires_at', 'a.email', 'a.status'])
    .where('s.id_hash', '=', idHash)
    .executeTakeFirst();
  if (!row) return undefined;
  const lastSeenAt = Number(row.last_seen_at);
  const expiresAt = Number(row.expires_at);
  if (now >= expiresAt || now - lastSeenAt >= SESSION_IDLE_MS || row.status !== 'active') {
    await db.kysely.deleteFrom('dashboard_sessions').where('id_hash', '=', idHash).execute();
    return undefined;
  }
  if (now - lastSeenAt >= TOUCH_AFTER_MS) {
    await db.kysely.updateTable('dashboard_sessions').set({ last_seen_at: now }).where('id_hash', '=', idHash).execute();
  }
  return { idHash, accountId: row.account_id, email: row.email, createdAt: Number(row.created_at), expiresAt };
}

export async function deleteSession(db: Db, idHash: string): Promise<void> {
  await db.kysely.deleteFrom('dashboard_sessions').where('id_hash', '=', idHash).execute();
}

/** Logs the account out everywhere (after a password change). */
export async function deleteAccountSessions(tx: Kysely<Database>, accountId: string): Promise<void> {
  await tx.deleteFrom('dashboard_sessions').where('account_id', '=', accountId).execute();
}
