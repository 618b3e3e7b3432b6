import fs from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { SqliteDatabase } from '../db/driver.js';
import { migrateToLatest } from '../db/migrate.js';
import type { Database } from '../db/schema.js';
import { sqliteEngine } from '../db/sqlite.js';
import { assertSqliteHeader, type DatabaseSummary, fsyncPath, holdExclusively, inspectStarportDatabase, kyselyOver, SqliteFileError, sqliteFile } from '../db/sqlite-files.js';
import { verifyLedger, type Violation } from '../ledger/verify.js';

/**
 * The operator's online backup (SQLite's backup API, safe while `serve` writes) and restore
 * (only with the service stopped) of the embedded database, each checked with ledger verify.
 */

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
