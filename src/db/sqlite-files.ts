import fs from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { Kysely } from 'kysely';
import { verifyLedger, type Violation } from '../ledger/verify.js';
import { migrateToLatest } from './migrate.js';
import type { Database } from './schema.js';
import { SQLITE_FILE_NAME, sqliteDialect, sqliteEngine } from './sqlite.js';
import { SqliteDatabase } from './driver.js';

/**
 * Whole-file operations on the embedded SQLite database: an online backup (SQLite's backup
 * API, safe while `serve` writes), a restore (only with the service stopped), and the
 * exclusive hold both restore and `db copy` need.
 */
export class SqliteFileError extends Error {}
export class DatabaseInUseError extends SqliteFileError {}

/** The tables every Starport database has (migration 0001-core). */
export const CORE_TABLES = ['accounts', 'api_keys', 'balances', 'journal', 'orders', 'order_events'] as const;
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
      throw new DatabaseInUseError(
        `the database ${file} is in use by another process (is \`starport serve\` or another starport command running?); stop it and try again`,
      );
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
  const tables = new Set(
    (db.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[]).map((r) => r.name),
  );
  const missing = [...CORE_TABLES, 'kysely_migration'].filter((t) => !tables.has(t));
  if (missing.length > 0) throw new SqliteFileError(`${label} is not a Starport database (no table ${missing.join(', ')})`);
  const migrations = (db.prepare('select name from kysely_migration order by name').all() as { name: string }[]).map((r) => r.name);
  const counts: Record<string, number> = {};
  for (const table of [...CORE_TABLES, ...(tables.has('audit_log') ? ['audit_log'] : [])]) {
    counts[table] = Number((db.prepare(`select count(*) as n from "${table}"`).get() as { n: bigint | number }).n);
  }
  return { migrations, counts };
}

