import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Kysely,
  SqliteAdapter,
  SqliteDriver,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from 'kysely';
import type { Engine } from './engine.js';

/**
 * Kysely's SQLite driver opens transactions with a plain BEGIN, which takes the write lock
 * only at the first write: a CLI process writing beside `serve` then fails with SQLITE_BUSY
 * instead of waiting. BEGIN IMMEDIATE takes the lock up front and waits `busy_timeout`.
 */
class ImmediateTransactionSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

export const SQLITE_FILE_NAME = 'starport.sqlite';
const BUSY_TIMEOUT_MS = 10_000;
const STATEMENT_CACHE_SIZE = 500;

export function openSqlite(dataDir: string): BetterSqlite3.Database {
  fs.mkdirSync(dataDir, { recursive: true });
  const db = new BetterSqlite3(path.join(dataDir, SQLITE_FILE_NAME));
  db.pragma('journal_mode = WAL');
  // FULL: an acknowledged order survives power loss, not only a process crash.
  db.pragma('synchronous = FULL');
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.pragma('foreign_keys = ON');
  db.defaultSafeIntegers(true);
  return db;
}

/**
 * Kysely prepares every query anew; better-sqlite3 statements are reusable, so a small cache
 * of prepared statements keyed by SQL text saves the parse on hot paths.
 */
function withStatementCache(db: BetterSqlite3.Database) {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (!statement) {
        statement = db.prepare(sql);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value as string);
        cache.set(sql, statement);
      }
      return statement;
    },
    close() {
      db.close();
    },
  };
}

/**
 * Kysely runs SQLite migrations outside a transaction with a no-op lock, so two processes
 * migrating one fresh file both run the same migration. SQLite DDL is transactional: saying
 * so makes the Migrator run inside BEGIN IMMEDIATE, which serialises the processes.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

export function sqliteDialect(db: BetterSqlite3.Database): Dialect {
  return {
    createAdapter: () => new TransactionalDdlSqliteAdapter(),
    createDriver: () => new ImmediateTransactionSqliteDriver({ database: withStatementCache(db) as never }),
    createIntrospector: (kysely: Kysely<any>) => new SqliteIntrospector(kysely),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  };
}

/**
 * Db.keysVersion on SQLite: `PRAGMA data_version` changes when another connection (the CLI,
 * another process) commits, and TEMP triggers, which fire for this connection's own writes
 * only, count its changes to keys and accounts in memory (a trigger of a write that is then
 * rolled back still counts: that only costs a cache miss). Called once the schema exists.
 */
export function sqliteKeysVersion(db: BetterSqlite3.Database): () => string {
  let localChanges = 0;
  db.function('starport_keys_changed', { deterministic: false, directOnly: true }, () => {
    localChanges++;
    return null;
  });
  const count = 'begin select starport_keys_changed(); end';
  db.exec(`
    create temp trigger starport_keys_inserted after insert on main.api_keys ${count};
    create temp trigger starport_keys_updated after update on main.api_keys ${count};
    create temp trigger starport_keys_deleted after delete on main.api_keys ${count};
    create temp trigger starport_accounts_updated after update on main.accounts ${count};
    create temp trigger starport_accounts_deleted after delete on main.accounts ${count};
  `);
  const dataVersion = db.prepare('pragma data_version').pluck();
  return () => `${localChanges}:${dataVersion.get() as bigint}`;
}

function sqliteCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

export const sqliteEngine: Engine = {
  name: 'sqlite',
  immutableTableSql: (table) => [
    `create trigger ${table}_no_update before update on ${table} begin select raise(abort, '${table} rows are immutable'); end`,
    `create trigger ${table}_no_delete before delete on ${table} begin select raise(abort, '${table} rows are immutable'); end`,
  ],
  isUniqueViolation: (error) =>
    ['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY'].includes(sqliteCode(error) ?? ''),
  lockForClaim: (query) => query,
  lockForUpdate: (query) => query,
  signalQueued: async () => undefined,
  limitLockWait: async () => undefined,
  isLockTimeout: () => false,
  isBusy: (error) => (sqliteCode(error) ?? '').startsWith('SQLITE_BUSY'),
};
