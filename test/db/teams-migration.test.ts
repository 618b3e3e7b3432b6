import type { Kysely } from 'kysely';
import { expect, test } from 'vitest';
import type { Engine } from '../../src/db/engine.js';
import { migrateToLatest, migrateUpTo } from '../../src/db/migrate.js';
import { useUnmigratedDatabase } from '../support/database.js';

/**
 * Migration 0019-teams on a database written before it: every account's e-mail becomes a person
 * who owns it, with the password it had (or none), its live sessions and unused set-password
 * links now name that person, and dashboard_users is gone.
 */
let db: Kysely<any>;
let engine: Engine;
useUnmigratedDatabase((opened) => ({ db, engine } = opened));

test('single-user accounts become owner memberships; sessions and links keep working', async () => {
  await migrateUpTo(db, engine, '0015-order-chart-amounts');
  await db
    .insertInto('accounts')
    .values([
      { id: 'acct_a', email: 'a@example.com', status: 'active', created_at: 1 },
      { id: 'acct_b', email: 'b@example.com', status: 'active', created_at: 2 },
      { id: 'acct_c', email: 'c@example.com', status: 'disabled', created_at: 3 },
    ])
    .execute();
  await db
    .insertInto('dashboard_users')
    .values([
      { account_id: 'acct_a', password_hash: '$argon2id$a', created_at: 10, updated_at: 11 },
      { account_id: 'acct_b', password_hash: null, created_at: 20, updated_at: 20 },
    ])
    .execute();
  await db.insertInto('dashboard_sessions').values({ id_hash: 'h1', account_id: 'acct_a', created_at: 5, last_seen_at: 6, expires_at: 7 }).execute();
  await db.insertInto('password_tokens').values({ token_hash: 't1', account_id: 'acct_b', created_at: 5, expires_at: 9, used_at: null }).execute();

  await migrateToLatest(db, engine);

  const people = await db.selectFrom('people').select(['id', 'email', 'password_hash', 'totp_secret', 'created_at']).orderBy('email').execute();
  expect(people.map((p) => [p.email, p.password_hash, p.totp_secret, Number(p.created_at)])).toEqual([
    ['a@example.com', '$argon2id$a', null, 10],
    ['b@example.com', null, null, 20],
    ['c@example.com', null, null, 3],
  ]);
  const idOf = new Map(people.map((p) => [p.email as string, p.id as string]));
  const memberships = await db.selectFrom('memberships').select(['account_id', 'person_id', 'role']).orderBy('account_id').execute();
  expect(memberships).toEqual([
    { account_id: 'acct_a', person_id: idOf.get('a@example.com'), role: 'owner' },
    { account_id: 'acct_b', person_id: idOf.get('b@example.com'), role: 'owner' },
    { account_id: 'acct_c', person_id: idOf.get('c@example.com'), role: 'owner' },
  ]);
  const session = await db.selectFrom('dashboard_sessions').select(['person_id', 'stage', 'second_factor_at']).executeTakeFirstOrThrow();
  expect(session).toEqual({ person_id: idOf.get('a@example.com'), stage: 'active', second_factor_at: null });
  const link = await db.selectFrom('password_tokens').select('person_id').executeTakeFirstOrThrow();
  expect(link.person_id).toBe(idOf.get('b@example.com'));
  const account = await db.selectFrom('accounts').select('two_factor_required_at').where('id', '=', 'acct_a').executeTakeFirstOrThrow();
  expect(account.two_factor_required_at).toBeNull();
  await expect(db.selectFrom('dashboard_users').selectAll().execute()).rejects.toThrow();
  // Roles are checked by the database too.
  await expect(
    db
      .insertInto('memberships')
      .values({ account_id: 'acct_b', person_id: idOf.get('a@example.com'), role: 'admin', created_at: 1 })
      .execute(),
  ).rejects.toThrow();
});