function assertSqliteHeader(file: string, label: string): void {
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
function kyselyOver(db: BetterSqlite3.Database): Kysely<Database> {
  db.defaultSafeIntegers(true);
  return new Kysely<Database>({ dialect: sqliteDialect(db) });
}

function fsyncPath(target: string): void {
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

export interface BackupResult extends DatabaseSummary {
  file: string;
  bytes: number;
  ledger: Violation[];
  durationMs: number;
}

/**
 * An online, consistent backup of DATA_DIR's database into `target`, while the service may be
 * writing. SQLite's backup API copies every page in one step, i.e. inside one read transaction:
 * in WAL mode that snapshot never blocks the writers, and it contains exactly the transactions
 * committed before it began. The copy is written beside the target, checked (quick_check,
 * Starport tables, ledger verify), switched to a self-contained rollback-journal file, and only
 * then renamed into place: `target` is either the old file or a complete backup.
 */
export async function backupSqlite(dataDir: string, target: string, options: { overwrite?: boolean } = {}): Promise<BackupResult> {
  const started = performance.now();
  const source = sqliteFile(dataDir);
  if (!fs.existsSync(source)) throw new SqliteFileError(`no database at ${source} (check DATA_DIR)`);
  const destination = path.resolve(target);
  if (destination === path.resolve(source)) throw new SqliteFileError('the backup must not be the live database file itself');
  if (fs.existsSync(destination) && !options.overwrite) {
    throw new SqliteFileError(`${destination} already exists; choose a new file name or pass --force to replace it`);
  }
  fs.mkdirSync(path.dirname(destination), { recursive: true });
  const partial = `${destination}.partial-${process.pid}`;
  fs.rmSync(partial, { force: true });

  const live = new SqliteDatabase(source, { fileMustExist: true });
  try {
    live.pragma('busy_timeout = 10000');
    // One step with every page: a single consistent snapshot, never restarted by concurrent writes.
    await live.backup(partial, { progress: () => 0x7fffffff });
  } catch (error) {
    fs.rmSync(partial, { force: true });
    throw error;
  } finally {
    live.close();
  }

  let summary: DatabaseSummary;
  let ledger: Violation[];
  try {
    const copy = new SqliteDatabase(partial, { fileMustExist: true });
    // A backup is one self-contained file: no -wal beside it.
    copy.pragma('journal_mode = DELETE');
    summary = inspectStarportDatabase(copy, 'the backup');
    const kysely = kyselyOver(copy);
    try {
      ledger = await verifyLedger(kysely);
    } finally {
      await kysely.destroy();
    }
    fsyncPath(partial);
    fs.renameSync(partial, destination);
    fsyncPath(path.dirname(destination));
  } catch (error) {
    fs.rmSync(partial, { force: true });
    throw error;
  }
  return { file: destination, bytes: fs.statSync(destination).size, ...summary, ledger, durationMs: Math.round(performance.now() - started) };
}

export interface RestoreResult extends DatabaseSummary {
  from: string;
  file: string;
  /** Where the database that was replaced now is (nothing is deleted); null if there was none. */
  previous: string | null;
  /** Migrations the restore applied to bring an older backup up to this version. */
  migrated: string[];
}

/**
 * Replaces DATA_DIR's database with the backup `from`, with the service stopped. The backup is
 * checked first (a SQLite file, intact, a Starport database no newer than this version), copied
 * and migrated beside the live file, verified with the ledger invariants, and only then swapped
 * in; the replaced database is kept as starport.sqlite.before-restore-<time>. `record` writes
 * the audit entry into the restored database.
 */
export async function restoreSqlite(
  dataDir: string,
  from: string,
  options: { now: number; allowLedgerViolations?: boolean; record?: (db: Kysely<Database>) => Promise<unknown> },
): Promise<RestoreResult> {
  const backupFile = path.resolve(from);
  if (!fs.existsSync(backupFile)) throw new SqliteFileError(`no file ${backupFile}`);
  if (!fs.statSync(backupFile).isFile()) throw new SqliteFileError(`${backupFile} is not a file`);
  assertSqliteHeader(backupFile, backupFile);
  const live = sqliteFile(dataDir);
  if (path.resolve(live) === backupFile) throw new SqliteFileError('the backup is the live database file itself');

  // Check the backup before touching anything.
  const candidate = openReadOnly(backupFile);
  try {
    inspectStarportDatabase(candidate, backupFile);
  } finally {
    candidate.close();
  }

  fs.mkdirSync(dataDir, { recursive: true });
  const hold = fs.existsSync(live) ? holdExclusively(live) : undefined;
  const staged = `${live}.restore-${process.pid}`;
  try {
    fs.rmSync(staged, { force: true });
    const source = openReadOnly(backupFile);
    try {
      await source.backup(staged, { progress: () => 0x7fffffff });
    } finally {
      source.close();
    }
    const copy = new SqliteDatabase(staged, { fileMustExist: true });
    copy.pragma('journal_mode = DELETE');
    copy.pragma('foreign_keys = ON');
    const kysely = kyselyOver(copy);
    let migrated: string[];
    let summary: DatabaseSummary;
    try {
      migrated = await migrateToLatest(kysely, sqliteEngine).catch((error: Error) => {
        throw new SqliteFileError(`cannot restore ${backupFile}: ${error.message}`);
      });
      const violations = await verifyLedger(kysely);
      if (violations.length > 0 && !options.allowLedgerViolations) {
        throw new SqliteFileError(
          `${backupFile} fails ledger verify (${violations.length} violation(s), first: ${violations[0]?.message}); nothing was restored (--force restores it anyway)`,
        );
      }
      await options.record?.(kysely);
      summary = inspectStarportDatabase(copy, 'the restored database');
    } finally {
      await kysely.destroy();
    }
    fsyncPath(staged);

    let previous: string | null = null;
    if (fs.existsSync(live)) {
      previous = `${live}.before-restore-${new Date(options.now).toISOString().replace(/[:.]/g, '-')}`;
      fs.renameSync(live, previous);
    }
    for (const suffix of ['-wal', '-shm', '-journal']) fs.rmSync(`${live}${suffix}`, { force: true });
    fs.renameSync(staged, live);
    fsyncPath(dataDir);
    return { from: backupFile, file: live, previous, migrated, ...summary };
  } finally {
    fs.rmSync(staged, { force: true });
    hold?.release();
  }
}

function openReadOnly(file: string): BetterSqlite3.Database {
  try {
    return new SqliteDatabase(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new SqliteFileError(`cannot open ${file}: ${(error as Error).message}`);
  }
}
