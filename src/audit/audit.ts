import os from 'node:os';
import type { Kysely } from 'kysely';
import type { Mode } from '../domain/api-key.js';
import { randomBase62 } from '../domain/random.js';
import type { AuditLogRow, Database } from '../db/schema.js';

/**
 * The operator's audit log (table audit_log, migration 0003-operator): every action that
 * changes an account, a key, a balance or an order by hand is recorded with who, when, what
 * and why, inside the transaction of the action itself, so that the action and its record
 * commit together or not at all.
 */
export const AUDIT_ACTIONS = [
  'account.create',
  'account.disable',
  'account.enable',
  'key.reissue',
  'key.revoke',
  'balance.credit',
  'balance.debit',
  'order.resolve',
  'database.restore',
  'fragment.session_set',
  // The operator's maintenance pause of live fulfilment (docs/operations.md "Operator console").
  'live.pause',
  'live.resume',
  'deposit.assign',
  'deposit.return',
  // The dashboard (source 'dashboard', actor the person's e-mail, details.ip the client's
  // address): the client's activity log (docs/dashboard.md, "Activity").
  'dashboard.sign_in',
  'dashboard.sign_in_failed',
  'dashboard.key_reveal',
  'dashboard.test_funds',
  'dashboard.password_link',
  'webhook.create',
  'webhook.rotate',
  'webhook.delete',
  'webhook.enable',
  'team.invite',
  'team.invite_revoke',
  'team.invite_resend',
  'team.join',
  'team.remove',
  'team.role',
  'team.require_two_factor',
  'two_factor.enable',
  'two_factor.disable',
  'two_factor.reset',
  'settings.change',
  // Price plans (docs/operations.md "Price plans").
  'plan.create',
  'plan.assign',
  // The operator console (source 'console', operator_id and ip set; docs/operations.md "Operator console").
  'operator.create',
  'operator.link',
  'operator.password_set',
  'operator.two_factor_enable',
  'operator.sign_in',
  'operator.sign_in_failed',
  'operator.sign_out',
  'account.password_link',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export interface AuditEntry {
  actor: string;
  /** Where the action came from: the CLI (default), the dashboard or the operator console. */
  source?: 'cli' | 'dashboard' | 'console';
  /** The console person who acted and their address (source 'console'). */
  operatorId?: string | null;
  ip?: string | null;
  action: AuditAction;
  accountId?: string | null;
  mode?: Mode | null;
  orderId?: string | null;
  reason?: string | null;
  /** Amounts, before/after states, key prefixes: never a secret. */
  details?: Record<string, unknown>;
  now: number;
}

export interface AuditRecord {
  id: string;
  createdAt: number;
  actor: string;
  source: string;
  action: string;
  accountId: string | null;
  mode: Mode | null;
  orderId: string | null;
  reason: string | null;
  details: Record<string, unknown>;
  operatorId: string | null;
  ip: string | null;
}

/** Writes one audit row; call it with the transaction of the action it records. */
export async function recordAudit(tx: Kysely<Database>, entry: AuditEntry): Promise<string> {
  const id = `aud_${randomBase62(22)}`;
  await tx
    .insertInto('audit_log')
    .values({
      id,
      created_at: entry.now,
      actor: entry.actor,
      source: entry.source ?? 'cli',
      action: entry.action,
      account_id: entry.accountId ?? null,
      mode: entry.mode ?? null,
      order_id: entry.orderId ?? null,
      reason: entry.reason ?? null,
      details: JSON.stringify(entry.details ?? {}),
      operator_id: entry.operatorId ?? null,
      ip: entry.ip ?? null,
    })
    .execute();
  return id;
}

export interface AuditFilter {
  accountId?: string;
  orderId?: string;
  action?: string;
  actor?: string;
  /** The console person who acted (source 'console'). */
  operatorId?: string;
  since?: number;
  until?: number;
  /** Paging: only entries older than this one (its time and id), in the newest-first order. */
  before?: AuditCursor;
  limit: number;
}

/** Where a page of the log ends: the last entry's time and id. */
export interface AuditCursor {
  createdAt: number;
  id: string;
}

/** Newest first. */
export async function listAudit(db: Kysely<Database>, filter: AuditFilter): Promise<AuditRecord[]> {
  let query = db.selectFrom('audit_log').selectAll();
  if (filter.accountId) query = query.where('account_id', '=', filter.accountId);
  if (filter.orderId) query = query.where('order_id', '=', filter.orderId);
  if (filter.action) query = query.where('action', '=', filter.action);
  if (filter.actor) query = query.where('actor', '=', filter.actor);
  if (filter.operatorId) query = query.where('operator_id', '=', filter.operatorId);
  if (filter.since !== undefined) query = query.where('created_at', '>=', BigInt(filter.since));
  if (filter.until !== undefined) query = query.where('created_at', '<', BigInt(filter.until));
  const before = filter.before;
  if (before)
    query = query.where((eb) => eb.or([eb('created_at', '<', BigInt(before.createdAt)), eb.and([eb('created_at', '=', BigInt(before.createdAt)), eb('id', '<', before.id)])]));
  const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
  return rows.map(auditFromRow);
}

function auditFromRow(row: AuditLogRow): AuditRecord {
  return {
    id: row.id,
    createdAt: Number(row.created_at),
    actor: row.actor,
    source: row.source,
    action: row.action,
    accountId: row.account_id,
    mode: row.mode,
    orderId: row.order_id,
    reason: row.reason,
    details: JSON.parse(row.details) as Record<string, unknown>,
    operatorId: row.operator_id,
    ip: row.ip,
  };
}

export class ActorError extends Error {}

/**
 * Who is acting: `--actor`, else STARPORT_ACTOR, else the OS user running the command
 * (os.userInfo() can fail in a container whose uid has no passwd entry: then `uid:N`).
 */
export function resolveActor(explicit: string | undefined, env: Record<string, string | undefined> = process.env): string {
  const chosen = explicit ?? (env.STARPORT_ACTOR || undefined) ?? osUser();
  const actor = chosen.trim();
  if (actor === '') throw new ActorError('--actor must not be empty');
  if ([...actor].length > 200) throw new ActorError('--actor must be at most 200 characters');
  return actor;
}

function osUser(): string {
  try {
    const name = os.userInfo().username;
    if (name) return name;
  } catch {
    // no passwd entry for this uid
  }
  return typeof process.getuid === 'function' ? `uid:${process.getuid()}` : 'unknown';
}
