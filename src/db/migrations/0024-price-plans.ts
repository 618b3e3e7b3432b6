import { type Kysely, sql } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * Price plans (docs/operations.md "Price plans"; src/plans/):
 *
 * - `price_plans` (name): a plan the operator defined, `markup` or `prices`, and its tiers as
 *   JSON text (exact decimals and TON amounts as strings, read back through
 *   src/domain/price-plan.ts). A plan is never edited: a change is a new plan, assigned.
 * - `account_plans` (account_id): the one plan of an account. No row: the global
 *   PRICE_MARKUP_PERCENT, as every account had before; so nothing is filled here.
 */
export async function up(db: Kysely<any>, _engine: Engine): Promise<void> {
  await db.schema
    .createTable('price_plans')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('markup', 'prices')`))
    .addColumn('tiers', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('account_plans')
    .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id'))
    .addColumn('plan_name', 'text', (c) => c.notNull().references('price_plans.name'))
    .addColumn('assigned_at', 'bigint', (c) => c.notNull())
    .execute();
  // `plan list` counts each plan's accounts.
  await db.schema.createIndex('account_plans_plan').on('account_plans').column('plan_name').execute();
}
