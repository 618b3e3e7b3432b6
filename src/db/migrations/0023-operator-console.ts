import { type Kysely, sql } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * The operator console (docs/operations.md "Operator console"), with people of its own:
 *
 * - `operators`: who may sign in to the console, with a role (`admin`, `support`), an argon2id
 *   password (null until set through a one-time link) and TOTP two-factor, required from the
 *   first sign-in. Apart from `people`: a client's credentials never open the console.
 * - `operator_sessions`: the console's sessions, by SHA-256 of the cookie's id; `stage` is
 *   `enrol` (password given, two-factor not yet set up), `second_factor` (password given, code
 *   expected) or `active`.
 * - `operator_links`: one-time set-password links (`starport operator create`), by hash only.
 * - `audit_log.operator_id` and `audit_log.ip`: the console person and their address on every
 *   row the console writes (null for the CLI's and the dashboard's rows, as before).
 */
export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema
    .createTable('operators')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('admin', 'support')`))
    .addColumn('password_hash', 'text')
    .addColumn('totp_secret', 'text')
    .addColumn('totp_enabled_at', 'bigint')
    .addColumn('totp_last_step', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('operator_sessions')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('operator_id', 'text', (c) => c.notNull())
    .addColumn('stage', 'text', (c) => c.notNull().check(sql`stage in ('enrol', 'second_factor', 'active')`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('second_factor_at', 'bigint')
    .execute();
  await db.schema.createIndex('operator_sessions_operator').on('operator_sessions').column('operator_id').execute();
  await db.schema.createIndex('operator_sessions_expires').on('operator_sessions').column('expires_at').execute();

  await db.schema
    .createTable('operator_links')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('operator_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('voided_at', 'bigint')
    .execute();
  await db.schema.createIndex('operator_links_operator').on('operator_links').column('operator_id').execute();

  await db.schema.alterTable('audit_log').addColumn('operator_id', 'text').execute();
  await db.schema.alterTable('audit_log').addColumn('ip', 'text').execute();
  await db.schema.createIndex('audit_log_operator').on('audit_log').columns(['operator_id', 'created_at']).execute();
}
