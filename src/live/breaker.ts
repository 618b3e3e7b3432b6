import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';
import { liveFulfilmentPaused, liveFulfilmentResumed } from '../notifications/notices.js';

/**
 * The circuit breaker of the live upstream (docs/upstreams.md "Fragment: errors"), kept in the database so that
 * every API node and worker process sees the same state:
 * - closed: live orders are taken and fulfilled;
 * - open: the upstream cannot sell to us (session expired, KYC, no TON, down): new live orders
 *   answer 503 live_unavailable with nothing reserved, queued ones wait; the operator is alerted
 *   (error log, starport_live_paused metric, /readyz detail);
 * - half-open: after the cool-down one process wins the probe (`claimProbe`) and checks the
 *   upstream; success closes the breaker, failure starts a new cool-down.
 * "Down" is LIVE_BREAKER_THRESHOLD consecutive transient failures, counted across processes.
 *
 * Beside the upstream's state, the same row holds the operator's maintenance pause
 * (`starport live pause`, the console's Live page; src/operator/live-pause.ts): while it is set
 * live fulfilment is paused exactly as by an open breaker, and only the operator's resume ends
 * it: a successful call or probe closes the upstream's half, never this one.
 */
export interface BreakerState {
  /** The upstream's state; `paused()` tells whether live fulfilment is paused for either cause. */
  state: 'closed' | 'open';
  reason: string | null;
  message: string | null;
  failures: number;
  openedAt: number | null;
  retryAt: number | null;
  /** The operator's maintenance pause, or null. */
  operatorPause: OperatorPause | null;
}

export interface OperatorPause {
  reason: string;
  /** The audit actor who paused (an operator's e-mail, or the CLI's --actor). */
  by: string;
  at: number;
}

/** The reason live fulfilment shows while the operator paused it (/readyz, `live check`, metrics). */
export const OPERATOR_PAUSE_REASON = 'paused_by_operator';

/** Live fulfilment is paused: the upstream's breaker is open or the operator paused it. */
export function paused(state: BreakerState): boolean {
  return state.state === 'open' || state.operatorPause !== null;
}

export interface BreakerOptions {
  cooldownMs: number;
  threshold: number;
  logger: Logger;
  /** Told when this process opened the breaker (a metric). */
  onOpen?: (reason: string) => void;
  name?: string;
}

const CLOSED: BreakerState = { state: 'closed', reason: null, message: null, failures: 0, openedAt: null, retryAt: null, operatorPause: null };

