import { type Kysely, sql } from 'kysely';
import type { Engine } from '../engine.js';

/**
 * Journal entry ids without an index of their own (docs/performance-history.md "Sixteenth round"; see src/ledger/entry-id.ts).
 *
 * New entry ids end with the entry's seq, so a cursor is found through `journal_history`
 * (account_id, mode, seq). The unique index on every id (the primary key) goes: its random keys
 * put nearly every movement on a page of its own. Entries written before keep their ids; the
 * partial unique index `journal_legacy_id` covers exactly those (26 characters: the prefix and
 * 22 random ones; new ids are longer), so a new entry writes no page of it.
 *
 * Measured on SQLite with the bench's creation load (32 connections, 100 accounts), scratch
 * build without the primary key against the same code with it: 1.15× the orders a second
 * (median of 7 alternating pairs; the same harness with both sides equal read 1.02).
 */
export async function up(db: Kysely<any>, engine: Engine): Promise<void> {
  if (engine.name === 'postgres') {
    await sql`alter table journal drop constraint journal_pkey`.execute(db);
  } else {
    await rebuildSqliteJournal(db, engine);
  }
  await sql`create unique index journal_legacy_id on journal (id) where length(id) = 26`.execute(db);
}

/**
 * SQLite cannot drop a primary key: the table is rebuilt from its own definition with the id
 * column no longer the key (same columns, order, checks and references), with the same rows.
 */
async function rebuildSqliteJournal(db: Kysely<any>, engine: Engine): Promise<void> {
  const { rows } = await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = 'journal'`.execute(db);
  const definition = rows[0]?.sql ?? '';
  const rebuilt = definition.replace(/^CREATE TABLE "journal"/i, 'CREATE TABLE "journal_rebuilt"').replace(/"id" text primary key/i, '"id" text not null');
  // Anything else than the definition migrations 0001–0013 leave is refused before any change.
  if (!rebuilt.startsWith('CREATE TABLE "journal_rebuilt"') || !rebuilt.includes('"id" text not null')) throw new Error(`unexpected journal definition: ${definition}`);
  await sql.raw(rebuilt).execute(db);
  await sql`insert into journal_rebuilt select * from journal`.execute(db);
  await db.schema.dropTable('journal').execute();
  await sql`alter table journal_rebuilt rename to journal`.execute(db);
  await db.schema.createIndex('journal_history').on('journal').columns(['account_id', 'mode', 'seq']).unique().execute();
  await db.schema.createIndex('journal_order_no').on('journal').column('order_no').execute();
  for (const statement of engine.immutableTableSql('journal')) await sql.raw(statement).execute(db);
}
