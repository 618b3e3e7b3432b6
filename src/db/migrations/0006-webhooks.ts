import { type Kysely, sql } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * Webhooks: endpoints per account and mode, the outbox of messages (one row per event and
 * matching endpoint, written in the transaction of the order change), and the log of every
 * delivery attempt. Portable DDL: the same statements on SQLite and PostgreSQL.
 */
export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('live', 'test')`))
    .addColumn('url', 'text', (c) => c.notNull())
    // JSON array of event types, or ["*"].
    .addColumn('events', 'text', (c) => c.notNull())
    // whsec_… The sender needs the secret itself to sign, so it cannot be stored as a hash.
    .addColumn('secret', 'text', (c) => c.notNull())
    // The secret before the last rotation, still signed with until previous_secret_until.
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', 'bigint')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('enabled', 'disabled')`))
    .addColumn('disabled_reason', 'text')
    .addColumn('disabled_at', 'bigint')
    // Start of the current run of failed attempts; null after any success.
    .addColumn('failing_since', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_endpoints_account').on('webhook_endpoints').columns(['account_id', 'mode', 'status']).execute();

  await db.schema
    .createTable('webhook_messages')
    // msg_…: the webhook-id header, the same on every attempt and on redelivery.
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id'))
    .addColumn('account_id', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    // The body without the order's status_url (added at send time from the public origin).
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'succeeded', 'failed')`))
    .addColumn('attempts', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('last_attempt_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_messages_due').on('webhook_messages').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_messages_endpoint').on('webhook_messages').columns(['endpoint_id', 'created_at']).execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('message_id', 'text', (c) => c.notNull().references('webhook_messages.id'))
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'bigint', (c) => c.notNull())
    .addColumn('started_at', 'bigint', (c) => c.notNull())
    .addColumn('duration_ms', 'bigint', (c) => c.notNull())
    // null when no HTTP answer came (refused, timeout, blocked address).
    .addColumn('status_code', 'bigint')
    .addColumn('outcome', 'text', (c) => c.notNull().check(sql`outcome in ('succeeded', 'failed')`))
    .addColumn('error', 'text')
    .addColumn('response_snippet', 'text')
    .execute();
  await db.schema.createIndex('webhook_attempts_message').on('webhook_attempts').columns(['message_id', 'attempt']).execute();
  await db.schema.createIndex('webhook_attempts_endpoint').on('webhook_attempts').columns(['endpoint_id', 'started_at']).execute();
}
