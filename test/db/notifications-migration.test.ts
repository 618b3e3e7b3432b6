import type { Kysely } from 'kysely';
import { expect, test } from 'vitest';
import type { Engine } from '../../src/db/engine.js';
import type { Database } from '../../src/db/schema.js';
import { migrateToLatest, migrateUpTo } from '../../src/db/migrate.js';
import { notifyAccount } from '../../src/notifications/outbox.js';
import { notificationSwitches } from '../../src/notifications/settings.js';
import { useUnmigratedDatabase } from '../support/database.js';

/**
 * Migration 0021-notifications on a database with a team: existing people keep every client
 * notification on (no settings rows), nothing is queued by the migration, and an account notice
 * afterwards reaches each member by e-mail.
 */

let db: Kysely<any>;
let engine: Engine;
useUnmigratedDatabase((opened) => ({ db, engine } = opened));

test('existing members get the defaults, and notices reach them afterwards', async () => {
  await migrateUpTo(db, engine, '0020-invite-revocation');
  await db.insertInto('accounts').values({ id: 'acct_a', email: 'a@example.com', status: 'active', created_at: 1 }).execute();
  await db
    .insertInto('people')
    .values([
      { id: 'psn_a', email: 'a@example.com', password_hash: null, created_at: 1, updated_at: 1 },
      { id: 'psn_b', email: 'b@example.com', password_hash: null, created_at: 1, updated_at: 1 },
    ])
    .execute();
  await db
    .insertInto('memberships')
    .values([
      { account_id: 'acct_a', person_id: 'psn_a', role: 'owner', created_at: 1 },
      { account_id: 'acct_a', person_id: 'psn_b', role: 'viewer', created_at: 2 },
    ])
    .execute();
  await migrateToLatest(db, engine);

  expect(await db.selectFrom('notifications').selectAll().execute()).toEqual([]);
  const switches = await notificationSwitches(db as Kysely<Database>, 'psn_b', 'acct_a');
  expect(Object.values(switches).every((s) => s.email && s.telegram)).toBe(true);

  const written = await db
    .transaction()
    .execute((tx) => notifyAccount(tx as unknown as Kysely<Database>, 'acct_a', { subject: 'Deposit credited', parts: ['1 TON'] }, { topic: 'deposit_credited', now: 5 }));
  expect(written).toBe(2);
  const rows = await db.selectFrom('notifications').select(['channel', 'recipient', 'status']).orderBy('recipient').execute();
  expect(rows).toEqual([
    { channel: 'email', recipient: 'a@example.com', status: 'pending' },
    { channel: 'email', recipient: 'b@example.com', status: 'pending' },
  ]);
});
