import { Kysely } from 'kysely';
import type { Db } from './engine.js';
import { migrateToLatest } from './migrate.js';
import type { Database } from './schema.js';
import { openSqlite, sqliteDialect } from './sqlite.js';
import { sqliteEngine } from './sqlite-engine.js';

export interface DatabaseOptions {
  dataDir: string;
}

/** Opens the database and brings its schema up to date: every command starts from here. */
export async function openDatabase(options: DatabaseOptions): Promise<Db> {
  const kysely = new Kysely<Database>({ dialect: sqliteDialect(openSqlite(options.dataDir)) });
  const db: Db = { kysely, engine: sqliteEngine, close: () => kysely.destroy() };
  try {
    await migrateToLatest(kysely, db.engine);
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}
