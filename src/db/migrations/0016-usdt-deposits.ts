import { type Kysely, sql } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * USDT deposits (docs/operations.md "USDT top-ups"): the deposit wallet's transactions may now be
 * jetton transfer notifications.
 *
 * - `asset`: `TON` (every row before), `USDT` (a notification from the deposit wallet's own
 *   USDT jetton wallet) or `jetton` (a notification from any other contract: a fake or another
 *   token, status `ignored`, reason `unknown_jetton`, never credited).
 * - `jetton_amount`: the token amount the notification announced, in its smallest units
 *   (USDT: 6 decimals); `jetton_wallet`: the contract it came from.
 * - `rate` (USD per TON, an exact decimal as text) and `rate_at` (epoch ms): the rate a USDT
 *   deposit was converted at, set when it is credited. `amount` stays the nanotons credited
 *   (0 until then; for an ignored notification, the TON it carried).
 * - Status `awaiting_rate`: a matched USDT deposit waiting for a fresh TON/USD rate
 *   (`account_id` set, `credited_at` not); `ignored`: see `asset`.
 *
 * `jetton_wallets` keeps the deposit wallet's jetton wallet per master, as the master's
 * `get_wallet_address` answered it once.
 *
 * PostgreSQL changes the checks in place; SQLite rebuilds the table (as 0010-deposit-returns
 * did) inside the migration's transaction. No table references deposits.
 */
const STATUSES = sql.raw(`'credited', 'unmatched', 'returned', 'awaiting_rate', 'ignored'`);
const REASONS = sql.raw(`'no_comment', 'memo_invalid', 'memo_unknown', 'below_minimum', 'unknown_jetton'`);

export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  await db.schema
    .createTable('jetton_wallets')
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('master', 'text', (c) => c.notNull())
    .addColumn('wallet', 'text', (c) => c.notNull())
    .addColumn('computed_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('jetton_wallets_pk', ['owner', 'master'])
    .execute();
  if (engine.name === 'postgres') {
    await sql`alter table deposits drop constraint deposits_status_check`.execute(db);
    await sql`alter table deposits add constraint deposits_status_check check (status in (${STATUSES}))`.execute(db);
    await sql`alter table deposits drop constraint deposits_reason_check`.execute(db);
    await sql`alter table deposits add constraint deposits_reason_check check (reason is null or reason in (${REASONS}))`.execute(db);
    await sql`alter table deposits add column asset text not null default 'TON' check (asset in ('TON', 'USDT', 'jetton'))`.execute(db);
    await db.schema.alterTable('deposits').addColumn('jetton_amount', 'numeric(40, 0)').execute();
    await db.schema.alterTable('deposits').addColumn('jetton_wallet', 'text').execute();
    await db.schema.alterTable('deposits').addColumn('rate', 'text').execute();
    await db.schema.alterTable('deposits').addColumn('rate_at', 'bigint').execute();
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
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in (${STATUSES})`))
    .addColumn('reason', 'text', (c) => c.check(sql`reason is null or reason in (${REASONS})`))
    .addColumn('account_id', 'text', (c) => c.references('accounts.id'))
    .addColumn('chain_time', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('credited_at', 'bigint')
    .addColumn('credited_by', 'text', (c) => c.check(sql`credited_by is null or credited_by in ('watcher', 'operator')`))
    .addColumn('returned_at', 'bigint')
    .addColumn('asset', 'text', (c) => c.notNull().defaultTo('TON').check(sql`asset in ('TON', 'USDT', 'jetton')`))
    // Jetton units can exceed 64 bits (Coins is up to 120): text, parsed as bigint.
    .addColumn('jetton_amount', 'text')
    .addColumn('jetton_wallet', 'text')
    .addColumn('rate', 'text')
    .addColumn('rate_at', 'bigint')
    .addCheckConstraint('deposits_credited_has_account', sql`(status = 'credited') = (account_id is not null and credited_at is not null)`)
    .addCheckConstraint('deposits_returned_at', sql`(status = 'returned') = (returned_at is not null)`)
    .execute();
  const columns = sql.raw('id, tx_hash, lt, address, sender, amount, comment, status, reason, account_id, chain_time, created_at, credited_at, credited_by, returned_at');
  await sql`insert into deposits_rebuilt (${columns}) select ${columns} from deposits`.execute(db);
  await db.schema.dropTable('deposits').execute();
  await sql`alter table deposits_rebuilt rename to deposits`.execute(db);
  await db.schema.createIndex('deposits_account').on('deposits').columns(['account_id', 'lt']).execute();
  await db.schema.createIndex('deposits_status').on('deposits').columns(['status', 'lt']).execute();
}
