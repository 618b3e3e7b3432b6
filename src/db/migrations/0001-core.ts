import { type Kysely, sql } from 'kysely';
import type { Engine } from '../engine.js';

/** Accounts, keys, the two-phase ledger, and orders with their events. */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('active', 'disabled')`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('live', 'test')`))
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('display_prefix', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  // At most one active key per account and mode: a reissue revokes before it inserts.
  await db.schema.createIndex('api_keys_one_active').on('api_keys').columns(['account_id', 'mode']).unique().where(sql.ref('revoked_at'), 'is', null).execute();

  await db.schema
    .createTable('balances')
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('live', 'test')`))
    .addColumn('available', 'bigint', (c) => c.notNull().check(sql`available >= 0`))
    .addColumn('reserved', 'bigint', (c) => c.notNull().check(sql`reserved >= 0`))
    .addPrimaryKeyConstraint('balances_pk', ['account_id', 'mode'])
    .execute();

  await db.schema
    .createTable('journal')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('deposit', 'adjustment', 'reserve', 'debit', 'release')`))
    .addColumn('order_id', 'text')
    .addColumn('available_delta', 'bigint', (c) => c.notNull())
    .addColumn('reserved_delta', 'bigint', (c) => c.notNull())
    .addColumn('reason', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('journal_account').on('journal').columns(['account_id', 'mode', 'created_at']).execute();
  await db.schema.createIndex('journal_order').on('journal').column('order_id').execute();
  for (const statement of engine.immutableTableSql('journal')) await sql.raw(statement).execute(db);

  await db.schema
    .createTable('orders')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('live', 'test')`))
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('product', 'text', (c) => c.notNull().check(sql`product in ('stars', 'premium')`))
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('quantity', 'bigint', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
    .addColumn('external_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('fulfillment_pending', 'processing', 'delivered', 'failed')`))
    .addColumn('failure_reason', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('next_run_at', 'bigint')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('attempts', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  // The idempotency mechanism: a second insert with the same key fails here and re-reads.
  await db.schema.createIndex('orders_idempotency_key').on('orders').columns(['account_id', 'mode', 'idempotency_key']).unique().execute();
  await db.schema.createIndex('orders_account_created').on('orders').columns(['account_id', 'mode', 'created_at']).execute();
  await db.schema.createIndex('orders_due').on('orders').column('next_run_at').where(sql.ref('next_run_at'), 'is not', null).execute();

  await db.schema
    .createTable('order_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('order_id', 'text', (c) => c.notNull().references('orders.id'))
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('order_events_order_seq', ['order_id', 'seq'])
    .execute();
  for (const statement of engine.immutableTableSql('order_events')) await sql.raw(statement).execute(db);
}
