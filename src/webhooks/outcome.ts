/**
 * What one webhook delivery attempt leaves behind: the message's next attempt (the retry
 * schedule) or its end, the attempt's log row, the endpoint's failure streak, and disabling an
 * endpoint that answers 410 or keeps failing (docs/api.md "Webhooks").
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import { newId } from '../domain/random.js';
import type { Database } from '../db/schema.js';
import { webhookDisabled } from '../notifications/notices.js';
import type { MessageRow } from './outbox.js';
import { retryDelay } from './schedule.js';
import type { SendResult } from './sender.js';

export interface OutcomeSettings {
  /** The dispatcher whose claim (lease) the attempt was made under. */
  leaseOwner: string;
  /** When the attempt ended. */
  now: number;
  retryDelaysMs: readonly number[];
  disableAfterMs: number;
  /** The jitter source of the retry schedule. */
  random: () => number;
}

/**
 * Records the attempt in one transaction: the message is due again after the schedule's next
 * delay, or finished (succeeded, or failed for good); the attempt is logged.
 */
export async function recordAttempt(db: Kysely<Database>, message: MessageRow, startedAt: number, result: SendResult, settings: OutcomeSettings): Promise<void> {
  const attempt = Number(message.attempts);
  const { now } = settings;
  const delay = result.ok ? undefined : retryDelay(settings.retryDelaysMs, attempt, settings.random, result.retryAfterMs);
  await db.transaction().execute(async (tx) => {
    const status = result.ok ? 'succeeded' : delay === undefined ? 'failed' : 'pending';
    const updated = await tx
      .updateTable('webhook_messages')
      .set({ status, next_attempt_at: status === 'pending' ? now + (delay as number) : null, lease_owner: null, lease_until: null })
      .where('id', '=', message.id)
      .where('lease_owner', '=', settings.leaseOwner)
      .executeTakeFirst();
    if (updated.numUpdatedRows === 0n) {
      // Deleted with its endpoint while the request ran: nothing to record. (A lost lease, which
      // the lease length rules out, would still get its attempt logged.)
      const exists = await tx.selectFrom('webhook_messages').select('id').where('id', '=', message.id).executeTakeFirst();
      if (!exists) return;
    }
    await tx
      .insertInto('webhook_attempts')
      .values({
        id: newId('wha'),
        message_id: message.id,
        endpoint_id: message.endpoint_id,
        attempt,
        started_at: startedAt,
        duration_ms: result.durationMs,
        status_code: result.statusCode,
        outcome: result.ok ? 'succeeded' : 'failed',
        error: result.error,
        response_snippet: result.snippet,
      })
      .execute();
    if (updated.numUpdatedRows === 0n) return;
    if (result.ok) {
      await tx.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', '=', message.endpoint_id).execute();
      return;
    }
    await tx
      .updateTable('webhook_endpoints')
      .set({ failing_since: sql`coalesce(failing_since, ${startedAt})` })
      .where('id', '=', message.endpoint_id)
      .execute();
    if (result.statusCode === 410) {
      await disable(tx, message.endpoint_id, 'The endpoint answered 410 Gone.', now);
    } else if (status === 'failed') {
      await disableIfFailingThroughout(tx, message, result, now, settings.disableAfterMs);
    }
  });
}

/**
 * A message has used its whole retry schedule: its endpoint is disabled when either no
 * delivery to the endpoint has succeeded since the message's first attempt (the endpoint
 * failed for the whole schedule: about 3 days with the default one, whatever the jitter), or
 * the endpoint has been failing for at least `disableAfterMs`. One dead message alone never
 * disables an endpoint that succeeds for other messages meanwhile.
 */
async function disableIfFailingThroughout(tx: Transaction<Database>, message: MessageRow, result: SendResult, now: number, disableAfterMs: number): Promise<void> {
  // The message's first logged attempt (the current one is logged already). The failure streak
  // covers the whole schedule when it began before that attempt had finished: a success
  // recorded after it would have cleared failing_since.
  const first = await tx
    .selectFrom('webhook_attempts')
    .select(['started_at', 'duration_ms'])
    .where('message_id', '=', message.id)
    .orderBy('attempt')
    .limit(1)
    .executeTakeFirstOrThrow();
  const firstEnded = Number(first.started_at) + Number(first.duration_ms);
  const row = await tx.selectFrom('webhook_endpoints').select('failing_since').where('id', '=', message.endpoint_id).executeTakeFirst();
  if (row?.failing_since === null || row?.failing_since === undefined) return;
  const failingSince = Number(row.failing_since);
  const wholeSchedule = failingSince <= firstEnded;
  if (!wholeSchedule && failingSince > now - disableAfterMs) return;
  const attempts = Number(message.attempts);
  const reason = `Every delivery failed for ${formatDuration(now - failingSince)}, ${wholeSchedule ? `through all ${attempts} attempts of a message` : `and a message used all ${attempts} attempts`}; the last error: ${result.error ?? 'unknown'}.`;
  // The condition again in the update: a success recorded meanwhile (another worker) clears
  // failing_since, and then nothing is disabled.
  await disable(tx, message.endpoint_id, reason, now, Math.max(firstEnded, now - disableAfterMs));
}

async function disable(
  tx: Transaction<Database>,
  endpointId: string,
  reason: string,
  now: number,
  /** Only if the endpoint's failure streak began no later than this. */
  failingSinceAtMost?: number,
): Promise<void> {
  let update = tx
    .updateTable('webhook_endpoints')
    .set({ status: 'disabled', disabled_reason: reason, disabled_at: now, updated_at: now })
    .where('id', '=', endpointId)
    .where('status', '=', 'enabled');
  if (failingSinceAtMost !== undefined) update = update.where('failing_since', '<=', BigInt(failingSinceAtMost));
  const [disabled] = await update.returning(['account_id', 'url']).execute();
  if (disabled) await webhookDisabled(tx, { accountId: disabled.account_id, url: disabled.url }, reason, now);
}

function formatDuration(ms: number): string {
  const unit = (n: number, name: string) => `${n} ${name}${n === 1 ? '' : 's'}`;
  if (ms >= 86_400_000) {
    const days = Math.floor(ms / 86_400_000);
    const hours = Math.floor((ms % 86_400_000) / 3_600_000);
    return hours ? `${unit(days, 'day')} ${unit(hours, 'hour')}` : unit(days, 'day');
  }
  if (ms >= 3_600_000) return unit(Math.floor(ms / 3_600_000), 'hour');
  if (ms >= 60_000) return unit(Math.floor(ms / 60_000), 'minute');
  return `${Math.floor(ms / 1000)} s`;
}
