import fs from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { Kysely } from 'kysely';
import type { Database } from './schema.js';
import { SQLITE_FILE_NAME, sqliteDialect } from './sqlite.js';
import { SqliteDatabase } from './driver.js';

/**
 * Whole-file pieces of the embedded SQLite database: where the file is, the exclusive hold that
 * restore and `db copy` need, and the checks that a file is an intact Starport database. The
 * operator's backup, restore and copy (src/operator) are built from them.
 */
export class SqliteFileError extends Error {}
class DatabaseInUseError extends SqliteFileError {}

/** The tables every Starport database has (migration 0001-core). */
const CORE_TABLES = ['accounts', 'api_keys', 'balances', 'journal', 'orders', 'order_events'] as const;
const SQLITE_HEADER = 'SQLite format 3\u0000';

export function sqliteFile(dataDir: string): string {
  return path.join(dataDir, SQLITE_FILE_NAME);
}

function isBusy(error: unknown): boolean {
  const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
}

/**
 * Opens `file` and takes it for this process alone, or throws DatabaseInUseError. Leaving WAL
 * mode needs every other connection closed (an idle `serve` still holds the WAL index open),
 * so a successful switch to the rollback journal proves nobody else has the file open; the
 * EXCLUSIVE transaction then keeps a starting process out (it waits on its busy timeout) until
 * `release`. `serve` turns WAL back on when it opens the database.
 */
export function holdExclusively(file: string): { db: BetterSqlite3.Database; release(): void } {
  const db = new SqliteDatabase(file, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 0');
    const mode = db.pragma('journal_mode = DELETE', { simple: true });
    if (mode !== 'delete') throw Object.assign(new Error(`journal mode stayed ${String(mode)}`), { code: 'SQLITE_BUSY' });
    db.exec('begin exclusive');
  } catch (error) {
    db.close();
    if (isBusy(error)) {
      throw new DatabaseInUseError(`the database ${file} is in use by another process (is \`starport serve\` or another starport command running?); stop it and try again`);
    }
    throw error;
  }
  return {
    db,
    release() {
      if (db.inTransaction) db.exec('rollback');
      db.close();
    },
  };
}

export interface DatabaseSummary {
  migrations: string[];
  counts: Record<string, number>;
}

/** Checks that an open SQLite connection holds an intact Starport database; throws saying why not. */
export function inspectStarportDatabase(db: BetterSqlite3.Database, label: string): DatabaseSummary {
  let check: unknown;
  try {
    check = db.pragma('quick_check', { simple: true });
  } catch (error) {
    throw new SqliteFileError(`${label} is not a readable SQLite database: ${(error as Error).message}`);
  }
  if (check !== 'ok') throw new SqliteFileError(`${label} is damaged (SQLite quick_check: ${String(check)})`);
  const tables = new Set((db.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[]).map((r) => r.name));
  const missing = [...CORE_TABLES, 'kysely_migration'].filter((t) => !tables.has(t));
  if (missing.length > 0) throw new SqliteFileError(`${label} is not a Starport database (no table ${missing.join(', ')})`);
  const migrations = (db.prepare('select name from kysely_migration order by name').all() as { name: string }[]).map((r) => r.name);
  const counts: Record<string, number> = {};
  for (const table of [...CORE_TABLES, ...(tables.has('audit_log') ? ['audit_log'] : [])]) {
    counts[table] = Number((db.prepare(`select count(*) as n from "${table}"`).get() as { n: bigint | number }).n);
  }
  return { migrations, counts };
}

export function assertSqliteHeader(file: string, label: string): void {
  let header = '';
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const buffer = Buffer.alloc(16);
      fs.readSync(fd, buffer, 0, 16, 0);
      header = buffer.toString('latin1');
    } finally {
      fs.closeSync(fd);
    }
  } catch (error) {
    throw new SqliteFileError(`cannot read ${label}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (header !== SQLITE_HEADER) throw new SqliteFileError(`${label} is not a SQLite database file`);
}

/** Kysely over one raw connection (closed with it): for checks on a file that is not the live database. */
export function kyselyOver(db: BetterSqlite3.Database): Kysely<Database> {
  db.defaultSafeIntegers(true);
  return new Kysely<Database>({ dialect: sqliteDialect(db) });
}

export function fsyncPath(target: string): void {
  try {
    const fd = fs.openSync(target, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Directories cannot be fsynced on every platform; the rename is still atomic.
  }
}
