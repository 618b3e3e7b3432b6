import { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { Db } from './engine.js';
import { migrateToLatest } from './migrate.js';
import { listenQueued, postgresDialect, postgresEngine, postgresPool } from './postgres.js';
import type { Database } from './schema.js';
import { openSqlite, sqliteDialect, sqliteEngine } from './sqlite.js';

export interface DatabaseOptions {
  /** SQLite's folder (the embedded default). */
  dataDir: string;
  /** postgres://… selects PostgreSQL instead. */
  databaseUrl?: string;
  poolSize?: number;
}

function connect(options: DatabaseOptions): Omit<Db, 'close'> {
  const { databaseUrl } = options;
  if (databaseUrl) {
    const dialect = postgresDialect(postgresPool(databaseUrl, options.poolSize));
    return { kysely: new Kysely<Database>({ dialect }), engine: postgresEngine, onQueued: (listener) => listenQueued(databaseUrl, listener) };
  }
  return {
    kysely: new Kysely<Database>({ dialect: sqliteDialect(openSqlite(options.dataDir)) }),
    engine: sqliteEngine,
    onQueued: async () => async () => undefined,
  };
}

/** Opens the database and brings its schema up to date: every command starts from here. */
export async function openDatabase(options: DatabaseOptions): Promise<Db> {
  const connection = connect(options);
  const { kysely } = connection;
  const db: Db = { ...connection, close: () => kysely.destroy() };
  try {
    await migrateToLatest(kysely, connection.engine);
  } catch (error) {
    await db.close();
    throw error;
  }
  return db;
}

export function openConfiguredDatabase(config: Pick<Config, 'dataDir' | 'databaseUrl' | 'databasePoolSize'>): Promise<Db> {
  return openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, poolSize: config.databasePoolSize });
}
