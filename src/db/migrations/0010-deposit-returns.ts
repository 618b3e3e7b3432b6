import { type Kysely, sql } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * Returned deposits (the operator assigns or returns unmatched deposits): a deposit
 * gains the status `returned` — the operator sent the TON back by hand (`deposit return`;
 * Starport sends nothing itself) — and `returned_at`, when that was recorded.
 *
 * PostgreSQL changes the status check in place. SQLite cannot alter a CHECK constraint: the
 * table is rebuilt with the new definition (same columns, rows, constraints and indexes, plus
 * the new column), inside the migration's transaction. No table references deposits.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  if (engine.name === 'postgres') {
    await sql`alter table deposits drop constraint deposits_status_check`.execute(db);
    await sql`alter table deposits add constraint deposits_status_check check (status in ('credited', 'unmatched', 'returned'))`.execute(db);
    await db.schema.alterTable('deposits').addColumn('returned_at', 'bigint').execute();
    await sql`alter table deposits add constraint deposits_returned_at check ((status = 'returned') = (returned_at is not null))`.execute(db);
    return;
  }
  await db.schema
    .createTable('deposits_rebuilt')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tx_hash', 'text', (c) => c.notNull().unique())
    .addColumn('lt', 'bigint', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('sender', 'text', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount >= 0`))
    .addColumn('comment', 'text')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('credited', 'unmatched', 'returned')`))
    .addColumn('reason', 'text', (c) => c.check(sql`reason is null or reason in ('no_comment', 'memo_invalid', 'memo_unknown', 'below_minimum')`))
    .addColumn('account_id', 'text', (c) => c.references('accounts.id'))
    .addColumn('chain_time', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('credited_at', 'bigint')
    .addColumn('credited_by', 'text', (c) => c.check(sql`credited_by is null or credited_by in ('watcher', 'operator')`))
    .addColumn('returned_at', 'bigint')
    .addCheckConstraint('deposits_credited_has_account', sql`(status = 'credited') = (account_id is not null and credited_at is not null)`)
    .addCheckConstraint('deposits_returned_at', sql`(status = 'returned') = (returned_at is not null)`)
    .execute();
  const columns = sql.raw('id, tx_hash, lt, address, sender, amount, comment, status, reason, account_id, chain_time, created_at, credited_at, credited_by');
  await sql`insert into deposits_rebuilt (${columns}) select ${columns} from deposits`.execute(db);
  await db.schema.dropTable('deposits').execute();
  await sql`alter table deposits_rebuilt rename to deposits`.execute(db);
  await db.schema.createIndex('deposits_account').on('deposits').columns(['account_id', 'lt']).execute();
  await db.schema.createIndex('deposits_status').on('deposits').columns(['status', 'lt']).execute();
}
