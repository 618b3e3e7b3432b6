import { type Kysely, sql } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * Self-service sign-in (docs/dashboard.md "Verified e-mail, password reset and invites by
 * e-mail"):
 *
 * - `people.email_unverified_since`: set when a person's address still waits for its
 *   verification link (sign-up); null once verified, and for every person who existed before
 *   (the operator created them, or an owner invited them).
 * - `accounts.unverified_since`: the account waits for one of its owners to verify an address;
 *   with SIGNUP_VERIFY=required its live key answers 403 email_unverified until then. Existing
 *   accounts are not waiting.
 * - `email_tokens`: one-time links sent by e-mail (password reset, address verification,
 *   change of address), by SHA-256 of the token only. `person_id` is null for a reset asked for
 *   an address nobody has: that row can never be used (it costs the request the same work).
 *   `voided_at`: replaced by a newer link before use.
 * - `session_ends`: sessions ended because their membership did (the member was removed), by
 *   the session's hash, kept a week: the browser holding such a cookie is told why.
 * - `mail_requests`: the throttle of requests that send such a link, per address and per IP
 *   (each counted before it is acted on).
 */
export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema.alterTable('people').addColumn('email_unverified_since', 'bigint').execute();
  await db.schema.alterTable('accounts').addColumn('unverified_since', 'bigint').execute();

  await db.schema
    .createTable('email_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('purpose', 'text', (c) => c.notNull().check(sql`purpose in ('password_reset', 'verify_email', 'change_email')`))
    .addColumn('person_id', 'text')
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('voided_at', 'bigint')
    .execute();
  await db.schema.createIndex('email_tokens_email').on('email_tokens').columns(['purpose', 'email']).execute();
  await db.schema.createIndex('email_tokens_person').on('email_tokens').columns(['person_id', 'purpose']).execute();
  await db.schema.createIndex('email_tokens_expires').on('email_tokens').column('expires_at').execute();

  await db.schema
    .createTable('session_ends')
    .addColumn('id_hash', 'text', (c) => c.primaryKey())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('ended_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('session_ends_ended').on('session_ends').column('ended_at').execute();

  await db.schema
    .createTable('mail_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('ip', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('mail_requests_email').on('mail_requests').columns(['kind', 'email', 'created_at']).execute();
  await db.schema.createIndex('mail_requests_ip').on('mail_requests').columns(['kind', 'ip', 'created_at']).execute();
  await db.schema.createIndex('mail_requests_created').on('mail_requests').column('created_at').execute();
}
