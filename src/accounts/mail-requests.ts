import { sql } from 'kysely';
import type { Db } from '../db/engine.js';
import { randomBase62 } from '../domain/random.js';

/**
 * The throttle of requests that e-mail a one-time link (docs/dashboard.md "Verified e-mail,
 * password reset and invites by e-mail"), kept in the database (mail_requests) so it holds
 * across nodes and restarts, per address and per client IP over one hour:
 *
 *   password_reset   3 per address, 20 per IP
 *   verify_email     3 per address, 20 per IP (a new verification link)
 *   change_email     3 per person's address, 20 per IP
 *
 * As reserveLoginAttempt (auth-throttle.ts): the request is written (committed) first, then
 * the window is counted with it included, so a concurrent burst cannot pass the limit. A
 * refused request takes its row back. Addresses nobody has are counted like known ones.
 */
const WINDOW_MS = 60 * 60 * 1000;
export type MailRequestKind = 'password_reset' | 'verify_email' | 'change_email';
export const MAIL_REQUEST_LIMITS: Record<MailRequestKind, { perEmail: number; perIp: number }> = {
  password_reset: { perEmail: 3, perIp: 20 },
  verify_email: { perEmail: 3, perIp: 20 },
  change_email: { perEmail: 3, perIp: 20 },
};
/** Rows older than this are swept when new ones are written. */
const KEEP_MS = 24 * 60 * 60 * 1000;

const emailKey = (email: string) => email.slice(0, 320);
const toNumber = (value: unknown) => Number(String(value ?? 0));

/** Counts a request before acting on it; false (and nothing kept) when over a limit. */
export async function reserveMailRequest(db: Db, kind: MailRequestKind, email: string, ip: string, now = Date.now()): Promise<boolean> {
  const id = `mrq_${randomBase62(22)}`;
  await db.kysely.transaction().execute(async (tx) => {
    await tx
      .deleteFrom('mail_requests')
      .where('created_at', '<', BigInt(now - KEEP_MS))
      .execute();
    await tx
      .insertInto('mail_requests')
      .values({ id, kind, email: emailKey(email), ip, created_at: now })
      .execute();
  });
  const row = await db.kysely
    .selectFrom('mail_requests')
    .select([sql<unknown>`sum(case when email = ${emailKey(email)} then 1 else 0 end)`.as('by_email'), sql<unknown>`sum(case when ip = ${ip} then 1 else 0 end)`.as('by_ip')])
    .where('kind', '=', kind)
    .where('created_at', '>', BigInt(now - WINDOW_MS))
    .where((eb) => eb.or([eb('email', '=', emailKey(email)), eb('ip', '=', ip)]))
    .executeTakeFirst();
  const limit = MAIL_REQUEST_LIMITS[kind];
  if (toNumber(row?.by_email) <= limit.perEmail && toNumber(row?.by_ip) <= limit.perIp) return true;
  await db.kysely.deleteFrom('mail_requests').where('id', '=', id).execute();
  return false;
}
