import type { Kysely } from 'kysely';
import { recordAudit } from '../audit/audit.js';
import type { Database } from '../db/schema.js';
import { parseCookieHeader, SessionFormatError, storeFragmentSession } from '../live/fragment/session-store.js';

/**
 * The operator sets the Fragment session (its Cookie header): one function for `starport
 * fragment session set` and the console's Live page. The header is checked (SessionFormatError,
 * naming cookies, never a value), stored where every process reads it on its next call, and
 * audited (`fragment.session_set`, the cookie names only) in the same transaction. The value
 * is a credential: it goes to the database and nowhere else.
 */
export interface SessionInput {
  /** The Cookie header as pasted or piped in. */
  raw: string;
  actor: string;
  /** The console's person and address (source 'console'); absent for the CLI. */
  console?: { operatorId: string; ip: string };
}

export async function operatorSetFragmentSession(db: Kysely<Database>, input: SessionInput, now = Date.now()): Promise<{ names: string[] }> {
  if (input.raw.trim() === '') throw new SessionFormatError('no cookies given');
  const parsed = parseCookieHeader(input.raw);
  await db.transaction().execute(async (tx) => {
    await storeFragmentSession(tx, parsed.header, now);
    await recordAudit(tx, {
      actor: input.actor,
      ...(input.console && { source: 'console' as const, operatorId: input.console.operatorId, ip: input.console.ip }),
      action: 'fragment.session_set',
      // The names of the cookies, never their values.
      details: { cookies: parsed.names },
      now,
    });
  });
  return { names: parsed.names };
}
