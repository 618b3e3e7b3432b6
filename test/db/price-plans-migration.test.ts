import type { Kysely } from 'kysely';
import { expect, test } from 'vitest';
import type { Engine } from '../../src/db/engine.js';
import { migrateToLatest, migrateUpTo } from '../../src/db/migrate.js';
import { useUnmigratedDatabase } from '../support/database.js';

/**
 * Migration 0024-price-plans on a database with accounts: no account gets a plan (each stays
 * on PRICE_MARKUP_PERCENT), a plan and an assignment can be stored, and the tables refuse a
 * plan of an unknown kind, an assignment to an unknown plan and a second plan for an account.
 */
let db: Kysely<any>;
let engine: Engine;
useUnmigratedDatabase((opened) => ({ db, engine } = opened));

test('existing accounts stay on the default; plans and assignments are constrained', async () => {
  await migrateUpTo(db, engine, '0023-operator-console');
  await db
    .insertInto('accounts')
    .values([
      { id: 'acct_a', email: 'a@example.com', status: 'active', created_at: 1 },
      { id: 'acct_b', email: 'b@example.com', status: 'active', created_at: 1 },
    ])
    .execute();

  await migrateToLatest(db, engine);

  expect(await db.selectFrom('account_plans').selectAll().execute()).toEqual([]);
  await db.insertInto('price_plans').values({ name: 'gold', kind: 'markup', tiers: '[{"from_ton":"0","markup_percent":"5"}]', created_at: 2, created_by: 'ops' }).execute();
  await db.insertInto('account_plans').values({ account_id: 'acct_a', plan_name: 'gold', assigned_at: 3 }).execute();
  const rows = await db.selectFrom('account_plans').select(['account_id', 'plan_name']).execute();
  expect(rows).toEqual([{ account_id: 'acct_a', plan_name: 'gold' }]);

  await expect(db.insertInto('price_plans').values({ name: 'odd', kind: 'discount', tiers: '[]', created_at: 2, created_by: 'ops' }).execute()).rejects.toThrow();
  await expect(db.insertInto('account_plans').values({ account_id: 'acct_b', plan_name: 'missing', assigned_at: 3 }).execute()).rejects.toThrow();
  await expect(db.insertInto('account_plans').values({ account_id: 'acct_a', plan_name: 'gold', assigned_at: 4 }).execute()).rejects.toThrow();
});
