import { ActorError, type AuditRecord, resolveActor } from '../audit/audit.js';
import { AccountError } from '../accounts/accounts.js';
import { isMode, type Mode } from '../domain/api-key.js';
import { PlanError } from '../domain/price-plan.js';
import { formatTon } from '../domain/money.js';
import { formatTimestamp } from '../domain/time.js';
import { SchemaTooNewError } from '../db/migrate.js';
import { AdjustmentError } from '../ledger/adjust.js';
import { ResolveError } from '../orders/admin.js';
import { CopyError } from '../operator/copy.js';
import { SqliteFileError } from '../db/sqlite-files.js';
import { type Command, type CommandIo, required, UsageError } from './command.js';

/**
 * Shared pieces of the operator commands: options every audited command takes, parsing of
 * times and limits, text tables, and the mapping of domain refusals to exit 1.
 */

/** --actor, for every command that writes the audit log. */
export const actorOption = { actor: { type: 'string' } } as const;
export const ACTOR_HELP = 'The audit log records who acted: --actor, else STARPORT_ACTOR, else the OS user.';

export function actorOf(values: Record<string, unknown>): string {
  const explicit = values.actor;
  if (explicit !== undefined && typeof explicit !== 'string') throw new UsageError('--actor needs a value');
  try {
    return resolveActor(explicit);
  } catch (error) {
    if (error instanceof ActorError) throw new UsageError(error.message);
    throw error;
  }
}

/** A required, non-blank --reason. */
export function reasonOf(values: Record<string, unknown>): string {
  const reason = required(values, 'reason');
  if (reason.trim() === '') throw new UsageError('--reason must not be blank');
  if ([...reason].length > 1000) throw new UsageError('--reason must be at most 1000 characters');
  return reason.trim();
}

/** An optional --reason (account create, key reissue): undefined when absent. */
export function optionalReasonOf(values: Record<string, unknown>): string | undefined {
  return values.reason === undefined ? undefined : reasonOf(values);
}

export function modeOf(values: Record<string, unknown>, options: { optional?: boolean } = {}): Mode | undefined {
  if (values.mode === undefined && options.optional) return undefined;
  const mode = required(values, 'mode');
  if (!isMode(mode)) throw new UsageError(`--mode must be live or test, got "${mode}"`);
  return mode;
}

export function positional(values: Record<string, unknown>, name: string, label: string): string {
  const value = values[name];
  if (typeof value !== 'string' || value.trim() === '') throw new UsageError(`${label} is required`);
  return value.trim();
}

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * A point in time for --since / --until: a UTC date (2026-01-31 = its midnight UTC), an RFC 3339
 * time (2026-01-31T12:00:00Z), `today` (midnight UTC), or a duration ago (30m, 24h, 7d).
 */
function parseWhen(text: string, name: string, now: number): number {
  const value = text.trim();
  const relative = /^(\d{1,6})([mhd])$/.exec(value);
  let at: number | undefined;
  if (relative) at = now - Number(relative[1]) * UNIT_MS[relative[2] as keyof typeof UNIT_MS];
  else if (value === 'today') at = Math.floor(now / UNIT_MS.d) * UNIT_MS.d;
  else if (value === 'now') at = now;
  else if (DATE.test(value)) at = Date.parse(`${value}T00:00:00Z`);
  else if (DATE_TIME.test(value)) at = Date.parse(value);
  if (at === undefined || Number.isNaN(at)) {
    throw new UsageError(`--${name} must be a date (2026-01-31, UTC), a time (2026-01-31T12:00:00Z), today, or a duration ago (30m, 24h, 7d); got "${text}"`);
  }
  return at;
}

export function optionalWhen(values: Record<string, unknown>, name: string, now: number): number | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} needs a value`);
  return parseWhen(value, name, now);
}

export function limitOf(values: Record<string, unknown>, fallback: number, max = 10_000): number {
  const value = values.limit;
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw new UsageError(`--limit must be an integer from 1 to ${max}, got "${String(value)}"`);
  }
  return Number(value);
}

export const ton = (nanotons: bigint) => formatTon(nanotons);
export const time = (epochMs: number | null) => (epochMs === null ? null : formatTimestamp(epochMs));

/** Left-aligned columns, two spaces apart. */
export function table(headers: string[], rows: (string | number | null)[][]): string {
  const cells = [headers, ...rows.map((r) => r.map((c) => (c === null ? '-' : String(c))))];
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ')).join('\n');
}

/** Errors that mean "the operator asked for something that cannot be done": exit 1, no stack. */
const REFUSALS = [AccountError, AdjustmentError, ResolveError, SqliteFileError, CopyError, SchemaTooNewError, PlanError];

/**
 * Wraps a command so that domain refusals (unknown account, balance too low, database in use…)
 * exit 1 with their message on stderr (and `{ok: false, error}` on stdout with --json), like
 * bad input does, without the usage line that bad input gets.
 */
export function operatorCommand(command: Command): Command {
  return {
    ...command,
    async run(values, io) {
      try {
        return await command.run(values, io);
      } catch (error) {
        if (!REFUSALS.some((type) => error instanceof type)) throw error;
        return refuse(io, (error as Error).message);
      }
    },
  };
}

export function refuse(io: CommandIo, message: string): number {
  process.stderr.write(`error: ${message}\n`);
  if (io.json) process.stdout.write(`${JSON.stringify({ ok: false, error: { message } })}\n`);
  return 1;
}

/** An audit entry as the CLI prints it. */
export function auditJson(entry: AuditRecord) {
  return {
    id: entry.id,
    created_at: time(entry.createdAt),
    actor: entry.actor,
    source: entry.source,
    action: entry.action,
    account_id: entry.accountId,
    mode: entry.mode,
    order_id: entry.orderId,
    reason: entry.reason,
    details: entry.details,
  };
}

export function auditTable(entries: ReturnType<typeof auditJson>[]): string {
  return table(
    ['TIME', 'ACTOR', 'ACTION', 'ACCOUNT', 'MODE', 'ORDER', 'DETAILS', 'REASON'],
    entries.map((e) => [e.created_at, e.actor, e.action, e.account_id, e.mode, e.order_id, JSON.stringify(e.details), e.reason]),
  );
}
