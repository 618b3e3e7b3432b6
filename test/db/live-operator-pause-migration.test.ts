import type { Kysely } from 'kysely';
import { expect, test } from 'vitest';
import type { Engine } from '../../src/db/engine.js';
import { migrateToLatest, migrateUpTo } from '../../src/db/migrate.js';
import { useUnmigratedDatabase } from '../support/database.js';

/**
 * Migration 0025-live-operator-pause on a database whose breaker is open: the upstream's state is
 * kept as it was, no operator pause appears, and one can be set and cleared beside it; the
 * index for the wallet's recent payments exists.
 */
let db: Kysely<any>;
let engine: Engine;
useUnmigratedDatabase((opened) => ({ db, engine } = opened));

test('an open breaker stays open and unpaused by the operator; a pause is stored beside it', async () => {
  await migrateUpTo(db, engine, '0024-price-plans');
  await db
    .insertInto('live_breaker')
    .values({ name: 'fragment', state: 'open', reason: 'kyc_required', message: 'verify', failures: 0, opened_at: 5, retry_at: 65, updated_at: 5 })
    .execute();

  await migrateToLatest(db, engine);

  const row = await db.selectFrom('live_breaker').selectAll().where('name', '=', 'fragment').executeTakeFirstOrThrow();
  expect({ state: row.state, reason: row.reason, retry_at: Number(row.retry_at) }).toEqual({ state: 'open', reason: 'kyc_required', retry_at: 65 });
  expect([row.paused_reason, row.paused_by, row.paused_at]).toEqual([null, null, null]);

  await db.updateTable('live_breaker').set({ paused_reason: 'wallet rotation', paused_by: 'ops@example.com', paused_at: 7 }).where('name', '=', 'fragment').execute();
  const paused = await db.selectFrom('live_breaker').select(['state', 'paused_reason', 'paused_by', 'paused_at']).executeTakeFirstOrThrow();
  expect({ ...paused, paused_at: Number(paused.paused_at) }).toEqual({ state: 'open', paused_reason: 'wallet rotation', paused_by: 'ops@example.com', paused_at: 7 });

  const indexes =
    engine.name === 'postgres'
      ? (
          await db
            .selectFrom('pg_indexes' as any)
            .select('indexname as name')
            .where('tablename', '=', 'wallet_messages')
            .execute()
        ).map((r: any) => r.name)
      : (
          await db
            .selectFrom('sqlite_master' as any)
            .select('name')
            .where('type', '=', 'index')
            .where('tbl_name', '=', 'wallet_messages')
            .execute()
        ).map((r: any) => r.name);
  expect(indexes).toContain('wallet_messages_created');
});
