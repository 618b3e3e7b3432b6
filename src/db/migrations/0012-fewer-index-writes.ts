import { type Kysely, sql } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * Fewer index pages written per order (docs/performance-history.md "Fourth round"). On SQLite a commit's cost is mostly the pages
 * it writes to the WAL, and an index keyed by a random id or by account puts each order on a
 * page of its own; PostgreSQL writes those pages too.
 *
 * - `orders_account_created` (account_id, mode, created_at) is a prefix of `orders_list`
 *   (account_id, mode, created_at, id), which serves every query it served.
 * - `orders_account_external_id` (account_id, mode, external_id) is covered by the partial
 *   `orders_list_external_id`: a filter `external_id = ?` implies `external_id is not null`.
 * - `journal_account` (account_id, mode, created_at) served no query: balance history reads
 *   `journal_history` (account_id, mode, seq), the operator's views read by account.
 * - `order_events` had its random event id as primary key, a unique index that no query ever
 *   used (events are read by order, in `seq` order) and that cost one page per event, three
 *   per order. (order_id, seq), already unique, becomes the primary key. Event ids keep their
 *   131 random bits.
 *
 * SQLite cannot change a primary key: `order_events` is rebuilt with the same columns and rows,
 * inside the migration's transaction. No table references it.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  for (const index of ['orders_account_created', 'orders_account_external_id', 'journal_account']) {
    await db.schema.dropIndex(index).execute();
  }
  if (engine.name === 'postgres') {
    await sql`alter table order_events drop constraint order_events_pkey, drop constraint order_events_order_seq, add constraint order_events_pkey primary key (order_id, seq)`.execute(
      db,
    );
    return;
  }
  await db.schema
    .createTable('order_events_rebuilt')
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('order_id', 'text', (c) => c.notNull().references('orders.id'))
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('order_events_pkey', ['order_id', 'seq'])
    .execute();
  const columns = sql.raw('id, order_id, seq, type, status, data, created_at');
  await sql`insert into order_events_rebuilt (${columns}) select ${columns} from order_events`.execute(db);
  await db.schema.dropTable('order_events').execute();
  await sql`alter table order_events_rebuilt rename to order_events`.execute(db);
  for (const statement of engine.immutableTableSql('order_events')) await sql.raw(statement).execute(db);
}
