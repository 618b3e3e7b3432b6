import { type Kysely, sql } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * The operator's audit log: who did what to which account or order, when and why. Append-only
 * like the journal (rows are never updated or deleted), written in the same transaction as the
 * action it records.
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // An OS user name, --actor or STARPORT_ACTOR; for the dashboard, its user.
    .addColumn('actor', 'text', (c) => c.notNull())
    // Where the action came from: 'cli' or 'dashboard'.
    .addColumn('source', 'text', (c) => c.notNull())
    // e.g. account.disable, balance.debit, order.resolve (free text: new actions need no migration).
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('account_id', 'text')
    .addColumn('mode', 'text', (c) => c.check(sql`mode is null or mode in ('live', 'test')`))
    .addColumn('order_id', 'text')
    .addColumn('reason', 'text')
    // JSON object: amounts, before/after states, key prefixes; never a secret.
    .addColumn('details', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('audit_log_created').on('audit_log').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('audit_log_account').on('audit_log').columns(['account_id', 'created_at']).execute();
  for (const statement of engine.immutableTableSql('audit_log')) await sql.raw(statement).execute(db);
}
