import { type Kysely, sql } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * API extensions: balance history, order lists and price-locked quotes.
 *
 * - journal: `seq` (per account and mode, 1, 2, 3… in the order the movements were applied) and
 *   the balance after each movement (`balance_available`, `balance_reserved`), written by
 *   ledger `move()` from the very UPDATE that changed the balance. Existing rows are backfilled
 *   from running sums; the journal stays append-only (its triggers are lifted for the backfill
 *   only, inside this migration's transaction on PostgreSQL).
 * - balances.journal_seq: the last `seq` of the balance, bumped by the same UPDATE, so the
 *   sequence is gap-free and race-free without reading it first.
 * - orders: indexes so that every filter of GET /orders is an index range.
 * - quotes: what GET /quote priced, so that POST /orders can lock that price.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  await db.schema.alterTable('journal').addColumn('seq', 'bigint').execute();
  await db.schema.alterTable('journal').addColumn('balance_available', 'bigint').execute();
  await db.schema.alterTable('journal').addColumn('balance_reserved', 'bigint').execute();
  await db.schema
    .alterTable('balances')
    .addColumn('journal_seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await backfillJournal(db, engine);
  await db.schema.createIndex('journal_history').on('journal').columns(['account_id', 'mode', 'seq']).unique().execute();

  await db.schema.createIndex('orders_list').on('orders').columns(['account_id', 'mode', 'created_at', 'id']).execute();
  await db.schema.createIndex('orders_list_status').on('orders').columns(['account_id', 'mode', 'status', 'created_at', 'id']).execute();
  await db.schema
    .createIndex('orders_list_external_id')
    .on('orders')
    .columns(['account_id', 'mode', 'external_id', 'created_at', 'id'])
    .where(sql.ref('external_id'), 'is not', null)
    .execute();

  await db.schema
    .createTable('quotes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('live', 'test')`))
    .addColumn('product', 'text', (c) => c.notNull())
    .addColumn('quantity', 'bigint', (c) => c.notNull())
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    // Set in the transaction that creates the order: a quote prices one order only.
    .addColumn('used_by_order_id', 'text', (c) => c.unique())
    .execute();
  await db.schema.createIndex('quotes_expires').on('quotes').column('expires_at').execute();
}

const BATCH = 500;

/** Running balances for the rows written before this migration, in (created_at, id) order. */
async function backfillJournal(db: Kysely<any>, engine: Engine): Promise<void> {
  await dropImmutability(db, engine);
  const totals = new Map<string, { seq: bigint; available: bigint; reserved: bigint }>();
  let after: { created_at: bigint; id: string } | undefined;
  for (;;) {
    let query = db.selectFrom('journal').select(['id', 'account_id', 'mode', 'available_delta', 'reserved_delta', 'created_at']);
    if (after) {
      const { created_at: at, id } = after;
      query = query.where((eb) => eb.or([eb('created_at', '>', at), eb.and([eb('created_at', '=', at), eb('id', '>', id)])]));
    }
    const rows = await query.orderBy('created_at').orderBy('id').limit(BATCH).execute();
    for (const row of rows) {
      const key = `${row.account_id}\u0000${row.mode}`;
      const total = totals.get(key) ?? { seq: 0n, available: 0n, reserved: 0n };
      total.seq += 1n;
      total.available += BigInt(row.available_delta);
      total.reserved += BigInt(row.reserved_delta);
      totals.set(key, total);
      await db.updateTable('journal').set({ seq: total.seq, balance_available: total.available, balance_reserved: total.reserved }).where('id', '=', row.id).execute();
    }
    if (rows.length < BATCH) break;
    const last = rows[rows.length - 1] as { created_at: bigint; id: string };
    after = { created_at: BigInt(last.created_at), id: last.id };
  }
  for (const [key, total] of totals) {
    const [accountId, mode] = key.split('\u0000');
    await db.updateTable('balances').set({ journal_seq: total.seq }).where('account_id', '=', accountId).where('mode', '=', mode).execute();
  }
  for (const statement of engine.immutableTableSql('journal')) await sql.raw(statement).execute(db);
}

async function dropImmutability(db: Kysely<any>, engine: Engine): Promise<void> {
  const statements =
    engine.name === 'sqlite' ? ['drop trigger if exists journal_no_update', 'drop trigger if exists journal_no_delete'] : ['drop trigger if exists journal_immutable on journal'];
  for (const statement of statements) await sql.raw(statement).execute(db);
}
