import { type Kysely, sql } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * The client dashboard: people who log in (one per account), their server-side sessions, the
 * one-time set-password links the operator hands out, failed-login records for throttling, each
 * account's deposit memo, and the dashboard's own server secret (CSRF token HMAC key).
 * Secrets (session ids, link tokens) are stored only as SHA-256 hashes.
 */
export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema
    .createTable('dashboard_users')
    .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id'))
    // null until the holder of an operator-created account sets a password through a link.
    .addColumn('password_hash', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('dashboard_sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    // Absolute end of the session; the idle limit is checked against last_seen_at.
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('dashboard_sessions_account').on('dashboard_sessions').column('account_id').execute();
  await db.schema.createIndex('dashboard_sessions_expires').on('dashboard_sessions').column('expires_at').execute();

  await db.schema
    .createTable('password_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('password_tokens_account').on('password_tokens').column('account_id').execute();

  await db.schema
    .createTable('auth_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('login_failed', 'signup')`))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('auth_attempts_email').on('auth_attempts').columns(['kind', 'email', 'created_at']).execute();
  await db.schema.createIndex('auth_attempts_ip').on('auth_attempts').columns(['kind', 'ip', 'created_at']).execute();
  await db.schema.createIndex('auth_attempts_created').on('auth_attempts').column('created_at').execute();

  await db.schema
    .createTable('deposit_memos')
    .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('memo', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('dashboard_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  // The dashboard's order search looks orders up by the client's own number.
  await db.schema.createIndex('orders_account_external_id').on('orders').columns(['account_id', 'mode', 'external_id']).execute();
}
