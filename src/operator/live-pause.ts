import type { Kysely } from 'kysely';
import { recordAudit } from '../audit/audit.js';
import type { Database } from '../db/schema.js';
import { setOperatorPause } from '../live/breaker.js';
import { liveOperatorPaused, liveOperatorResumed } from '../notifications/notices.js';

/**
 * The operator's maintenance pause of live fulfilment: one function for `starport live pause`
 * / `live resume` and the console's Live page. The pause, its audit record (`live.pause`,
 * `live.resume`) and the operators' alert (an incident of its own, reminded while it lasts,
 * "resolved" at the resume) commit together. While paused, new live orders answer 503
 * live_unavailable and queued ones wait, as for an open breaker (src/live/breaker.ts); a
 * successful upstream call or probe does not end it, only the resume does.
 */
export interface PauseInput {
  actor: string;
  /** Why: required to pause, optional to resume; in the audit log and the alert. */
  reason?: string;
  /** The console's person and address (source 'console'); absent for the CLI. */
  console?: { operatorId: string; ip: string };
}

/** Whether the call changed anything: pausing a paused service (or resuming a running one) does not. */
export interface PauseChange {
  changed: boolean;
}

export class PauseError extends Error {}

export async function operatorPauseLive(db: Kysely<Database>, input: PauseInput, now = Date.now()): Promise<PauseChange> {
  const reason = input.reason?.trim() ?? '';
  if (reason === '') throw new PauseError('a reason is required to pause live fulfilment');
  if ([...reason].length > 1000) throw new PauseError('the reason must be at most 1000 characters');
  return db.transaction().execute(async (tx) => {
    const { changed } = await setOperatorPause(tx, { reason, by: input.actor, at: now }, now);
    if (!changed) return { changed };
    await recordAudit(tx, { actor: input.actor, ...consoleOf(input), action: 'live.pause', reason, now });
    await liveOperatorPaused(tx, reason, input.actor, now);
    return { changed };
  });
}

export async function operatorResumeLive(db: Kysely<Database>, input: PauseInput, now = Date.now()): Promise<PauseChange> {
  const reason = input.reason?.trim() || null;
  if (reason && [...reason].length > 1000) throw new PauseError('the reason must be at most 1000 characters');
  return db.transaction().execute(async (tx) => {
    const { changed, previous } = await setOperatorPause(tx, null, now);
    if (!changed) return { changed };
    const details = { paused_reason: previous?.reason ?? null, paused_by: previous?.by ?? null, paused_seconds: previous ? Math.round((now - previous.at) / 1000) : null };
    await recordAudit(tx, { actor: input.actor, ...consoleOf(input), action: 'live.resume', reason, details, now });
    await liveOperatorResumed(tx, input.actor, now);
    return { changed };
  });
}

const consoleOf = (input: PauseInput) => (input.console ? { source: 'console' as const, operatorId: input.console.operatorId, ip: input.console.ip } : {});
