import { type Kysely, sql } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * Notifications (docs/operations.md "Notifications"): e-mail and Telegram, written in the
 * transaction of the event that causes them and sent by the worker role.
 *
 * - `notifications`: the outbox, one row per message and recipient. An `operator` row names no
 *   recipient: a worker fans it out to OPERATOR_EMAILS and the operator's chat (its own config).
 *   `secrets` holds the values in the bodies that must never be shown by `mail list` or logged
 *   (a one-time link); `kept` is an e-mail stored for `mail show` because no SMTP server is set.
 * - `telegram_chats`: the chat linked by a person (`owner` = the person's id) or by the operator
 *   (`owner` = 'operator'); `blocked_at` when the bot was blocked there (a 403).
 * - `telegram_link_tokens`: one-time deep-link tokens (hashes only).
 * - `notification_settings`: a person's switches per account, topic and channel (a row only
 *   where the person changed the default: on).
 * - `notification_incidents`: one row per operator incident (the breaker, the paying wallet, the
 *   deposit watcher …): the conditional updates on it make one alert per incident across nodes.
 * - `notification_state`: small named values (the Telegram update offset) with a lease.
 * - `sign_in_addresses`: the addresses each person signed in from (the "new sign-in" notice).
 */
export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema
    .createTable('notifications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('channel', 'text', (c) => c.notNull().check(sql`channel in ('email', 'telegram', 'operator')`))
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('person_id', 'text')
    .addColumn('account_id', 'text')
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('body_text', 'text', (c) => c.notNull())
    .addColumn('body_html', 'text')
    .addColumn('secrets', 'text')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'sent', 'kept', 'failed')`))
    .addColumn('attempts', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('sent_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('notifications_due').on('notifications').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('notifications_channel').on('notifications').columns(['channel', 'created_at']).execute();

  await db.schema
    .createTable('telegram_chats')
    .addColumn('owner', 'text', (c) => c.primaryKey())
    .addColumn('chat_id', 'text', (c) => c.notNull())
    .addColumn('title', 'text')
    .addColumn('linked_at', 'bigint', (c) => c.notNull())
    .addColumn('blocked_at', 'bigint')
    .execute();

  await db.schema
    .createTable('telegram_link_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();

  await db.schema
    .createTable('notification_settings')
    .addColumn('person_id', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('topic', 'text', (c) => c.notNull())
    .addColumn('channel', 'text', (c) => c.notNull())
    .addColumn('enabled', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('notification_settings_pk', ['person_id', 'account_id', 'topic', 'channel'])
    .execute();

  await db.schema
    .createTable('notification_incidents')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('open', 'resolved')`))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('detail', 'text')
    .addColumn('opened_at', 'bigint', (c) => c.notNull())
    .addColumn('reminded_at', 'bigint', (c) => c.notNull())
    .addColumn('resolved_at', 'bigint')
    .execute();

  await db.schema
    .createTable('notification_state')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .execute();

  await db.schema
    .createTable('sign_in_addresses')
    .addColumn('person_id', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('first_seen_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('sign_in_addresses_pk', ['person_id', 'address'])
    .execute();
}
