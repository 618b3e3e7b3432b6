import type BetterSqlite3 from 'better-sqlite3';
import { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { BackgroundCheckpointer } from './checkpointer.js';
import type { Db } from './engine.js';
import { GroupCommit } from './group-commit.js';
import { migrateToLatest } from './migrate.js';
import { runPreparedDirectly } from './prepared.js';
import { sqliteOpenError, waitForPostgres } from './reach.js';
import type { PostgresLimits } from './postgres.js';
import type { Database } from './schema.js';

/** DATABASE_CONNECT_TIMEOUT_S when unset: a server waits for its database longer than an operator's command. */
export const CONNECT_TIMEOUT_DEFAULTS_S = { serve: 30, cli: 5 } as const;

/** The database's part of the configuration (src/config.ts Config has these fields). */
export interface DatabaseSettings {
  dataDir: string;
  databaseUrl: string | undefined;
  databasePoolSize: number;
  /** undefined = the command's default (CONNECT_TIMEOUT_DEFAULTS_S). */
  databaseConnectTimeoutS: number | undefined;
  /** `serve` only. */
  databaseQueryTimeoutMs?: number;
}

export interface DatabaseOptions {
  /** SQLite's folder (the embedded default). */
  dataDir: string;
  /** postgres://… selects PostgreSQL instead. */
  databaseUrl?: string;
  poolSize?: number;
  /** SQLite: copy the WAL into the database file on a thread of its own (checkpointer.ts). */
  backgroundCheckpoints?: boolean;
  /** How long to keep trying to reach PostgreSQL before failing (src/db/reach.ts); default the CLI's 5 s. */
  connectTimeoutMs?: number;
  /** Told once when the first attempt to reach PostgreSQL fails and start-up keeps trying. */
  onWaiting?: (reason: string) => void;
  /**
   * PostgreSQL: each statement's answer within this once the schema is up to date (migrations
   * are not bounded), else its connection is closed with an error. Unset: no limit.
   */
  queryTimeoutMs?: number;
  /** Where the notification listener logs an outage (once) and its end. */
  logger?: Pick<Logger, 'warn' | 'info'>;
}

/** Each engine's driver is loaded only when chosen: the CLI starts faster without the other. */
async function connect(options: DatabaseOptions): Promise<Omit<Db, 'close'> & { close?: Db['close']; afterMigration?: () => Partial<Db> }> {
  const { databaseUrl } = options;
  if (databaseUrl) {
    await waitForPostgres(databaseUrl, { timeoutMs: options.connectTimeoutMs ?? CONNECT_TIMEOUT_DEFAULTS_S.cli * 1000, onWaiting: options.onWaiting });
    const { CONNECTION_TIMEOUT_MS, fixedPlanPool, postgresDialect, postgresEngine, postgresPool, runNamed } = await import('./postgres.js');
    const { listenQueued, queuedAnnouncer } = await import('./postgres-notify.js');
    // Shared by both pools; the query timeout is switched on after migrating.
    // A new connection within 5 s (less with a shorter query timeout); a request queues for a
    // pooled one at most that plus the query timeout (postgres.ts PostgresLimits).
    const connectionTimeoutMs = Math.min(CONNECTION_TIMEOUT_MS, options.queryTimeoutMs ?? CONNECTION_TIMEOUT_MS);
    const limits: PostgresLimits = { connectTimeoutMs: connectionTimeoutMs, poolWaitMs: connectionTimeoutMs + (options.queryTimeoutMs ?? 0) };
    const pool = postgresPool(databaseUrl, options.poolSize, limits);
    const statementPool = fixedPlanPool(databaseUrl, options.poolSize, limits);
    const announcer = queuedAnnouncer(pool);
    const kysely = new Kysely<Database>({ dialect: postgresDialect(pool) });
    runPreparedDirectly(kysely, {
      run: (text, parameters) => runNamed(statementPool, text, parameters),
      inTransactions: false,
      outsideTransactions: () => true,
      coalescesReads: true,
    });
    return {
      kysely,
      close: async () => {
        try {
          await kysely.destroy();
        } finally {
          await statementPool.end();
        }
      },
      engine: postgresEngine,
      writeTransaction: (work) => kysely.transaction().execute(work),
      announceQueued: () => announcer.announce(),
      onQueued: (listener) => listenQueued(databaseUrl, listener, { logger: options.logger, connectTimeoutMs: connectionTimeoutMs }),
      afterMigration: () => {
        limits.queryTimeoutMs = options.queryTimeoutMs;
        return {};
      },
    };
  }
  const { openSqlite, ReadSnapshot, SqliteConnection, sqliteDialect, sqliteEngine, sqliteKeysVersion } = await import('./sqlite.js');
  let raw: BetterSqlite3.Database;
  try {
    raw = openSqlite(options.dataDir);
  } catch (error) {
    throw sqliteOpenError(options.dataDir, error);
  }
  const snapshot = new ReadSnapshot(raw);
  const connection = new SqliteConnection(raw, snapshot);
  const kysely = new Kysely<Database>({ dialect: sqliteDialect(connection) });
  runPreparedDirectly(kysely, connection.directPath());
  const groupCommit = new GroupCommit(kysely);
  return {
    kysely,
    engine: sqliteEngine,
    writeTransaction: (work) => groupCommit.run(work),
    setGroupFinisher: (finisher) => groupCommit.setFinisher(finisher),
    afterMigration: () => ({
      keysVersion: sqliteKeysVersion(raw, snapshot),
      ...(options.backgroundCheckpoints && withBackgroundCheckpoints(raw, kysely)),
    }),
    onQueued: async () => async () => undefined,
  };
}

function withBackgroundCheckpoints(raw: BetterSqlite3.Database, kysely: Kysely<Database>): Pick<Db, 'close'> {
  const checkpointer = new BackgroundCheckpointer(raw.name, (pages) => raw.pragma(`wal_autocheckpoint = ${pages}`));
  // A WAL grown past the writer's checkpoint threshold is cut back to this when it restarts.
  raw.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
  return {
    async close() {
      await checkpointer.close();
      await kysely.destroy();
    },
  };
}

/** Opens the database and brings its schema up to date: every command starts from here. */
export async function openDatabase(options: DatabaseOptions): Promise<Db> {
  const { afterMigration, close, ...connection } = await connect(options);
  const { kysely } = connection;
  const db: Db = { ...connection, close: close ?? (() => kysely.destroy()) };
  try {
    await migrateToLatest(kysely, connection.engine);
  } catch (error) {
    await db.close();
    throw error;
  }
  return { ...db, ...afterMigration?.() };
}

/**
 * The configured database, for `serve` (`for: 'serve'`) or an operator command: each waits for
 * an unreachable PostgreSQL up to DATABASE_CONNECT_TIMEOUT_S, by default 30 s and 5 s. `serve`'s
 * statements are also bounded by DATABASE_QUERY_TIMEOUT_MS and its notification listener logs to
 * `logger`; the operator's commands may run long statements (a ledger verify of a large journal)
 * and are not bounded.
 */
export function openConfiguredDatabase(
  config: DatabaseSettings,
  options: Pick<DatabaseOptions, 'backgroundCheckpoints' | 'onWaiting' | 'logger'> & { for?: keyof typeof CONNECT_TIMEOUT_DEFAULTS_S } = {},
): Promise<Db> {
  const { for: command = 'cli', ...rest } = options;
  const connectTimeoutS = config.databaseConnectTimeoutS ?? CONNECT_TIMEOUT_DEFAULTS_S[command];
  return openDatabase({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    poolSize: config.databasePoolSize,
    connectTimeoutMs: connectTimeoutS * 1000,
    ...(command === 'serve' && { queryTimeoutMs: config.databaseQueryTimeoutMs }),
    ...rest,
  });
}
