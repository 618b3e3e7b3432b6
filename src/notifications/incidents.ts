import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Message } from './message.js';
import { notifyOperator } from './outbox.js';

/**
 * Operator incidents (docs/operations.md "Notifications"): live fulfilment paused, the paying
 * wallet short, the deposit watcher stalled … One row per incident key. Opening and resolving
 * are conditional writes in the caller's transaction, so however many nodes see the same fault
 * at once, one of them wins and queues the one alert (and later the one "resolved"). While an
 * incident lasts, a worker queues a reminder every NOTIFY_REMINDER_SECONDS (remindIncidents: a
 * conditional update of `reminded_at`, again won by one node).
 */

export interface IncidentAlert {
  /** The incident's name in reminders and the resolved message ("Live fulfilment paused"). */
  title: string;
  /** The first alert; its parts (the reason, the upstream's message) are repeated in reminders. */
  message: Message;
}

/** Opens the incident unless it is open already; true (and the alert queued) when this call opened it. */
export async function openIncident(tx: Kysely<Database>, key: string, alert: IncidentAlert, now = Date.now()): Promise<boolean> {
  const detail = JSON.stringify(alert.message.parts.filter((p) => typeof p === 'string'));
  const inserted = await tx
    .insertInto('notification_incidents')
    .values({ key, state: 'open', title: alert.title, detail, opened_at: now, reminded_at: now, resolved_at: null })
    .onConflict((oc) => oc.column('key').doNothing())
    .executeTakeFirst();
  let opened = inserted.numInsertedOrUpdatedRows === 1n;
  if (!opened) {
    const reopened = await tx
      .updateTable('notification_incidents')
      .set({ state: 'open', title: alert.title, detail, opened_at: now, reminded_at: now, resolved_at: null })
      .where('key', '=', key)
      .where('state', '=', 'resolved')
      .executeTakeFirst();
    opened = reopened.numUpdatedRows === 1n;
  }
  if (opened) await notifyOperator(tx, alert.message, `incident:${key}`, now);
  return opened;
}

/** Ends the incident if it is open; true (and the "resolved" message queued) when this call ended it. */
export async function resolveIncident(tx: Kysely<Database>, key: string, closing: (lastedMs: number, title: string) => Message, now = Date.now()): Promise<boolean> {
  const [row] = await tx
    .updateTable('notification_incidents')
    .set({ state: 'resolved', resolved_at: now })
    .where('key', '=', key)
    .where('state', '=', 'open')
    .returning(['opened_at', 'title'])
    .execute();
  if (!row) return false;
  await notifyOperator(tx, closing(now - Number(row.opened_at), row.title), `incident:${key}`, now);
  return true;
}

/** Whether the incident is open (the periodic checks resolve only what is open). */
export async function incidentOpen(db: Kysely<Database>, key: string): Promise<boolean> {
  const row = await db.selectFrom('notification_incidents').select('state').where('key', '=', key).executeTakeFirst();
  return row?.state === 'open';
}

/** Queues a reminder for each incident open and not reminded of for `everyMs`; returns how many. */
export async function remindIncidents(db: Kysely<Database>, everyMs: number, now = Date.now()): Promise<number> {
  return db.transaction().execute(async (tx) => {
    const due = await tx
      .updateTable('notification_incidents')
      .set({ reminded_at: now })
      .where('state', '=', 'open')
      .where('reminded_at', '<=', BigInt(now - everyMs))
      .returning(['key', 'title', 'detail', 'opened_at'])
      .execute();
    for (const incident of due) {
      const detail = incident.detail ? (JSON.parse(incident.detail) as string[]) : [];
      await notifyOperator(
        tx,
        { subject: `Still ongoing: ${incident.title}`, parts: [`${incident.title}, for ${formatDuration(now - Number(incident.opened_at))} now.`, ...detail] },
        `incident:${incident.key}`,
        now,
      );
    }
    return due.length;
  });
}

export interface IncidentView {
  key: string;
  title: string;
  openedAt: number;
}

export async function openIncidents(db: Kysely<Database>): Promise<IncidentView[]> {
  const rows = await db.selectFrom('notification_incidents').select(['key', 'title', 'opened_at']).where('state', '=', 'open').orderBy('opened_at').execute();
  return rows.map((r) => ({ key: r.key, title: r.title, openedAt: Number(r.opened_at) }));
}

/** "3 minutes", "2 hours 5 minutes", "12 s". */
export function formatDuration(ms: number): string {
  const unit = (n: number, name: string) => `${n} ${name}${n === 1 ? '' : 's'}`;
  if (ms >= 86_400_000) return unit(Math.floor(ms / 86_400_000), 'day') + (ms % 86_400_000 >= 3_600_000 ? ` ${unit(Math.floor((ms % 86_400_000) / 3_600_000), 'hour')}` : '');
  if (ms >= 3_600_000) return unit(Math.floor(ms / 3_600_000), 'hour') + (ms % 3_600_000 >= 60_000 ? ` ${unit(Math.floor((ms % 3_600_000) / 60_000), 'minute')}` : '');
  if (ms >= 60_000) return unit(Math.floor(ms / 60_000), 'minute');
  return `${Math.max(0, Math.round(ms / 1000))} s`;
}
