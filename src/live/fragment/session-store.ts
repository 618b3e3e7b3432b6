import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/**
 * The Fragment session (its cookies) as the operator last set it with `starport fragment
 * session set`, kept in the database so that every API node and worker uses a renewed session
 * from its next call, without a restart. It wins over FRAGMENT_COOKIES. The value is a
 * credential: it is never logged, printed or put in an error message; only the cookie names are
 * ever shown.
 */
const SESSION = 'fragment_session';
const KYC = 'fragment_kyc';

/** The cookies a working session has (docs/upstreams.md "Fragment: session and page hash": all four are required). */
const REQUIRED_COOKIES = ['stel_ssid', 'stel_dt', 'stel_token', 'stel_ton_token'] as const;

export class SessionFormatError extends Error {}

/**
 * Checks a Cookie-header string (`name=value; name=value`) and returns it normalized (one
 * space after each `;`). Only names appear in the error.
 */
export function parseCookieHeader(text: string): { header: string; names: string[] } {
  const pairs = text
    .trim()
    .replace(/^cookie:\s*/i, '')
    .split(';')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  const names: string[] = [];
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const name = eq > 0 ? pair.slice(0, eq).trim() : '';
    if (!/^[A-Za-z0-9_.-]+$/.test(name) || /[\s,]/.test(pair.slice(eq + 1).trim()) || pair.slice(eq + 1).trim() === '') {
      throw new SessionFormatError('the session must be a Cookie header: name=value pairs separated by "; "');
    }
    names.push(name);
  }
  const missing = REQUIRED_COOKIES.filter((n) => !names.includes(n));
  if (missing.length > 0) throw new SessionFormatError(`the session lacks the cookie(s) ${missing.join(', ')} (a Fragment session needs ${REQUIRED_COOKIES.join(', ')})`);
  return { header: pairs.map((p) => p.replace(/\s*=\s*/, '=')).join('; '), names };
}

export async function storeFragmentSession(db: Kysely<Database>, header: string, now = Date.now()): Promise<void> {
  await db
    .insertInto('live_settings')
    .values({ name: SESSION, value: header, updated_at: now })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value: header, updated_at: now }))
    .execute();
}

/** The stored session with when it was set, or undefined. */
export async function storedFragmentSession(db: Kysely<Database>): Promise<{ header: string; updatedAt: number } | undefined> {
  const row = await db.selectFrom('live_settings').select(['value', 'updated_at']).where('name', '=', SESSION).executeTakeFirst();
  return row && { header: row.value, updatedAt: Number(row.updated_at) };
}

/** When the stored session was set, without reading the credential itself (the console shows only this). */
export async function fragmentSessionSetAt(db: Kysely<Database>): Promise<number | undefined> {
  const row = await db.selectFrom('live_settings').select('updated_at').where('name', '=', SESSION).executeTakeFirst();
  return row && Number(row.updated_at);
}

/**
 * The session to use: the stored one, else FRAGMENT_COOKIES. Read on every call (one
 * primary-key lookup), which is how a session set by another process reaches this one.
 */
export function sessionSource(db: Kysely<Database>, fallback: string | undefined): () => Promise<string | undefined> {
  return async () => (await storedFragmentSession(db))?.header ?? fallback;
}

export type KycState = 'verified' | 'required';

/** What Fragment last said about the account's identity verification (only get*Link tells). */
export async function recordKyc(db: Kysely<Database>, state: KycState, now = Date.now()): Promise<void> {
  await db
    .insertInto('live_settings')
    .values({ name: KYC, value: state, updated_at: now })
    .onConflict((oc) => oc.column('name').doUpdateSet({ value: state, updated_at: now }))
    .execute();
}

export async function lastKyc(db: Kysely<Database>): Promise<{ state: KycState; at: number } | undefined> {
  const row = await db.selectFrom('live_settings').select(['value', 'updated_at']).where('name', '=', KYC).executeTakeFirst();
  return row && { state: row.value as KycState, at: Number(row.updated_at) };
}
