import type { Kysely } from 'kysely';
import { expect, test } from 'vitest';
import type { Engine } from '../../src/db/engine.js';
import { migrateToLatest, migrateUpTo } from '../../src/db/migrate.js';
import { useUnmigratedDatabase } from '../support/database.js';

/**
 * Migration 0022-self-service on a database with people and accounts: nobody who existed is
 * left waiting for a verification link (they were created by the operator or joined by an
 * invite), so no live key starts answering 403 email_unverified; the link, session-end and
 * throttle tables take rows, and a link's purpose is checked by the database.
 */
let db: Kysely<any>;
let engine: Engine;
useUnmigratedDatabase((opened) => ({ db, engine } = opened));

test('existing people and accounts are not waiting; the new tables work', async () => {
  await migrateUpTo(db, engine, '0021-notifications');
  await db.insertInto('accounts').values({ id: 'acct_a', email: 'a@example.com', status: 'active', created_at: 1 }).execute();
  await db.insertInto('people').values({ id: 'psn_a', email: 'a@example.com', password_hash: 'x', created_at: 1, updated_at: 1 }).execute();
  await db.insertInto('memberships').values({ account_id: 'acct_a', person_id: 'psn_a', role: 'owner', created_at: 1 }).execute();

  await migrateToLatest(db, engine);

  expect((await db.selectFrom('people').select('email_unverified_since').executeTakeFirstOrThrow()).email_unverified_since).toBeNull();
  expect((await db.selectFrom('accounts').select('unverified_since').executeTakeFirstOrThrow()).unverified_since).toBeNull();
  const token = { purpose: 'password_reset', person_id: null, email: 'nobody@example.com', created_at: 1, expires_at: 2, used_at: null, voided_at: null };
  await db
    .insertInto('email_tokens')
    .values({ token_hash: 'h1', ...token })
    .execute();
  await expect(
    db
      .insertInto('email_tokens')
      .values({ token_hash: 'h2', ...token, purpose: 'anything' })
      .execute(),
  ).rejects.toThrow();
  await db.insertInto('session_ends').values({ id_hash: 's1', reason: 'removed', ended_at: 1 }).execute();
  await db.insertInto('mail_requests').values({ id: 'm1', kind: 'password_reset', email: 'a@example.com', ip: '127.0.0.1', created_at: 1 }).execute();
  expect(await db.selectFrom('email_tokens').select('token_hash').execute()).toEqual([{ token_hash: 'h1' }]);
});
