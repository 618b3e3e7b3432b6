import type { FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Session } from '../../accounts/sessions.js';
import { type AuditAction, recordAudit } from '../../audit/audit.js';
import type { Database } from '../../db/schema.js';
import type { Mode } from '../../domain/api-key.js';

/**
 * A dashboard action in the audit log the operator reads, which is also the account's activity
 * log for its owners (docs/dashboard.md, "Activity"): actor the signed-in person's e-mail,
 * source 'dashboard', the client IP in details. Pass the action's transaction when it has one,
 * so that the action and its record commit together. Never a secret in details.
 */
export async function dashboardAudit(
  db: Kysely<Database>,
  request: FastifyRequest,
  entry: { action: AuditAction; session?: Session; actor?: string; accountId?: string; mode?: Mode; details?: Record<string, unknown> },
): Promise<void> {
  await recordAudit(db, {
    actor: entry.actor ?? entry.session?.email ?? 'unknown',
    source: 'dashboard',
    action: entry.action,
    accountId: entry.accountId ?? entry.session?.accountId ?? null,
    mode: entry.mode ?? null,
    details: { ip: request.ip, ...entry.details },
    now: Date.now(),
  });
}