export class CircuitBreaker {
  readonly name: string;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: BreakerOptions,
  ) {
    this.name = options.name ?? 'fragment';
  }

  async read(): Promise<BreakerState> {
    const row = await this.db.selectFrom('live_breaker').selectAll().where('name', '=', this.name).executeTakeFirst();
    if (!row) return CLOSED;
    const optional = (v: bigint | null) => (v === null ? null : Number(v));
    const operatorPause = row.paused_reason === null ? null : { reason: row.paused_reason, by: row.paused_by ?? 'unknown', at: Number(row.paused_at ?? 0) };
    return {
      state: row.state,
      reason: row.reason,
      message: row.message,
      failures: Number(row.failures),
      openedAt: optional(row.opened_at),
      retryAt: optional(row.retry_at),
      operatorPause,
    };
  }

  /** Live fulfilment is paused, by the upstream or by the operator. */
  async isOpen(): Promise<boolean> {
    return paused(await this.read());
  }

  /** Pauses live fulfilment; alerts only on the change from closed to open. */
  async open(reason: string, message: string, now = Date.now()): Promise<void> {
    await this.ensureRow(now);
    // The operator's alert commits with the change (one alert, whichever process opened it).
    const opened = await this.db.transaction().execute(async (tx) => {
      const updated = await tx
        .updateTable('live_breaker')
        .set({ state: 'open', reason, message, opened_at: now, retry_at: now + this.options.cooldownMs, probe_until: null, updated_at: now })
        .where('name', '=', this.name)
        .where('state', '=', 'closed')
        .executeTakeFirst();
      if (updated.numUpdatedRows === 1n) await liveFulfilmentPaused(tx, reason, message, now);
      return updated;
    });
    if (opened.numUpdatedRows === 1n) {
      this.options.logger.error(
        { breaker: this.name, reason, upstream_message: message, retry_at: new Date(now + this.options.cooldownMs).toISOString() },
        `live fulfilment paused: ${reason} (new live orders answer 503 live_unavailable until the upstream answers again)`,
      );
      this.options.onOpen?.(reason);
    }
  }

  /** A call went through: the failure count starts again, and an open breaker closes. */
  async recordSuccess(now = Date.now()): Promise<void> {
    // The common case, nothing to close, is a read (no write transaction per successful call).
    const current = await this.read();
    if (current.state === 'closed' && current.failures === 0) return;
    const closed = await this.db.transaction().execute(async (tx) => {
      // Two conditional updates: the first tells whether this call closed an open breaker
      // (RETURNING gives the values after the update, so the old state is asked in WHERE).
      const reopened = await tx
        .updateTable('live_breaker')
        .set({ state: 'closed', reason: null, message: null, failures: 0n, opened_at: null, retry_at: null, probe_until: null, updated_at: now })
        .where('name', '=', this.name)
        .where('state', '=', 'open')
        .returning('name')
        .execute();
      if (reopened.length === 0) {
        await tx.updateTable('live_breaker').set({ failures: 0n, updated_at: now }).where('name', '=', this.name).where('failures', '>', 0n).execute();
        return false;
      }
      await liveFulfilmentResumed(tx, now);
      return true;
    });
    if (closed) {
      this.options.logger.warn({ breaker: this.name, paused_seconds: current.openedAt === null ? null : Math.round((now - current.openedAt) / 1000) }, 'live fulfilment resumed');
    }
  }

  /** A transient failure; the threshold-th in a row opens the breaker (upstream down). */
  async recordTransient(message: string, now = Date.now()): Promise<void> {
    await this.ensureRow(now);
    const [row] = await this.db.updateTable('live_breaker').set({ failures: sql`failures + 1`, updated_at: now }).where('name', '=', this.name).returning('failures').execute();
    if (row && Number(row.failures) >= this.options.threshold) await this.open('upstream_down', message, now);
  }

  /** Half-open: true for the one caller allowed to probe now (the cool-down is over and no probe runs). */
  async claimProbe(now = Date.now(), ttlMs = 30_000): Promise<boolean> {
    const claimed = await this.db
      .updateTable('live_breaker')
      .set({ probe_until: now + ttlMs, updated_at: now })
      .where('name', '=', this.name)
      .where('state', '=', 'open')
      .where('retry_at', '<=', BigInt(now))
      .where((w) => w.or([w('probe_until', 'is', null), w('probe_until', '<', BigInt(now))]))
      .executeTakeFirst();
    return claimed.numUpdatedRows === 1n;
  }

  /** The probe failed: stay open for another cool-down. */
  async probeFailed(reason: string, message: string, now = Date.now()): Promise<void> {
    await this.db
      .updateTable('live_breaker')
      .set({ reason, message, retry_at: now + this.options.cooldownMs, probe_until: null, updated_at: now })
      .where('name', '=', this.name)
      .where('state', '=', 'open')
      .execute();
    this.options.logger.error({ breaker: this.name, reason, upstream_message: message }, 'live fulfilment still paused: the probe failed');
  }

  private ensureRow(now: number): Promise<void> {
    return ensureBreakerRow(this.db, this.name, now);
  }
}

async function ensureBreakerRow(db: Kysely<Database>, name: string, now: number): Promise<void> {
  await db
    .insertInto('live_breaker')
    .values({ name, state: 'closed', updated_at: now })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
}

/**
 * Sets (a pause) or clears (null) the operator's pause of the live upstream in the caller's
 * transaction. `changed` is false when there was nothing to change (a second pause or resume is
 * neither audited nor announced twice); `previous` is the pause the call replaced or ended.
 */
export async function setOperatorPause(
  tx: Kysely<Database>,
  pause: OperatorPause | null,
  now = Date.now(),
  name = 'fragment',
): Promise<{ changed: boolean; previous: OperatorPause | null }> {
  await ensureBreakerRow(tx, name, now);
  const before = await tx.selectFrom('live_breaker').select(['paused_reason', 'paused_by', 'paused_at']).where('name', '=', name).executeTakeFirstOrThrow();
  const previous = before.paused_reason === null ? null : { reason: before.paused_reason, by: before.paused_by ?? 'unknown', at: Number(before.paused_at ?? 0) };
  // Conditional on the state read: of two concurrent pauses (or resumes) one changes it.
  const updated = await tx
    .updateTable('live_breaker')
    .set({ paused_reason: pause?.reason ?? null, paused_by: pause?.by ?? null, paused_at: pause?.at ?? null, updated_at: now })
    .where('name', '=', name)
    .where('paused_reason', pause ? 'is' : 'is not', null)
    .executeTakeFirst();
  return { changed: updated.numUpdatedRows === 1n, previous };
}
