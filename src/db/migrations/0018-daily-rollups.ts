import { type Kysely, sql } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * Per-day rollups for the overview's charts (docs/architecture.md "Daily rollups"), so that each
 * chart reads at most 31 rows whatever the number of orders:
 *
 * - `order_days` (account_id, mode, day): the orders delivered and failed, and their amounts, by
 *   the UTC day the order was created (`created_at / 86400000`). Written by src/orders when an
 *   order reaches a final status, in that transition's transaction.
 * - `balance_days` (account_id, mode, day): the net change of the available balance of the
 *   movements dated that day. Written by src/ledger with each movement that changes the
 *   available balance (not a debit), in the movement's transaction. The balance at the end of a
 *   day is the current one less the nets of the days after it.
 *
 * Both are filled here from the rows already there. `journal_daily` (migration 0015), which the
 * balance chart read, goes: it cost one index write per movement.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  // On SQLite the primary key is the table (WITHOUT ROWID): one B-tree, no separate index.
  const withoutRowid = engine.name === 'sqlite' ? sql`without rowid` : sql``;
  await db.schema
    .createTable('order_days')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('live', 'test')`))
    .addColumn('day', 'bigint', (c) => c.notNull())
    .addColumn('delivered', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`delivered >= 0`))
    .addColumn('delivered_amount', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`delivered_amount >= 0`))
    .addColumn('failed', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`failed >= 0`))
    .addColumn('failed_amount', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`failed_amount >= 0`))
    .addPrimaryKeyConstraint('order_days_pk', ['account_id', 'mode', 'day'])
    .modifyEnd(withoutRowid)
    .execute();
  await db.schema
    .createTable('balance_days')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('live', 'test')`))
    .addColumn('day', 'bigint', (c) => c.notNull())
    .addColumn('available_net', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('balance_days_pk', ['account_id', 'mode', 'day'])
    .modifyEnd(withoutRowid)
    .execute();

  const day = sql.lit(86_400_000);
  await sql`
    insert into order_days (account_id, mode, day, delivered, delivered_amount, failed, failed_amount)
    select account_id, mode, created_at / ${day},
           sum(case when status = 'delivered' then 1 else 0 end),
           sum(case when status = 'delivered' then amount else 0 end),
           sum(case when status = 'failed' then 1 else 0 end),
           sum(case when status = 'failed' then amount else 0 end)
      from orders
     where status in ('delivered', 'failed')
     group by account_id, mode, created_at / ${day}`.execute(db);
  await sql`
    insert into balance_days (account_id, mode, day, available_net)
    select account_id, mode, created_at / ${day}, sum(available_delta)
      from journal
     where available_delta <> 0
     group by account_id, mode, created_at / ${day}`.execute(db);

  await sql`drop index journal_daily`.execute(db);
}
