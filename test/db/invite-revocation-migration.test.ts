import type { Kysely } from 'kysely';
import { expect, test } from 'vitest';
import type { Engine } from '../../src/db/engine.js';
import { migrateToLatest, migrateUpTo } from '../../src/db/migrate.js';
import { useUnmigratedDatabase } from '../support/database.js';

/**
 * Migration 0020-invite-revocation on a database with invites: pending invites whose inviter is
 * still an owner stay pending; those of an inviter since demoted or removed are voided with the
 * reason their link will show; used invites are left as they were.
 */
let db: Kysely<any>;
let engine: Engine;
useUnmigratedDatabase((opened) => ({ db, engine } = opened));

test('pending invites of inviters who are no longer owners are voided; the rest are kept', async () => {
  await migrateUpTo(db, engine, '0019-teams');
  await db.insertInto('accounts').values({ id: 'acct_a', email: 'a@example.com', status: 'active', created_at: 1 }).execute();
  await db
    .insertInto('people')
    .values(['owner', 'demoted', 'removed'].map((name) => ({ id: `psn_${name}`, email: `${name}@example.com`, password_hash: null, created_at: 1, updated_at: 1 })))
    .execute();
  await db
    .insertInto('memberships')
    .values([
      { account_id: 'acct_a', person_id: 'psn_owner', role: 'owner', created_at: 1 },
      { account_id: 'acct_a', person_id: 'psn_demoted', role: 'developer', created_at: 1 },
    ])
    .execute();
  const invite = (token: string, by: string, usedAt: number | null) => ({
    token_hash: token,
    account_id: 'acct_a',
    email: `${token}@example.com`,
    role: 'owner',
    invited_by: by,
    created_at: 1,
    expires_at: 9_999_999_999_999,
    used_at: usedAt,
  });
  await db
    .insertInto('team_invites')
    .values([invite('by_owner', 'psn_owner', null), invite('by_demoted', 'psn_demoted', null), invite('by_removed', 'psn_removed', null), invite('used', 'psn_removed', 5)])
    .execute();

  await migrateToLatest(db, engine);

  const rows = await db.selectFrom('team_invites').select(['token_hash', 'used_at', 'revoked_at', 'revoked_reason']).orderBy('token_hash').execute();
  expect(rows.map((r) => [r.token_hash, r.used_at === null ? null : Number(r.used_at), r.revoked_at === null ? 'not revoked' : 'revoked', r.revoked_reason])).toEqual([
    ['by_demoted', null, 'revoked', 'The person who sent it is no longer an owner of the account.'],
    ['by_owner', null, 'not revoked', null],
    ['by_removed', null, 'revoked', 'The person who sent it is no longer an owner of the account.'],
    ['used', 5, 'not revoked', null],
  ]);
});
