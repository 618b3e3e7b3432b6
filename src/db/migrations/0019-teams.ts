import { type Kysely, sql } from 'kysely';
import { newId } from '../../domain/random.js';
import type { Engine } from '../engine.js';

/**
 * Teams and two-factor sign-in (docs/dashboard.md, "Team and roles" and "Two-factor sign-in").
 *
 * A person (people, by e-mail) signs in; memberships give a person a role on one or more
 * accounts. Every existing account gets a person for its own e-mail as its owner, carrying the
 * password of its former dashboard_users row (null when none was set yet), so single-user
 * accounts keep signing in exactly as before. Sessions now name their person; existing ones
 * are kept and given the account's owner. dashboard_users is dropped.
 *
 * Also: one-time team invites (token hashes only), hashed recovery codes, the TOTP secret and
 * last accepted time step per person, the time the session last gave the second factor, the
 * session's stage (a password alone only reaches the second-factor form), each account's
 * "require two-factor" switch, and the person a set-password link is for.
 */
export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema
    .createTable('people')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('password_hash', 'text')
    // Base32 TOTP secret; null until enrolled (totp_enabled_at set when the first code matched).
    .addColumn('totp_secret', 'text')
    .addColumn('totp_enabled_at', 'bigint')
    // The last time step accepted: a code works once.
    .addColumn('totp_last_step', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('memberships')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id'))
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'developer', 'viewer')`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('memberships_pk', ['account_id', 'person_id'])
    .execute();
  await db.schema.createIndex('memberships_person').on('memberships').column('person_id').execute();

  await db.schema
    .createTable('team_invites')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'developer', 'viewer')`))
    .addColumn('invited_by', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('team_invites_account').on('team_invites').columns(['account_id', 'created_at']).execute();

  await db.schema
    .createTable('recovery_codes')
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id'))
    .addColumn('code_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addPrimaryKeyConstraint('recovery_codes_pk', ['person_id', 'code_hash'])
    .execute();

  await db.schema.alterTable('accounts').addColumn('two_factor_required_at', 'bigint').execute();
  await db.schema.alterTable('dashboard_sessions').addColumn('person_id', 'text').execute();
  await db.schema.alterTable('dashboard_sessions').addColumn('second_factor_at', 'bigint').execute();
  // 'active', or 'second_factor' between a right password and the code.
  await db.schema
    .alterTable('dashboard_sessions')
    .addColumn('stage', 'text', (c) => c.notNull().defaultTo('active'))
    .execute();
  await db.schema.alterTable('password_tokens').addColumn('person_id', 'text').execute();

  const accounts = await db
    .selectFrom('accounts as a')
    .leftJoin('dashboard_users as u', 'u.account_id', 'a.id')
    .select(['a.id', 'a.email', 'a.created_at', 'u.password_hash', 'u.created_at as user_created_at', 'u.updated_at as user_updated_at'])
    .execute();
  for (const a of accounts) {
    const personId = newId('psn');
    await db
      .insertInto('people')
      .values({
        id: personId,
        email: a.email,
        password_hash: a.password_hash ?? null,
        created_at: a.user_created_at ?? a.created_at,
        updated_at: a.user_updated_at ?? a.created_at,
      })
      .execute();
    await db
      .insertInto('memberships')
      .values({ account_id: a.id, person_id: personId, role: 'owner', created_at: a.user_created_at ?? a.created_at })
      .execute();
    await db.updateTable('dashboard_sessions').set({ person_id: personId }).where('account_id', '=', a.id).execute();
    await db.updateTable('password_tokens').set({ person_id: personId }).where('account_id', '=', a.id).execute();
  }
  await db.schema.createIndex('dashboard_sessions_person').on('dashboard_sessions').column('person_id').execute();
  await db.schema.dropTable('dashboard_users').execute();
}
