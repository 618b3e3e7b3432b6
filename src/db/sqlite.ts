import fs from 'node:fs';
import path from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { type DatabaseConnection, type Dialect, type Kysely, SqliteAdapter, SqliteDriver, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import { SqliteDatabase } from './driver.js';
import type { Engine } from './engine.js';
import type { DirectPath } from './prepared.js';

/**
 * Kysely's SQLite driver opens transactions with a plain BEGIN, which takes the write lock
 * only at the first write: a CLI process writing beside `serve` then fails with SQLITE_BUSY
 * instead of waiting. BEGIN IMMEDIATE takes the lock up front. While another connection holds
 * it, the wait (up to BUSY_TIMEOUT_MS) is asynchronous: SQLite's own busy_timeout would block
 * the event loop, every request with it, and could never end if the holder is a transaction
 * of this same thread (two services in one process, as the scale-out tests run them) whose
 * commit is queued behind the blocked statement.
 */
class ImmediateTransactionSqliteDriver extends SqliteDriver {
  constructor(private readonly connection: SqliteConnection) {
    super({ database: connection as never });
  }

  override async beginTransaction(_connection: DatabaseConnection): Promise<void> {
    const deadline = Date.now() + BUSY_TIMEOUT_MS;
    for (let delayMs = 1; !this.connection.tryBeginImmediate(Date.now() >= deadline); delayMs = Math.min(delayMs * 2, 20)) {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

export const SQLITE_FILE_NAME = 'starport.sqlite';
const BUSY_TIMEOUT_MS = 10_000;
const STATEMENT_CACHE_SIZE = 500;

export function openSqlite(dataDir: string): BetterSqlite3.Database {
  fs.mkdirSync(dataDir, { recursive: true });
  const db = new SqliteDatabase(path.join(dataDir, SQLITE_FILE_NAME));
  db.pragma('journal_mode = WAL');
  // FULL: an acknowledged order survives power loss, not only a process crash.
  db.pragma('synchronous = FULL');
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  // Statement and savepoint journals in memory, not in temporary files: group commit runs each
  // order in a savepoint, and on disk those journals cost a write call per page touched.
  db.pragma('temp_store = MEMORY');
  db.pragma('foreign_keys = ON');
  db.defaultSafeIntegers(true);
  return db;
}

/**
 * Read snapshots shared by everything one event-loop turn reads. In WAL mode each autocommit
 * statement opens and closes a read transaction of its own (file and shared-memory locks, about
 * 7–10 µs: more than a primary-key lookup itself), and a request makes several (the key check,
 * then its data). Reads outside a transaction instead join a read transaction that stays open
 * until the turn ends (setImmediate), so the requests handled in one turn share one. Any other
 * statement (a write, BEGIN) ends it first, so this connection always reads its own writes;
 * another process's commits are seen from the next turn on, and a request sent after such a
 * commit is read from its socket in a later turn's poll.
 */
export class ReadSnapshot {
  private open = false;
  private begun = 0;
  /** Set while a write transaction is owned by someone (SqliteConnection): no snapshot begins then. */
  held = false;

  get isOpen(): boolean {
    return this.open;
  }

  /** Which snapshot is open: a new number for each one begun. */
  get generation(): number {
    return this.begun;
  }

  constructor(private readonly db: BetterSqlite3.Database) {}

  /** Before a read-only statement: join this turn's snapshot, beginning one unless a transaction is open. */
  join(): void {
    if (this.open || this.held || this.db.inTransaction) return;
    this.db.exec('begin'); // deferred: the first read takes the read lock
    this.open = true;
    this.begun++;
    setImmediate(() => this.end());
  }

  /** Before any other statement, and at the end of the turn. */
  end(): void {
    if (!this.open) return;
    this.open = false;
    this.db.exec('commit');
  }
}

/**
 * The connection Kysely's driver sees. Kysely prepares every query anew; better-sqlite3
 * statements are reusable, so a small cache of prepared statements keyed by SQL text saves the
 * parse on hot paths. Each statement is placed in or out of the turn's read snapshot here, just
 * before the driver runs it.
 */
export class SqliteConnection {
  private readonly cache = new Map<string, CachedStatement>();
  /**
   * A transaction begun here (tryBeginImmediate) that its owner has not yet committed or
   * rolled back. SQLite itself rolls a whole transaction back on some errors (SQLITE_FULL,
   * SQLITE_IOERR, SQLITE_NOMEM), even one hit by a statement inside a savepoint: the owner's
   * next statements would then run in autocommit mode, each committed on its own, and a unit
   * of work could land half-written. While this is set but SQLite has no transaction open,
   * every statement but ROLLBACK throws instead (docs/architecture.md "A batch lost to a full disk").
   */
  private transactionOpen = false;

  constructor(
    readonly db: BetterSqlite3.Database,
    private readonly snapshot = new ReadSnapshot(db),
  ) {}

  prepare(sql: string): CachedStatement {
    if (!this.db.inTransaction && (this.transactionOpen || sql === 'rollback')) return this.afterRolledBack(sql);
    if (sql === 'commit' || sql === 'rollback') this.setTransactionOpen(false);
    let statement = this.cache.get(sql);
    if (!statement) {
      statement = withRowsBuiltInJs(this.db.prepare(sql));
      if (this.cache.size >= STATEMENT_CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(sql, statement);
    }
    if (statement.reader && statement.readonly) this.snapshot.join();
    else this.snapshot.end();
    return statement;
  }

  /**
   * SQLite already rolled the transaction back: its owner's ROLLBACK has nothing left to do
   * (and must not fail in place of the error that caused it); anything else, COMMIT among
   * them, must not run outside the transaction it was written for.
   */
  private afterRolledBack(sql: string): CachedStatement {
    if (sql === 'rollback') {
      this.setTransactionOpen(false);
      return NO_OP_STATEMENT;
    }
    throw Object.assign(new Error('SQLite rolled this transaction back after an earlier error (a full disk, an I/O error); nothing of it was kept.'), {
      code: TRANSACTION_ROLLED_BACK,
    });
  }

  private setTransactionOpen(open: boolean): void {
    this.transactionOpen = open;
    this.snapshot.held = open;
  }

  close(): void {
    this.snapshot.end();
    this.db.close();
  }

  /**
   * BEGIN IMMEDIATE without waiting: false while another connection holds the write lock.
   * `last`: the final attempt, which throws SQLITE_BUSY instead.
   */
  tryBeginImmediate(last: boolean): boolean {
    this.snapshot.end();
    this.db.pragma('busy_timeout = 0');
    try {
      this.db.exec('begin immediate');
      this.setTransactionOpen(true);
      return true;
    } catch (error) {
      if (!last && sqliteEngine.isBusy(error)) return false;
      throw error;
    } finally {
      this.db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  /**
   * Prepared queries run here at once, as Kysely's driver would run them but without its
   * promise chain per statement (a connection mutex, several hops), which cost more than
   * SQLite's own work. In a transaction that is safe because the transaction owns this one
   * connection; outside one, only while no transaction but the turn's read snapshot is open,
   * or the statement would run inside someone else's transaction.
   */
  directPath(): DirectPath {
    return {
      run: <Row>(sql: string, parameters: readonly unknown[]) => {
        const statement = this.prepare(sql);
        if (statement.reader) return statement.all(parameters) as Row[];
        statement.run(parameters);
        return [];
      },
      inTransactions: true,
      // A transaction SQLite rolled back still belongs to its owner until it rolls back too.
      outsideTransactions: () => (!this.db.inTransaction && !this.transactionOpen) || this.snapshot.isOpen,
    };
  }
}

/** A prepared statement as Kysely's driver and the direct path use it. */
type CachedStatement = Pick<BetterSqlite3.Statement, 'reader' | 'readonly' | 'all' | 'run' | 'iterate'>;

/** The code of SqliteConnection's refusal to run a statement of a transaction SQLite rolled back (SQLite's own name for it). */
const TRANSACTION_ROLLED_BACK = 'SQLITE_ABORT_ROLLBACK';

const NO_OP_STATEMENT = {
  reader: false,
  readonly: true,
  all: () => [],
  run: () => ({ changes: 0, lastInsertRowid: 0 }),
  iterate: function* () {},
} as unknown as CachedStatement;

/**
 * better-sqlite3 (on Node 20) builds each row object in C++, one property at a time, turning
 * every column name into a V8 string again for every row: an order's 19 columns cost about
 * twice what SQLite's own lookup does. In raw mode it returns plain arrays instead, and an
 * object literal built from them in JS, one per statement, costs almost nothing. The rows are
 * the same objects as before: same keys in the same order, the later of two equal column
 * names winning.
 */
function withRowsBuiltInJs(statement: BetterSqlite3.Statement): CachedStatement {
  if (!statement.reader) return statement;
  const build = rowBuilder(statement.columns().map((column) => column.name));
  const raw = statement.raw(true);
  return {
    reader: true,
    readonly: raw.readonly,
    all: (...parameters: unknown[]) => {
      const rows = raw.all(...parameters) as unknown[][];
      const objects = new Array<unknown>(rows.length);
      for (let i = 0; i < rows.length; i++) objects[i] = build(rows[i]!);
      return objects;
    },
    run: (...parameters: unknown[]) => raw.run(...parameters),
    iterate: function* (...parameters: unknown[]) {
      for (const values of raw.iterate(...parameters) as IterableIterator<unknown[]>) yield build(values);
    },
  } as CachedStatement;
}

/** Even a `__proto__` column does what better-sqlite3's own property set does: an object or null becomes the prototype. */
function rowBuilder(columns: string[]): (values: unknown[]) => Record<string, unknown> {
  const properties = columns.map((name, i) => `${JSON.stringify(name)}: values[${i}]`).join(', ');
  return new Function('values', `return { ${properties} };`) as (values: unknown[]) => Record<string, unknown>;
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

export function sqliteDialect(target: BetterSqlite3.Database | SqliteConnection): Dialect {
  const connection = target instanceof SqliteConnection ? target : new SqliteConnection(target);
  return {
    createAdapter: () => new TransactionalDdlSqliteAdapter(),
    createDriver: () => new ImmediateTransactionSqliteDriver(connection),
    createIntrospector: (kysely: Kysely<any>) => new SqliteIntrospector(kysely),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  };
}

/**
 * Db.keysVersion on SQLite: `PRAGMA data_version` changes when another connection (the CLI,
 * another process) commits, and TEMP triggers, which fire for this connection's own writes
 * only, count its changes to keys, accounts and accounts' plans (the verdict carries the plan's
 * name: src/accounts/key-verdict.ts) in memory (a trigger of a write that is then
 * rolled back still counts: that only costs a cache miss). Called once the schema exists.
 */
export function sqliteKeysVersion(db: BetterSqlite3.Database, snapshot: ReadSnapshot): () => string {
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
    create temp trigger starport_account_plans_inserted after insert on main.account_plans ${count};
    create temp trigger starport_account_plans_updated after update on main.account_plans ${count};
    create temp trigger starport_account_plans_deleted after delete on main.account_plans ${count};
  `);
  const dataVersion = db.prepare('pragma data_version').pluck();
  // Within one read snapshot no other connection's commit can show, so data_version is read
  // once per snapshot, not once per request (docs/performance-history.md "Ninth round").
  let stamp = '';
  let stampSnapshot = -1;
  let stampChanges = -1;
  return () => {
    snapshot.join();
    if (snapshot.isOpen && snapshot.generation === stampSnapshot && localChanges === stampChanges) return stamp;
    stamp = `${localChanges}:${dataVersion.get() as bigint}`;
    stampSnapshot = snapshot.isOpen ? snapshot.generation : -1;
    stampChanges = localChanges;
    return stamp;
  };
}

/**
 * SQLite's answers (with their extended codes) that say the file cannot be written, or read,
 * right now and may be later: the disk is full, the file system turned read-only or fails, the
 * file cannot be opened; and a transaction SQLite rolled back because of one of those. Not
 * SQLITE_CORRUPT: a damaged file does not mend itself, and stays a 500 the operator is alerted to.
 */
const UNAVAILABLE_CODES = ['SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_READONLY', 'SQLITE_CANTOPEN', TRANSACTION_ROLLED_BACK];

function sqliteCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

export const sqliteEngine: Engine = {
  name: 'sqlite',
  immutableTableSql: (table) => [
    `create trigger ${table}_no_update before update on ${table} begin select raise(abort, '${table} rows are immutable'); end`,
    `create trigger ${table}_no_delete before delete on ${table} begin select raise(abort, '${table} rows are immutable'); end`,
  ],
  isUniqueViolation: (error) => ['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY'].includes(sqliteCode(error) ?? ''),
  lockForClaim: (query) => query,
  lockForUpdate: (query) => query,
  capLockWait: async () => undefined,
  isLockTimeout: () => false,
  isBusy: (error) => (sqliteCode(error) ?? '').startsWith('SQLITE_BUSY'),
  isUnavailable: (error) => {
    const code = sqliteCode(error);
    return code !== undefined && UNAVAILABLE_CODES.some((prefix) => code.startsWith(prefix));
  },
};
