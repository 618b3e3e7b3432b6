import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { CHANNELS, CLIENT_TOPICS, type Channel, type ClientTopic } from './outbox.js';

/**
 * A person's switches for one account (docs/dashboard.md "Notifications"): each client topic on
 * each channel, on unless switched off. Security notices have no switch.
 */
export type NotificationSwitches = Record<ClientTopic, Record<Channel, boolean>>;

export async function notificationSwitches(db: Kysely<Database>, personId: string, accountId: string): Promise<NotificationSwitches> {
  const rows = await db.selectFrom('notification_settings').select(['topic', 'channel', 'enabled']).where('person_id', '=', personId).where('account_id', '=', accountId).execute();
  const switches = Object.fromEntries(CLIENT_TOPICS.map((topic) => [topic, Object.fromEntries(CHANNELS.map((channel) => [channel, true]))])) as NotificationSwitches;
  for (const row of rows) {
    const topic = switches[row.topic as ClientTopic];
    if (topic && (CHANNELS as readonly string[]).includes(row.channel)) topic[row.channel as Channel] = row.enabled !== 0n;
  }
  return switches;
}

export function isClientTopic(value: unknown): value is ClientTopic {
  return typeof value === 'string' && (CLIENT_TOPICS as readonly string[]).includes(value);
}

/** Sets every switch of a person for one account at once (the page's form). */
export async function setNotificationSwitches(db: Kysely<Database>, personId: string, accountId: string, switches: NotificationSwitches): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('notification_settings').where('person_id', '=', personId).where('account_id', '=', accountId).execute();
    const off = CLIENT_TOPICS.flatMap((topic) => CHANNELS.filter((channel) => !switches[topic][channel]).map((channel) => ({ topic, channel })));
    if (off.length === 0) return;
    await tx
      .insertInto('notification_settings')
      .values(off.map(({ topic, channel }) => ({ person_id: personId, account_id: accountId, topic, channel, enabled: 0 })))
      .execute();
  });
}
