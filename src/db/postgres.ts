import { PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Engine } from './engine.js';
import { preparedStatementNames } from './prepared.js';

/**
 * PostgreSQL, the scale-out engine. Everything that differs from SQLite is in this file:
 * int8 parsing, error codes, row locks for the queue claim, append-only triggers.
 */
const INT8_OID = 20;

/** int8 as bigint (pg's default is a string), per pool rather than pg's global type table. */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8_OID && format !== 'binary') return (value: string) => BigInt(value);
    return pg.types.getTypeParser(oid, format);
  },
};

/**
 * How long the service waits on the database before it answers 503 (docs/operations.md "When
 * the database goes away"). Mutable: open.ts switches the query timeout on once migrations have
 * run (a migration may rightly take longer), and leaves it off for the operator's commands.
 */
/** A new connection is made (TCP and PostgreSQL's start-up) within this, at most. */
export const CONNECTION_TIMEOUT_MS = 5_000;

export interface PostgresLimits {
  /** A new connection made (TCP and start-up) within this. */
  connectTimeoutMs?: number;
  /**
   * A request waiting for a pooled connection (a free one, or a new one) gives up after this.
   * Longer than the connect timeout: under a burst of load a request may rightly queue for a
   * while behind the pool's busy connections (found by the load suite: 5 s turned some of 500
   * concurrent orders into 503s on a busy machine).
   */
  poolWaitMs?: number;
  /** Each statement's answer within this, else its connection is closed (undefined: no limit). */
  queryTimeoutMs?: number;
}

/** Connections name their kind, so an operator (or a test) can tell them apart in pg_stat_activity. */
export const APPLICATION_NAME = { pool: 'starport', statements: 'starport-statements', listener: 'starport-listen' } as const;

/**
 * The server ends a session left idle inside a transaction this long: a client cut off by a
 * partition cannot hold its row locks (balances, queued orders) for the OS's TCP keepalive
 * time. Our transactions only ever wait on the database itself.
 */
const IDLE_IN_TRANSACTION_MS = 60_000;

export function postgresPool(connectionString: string, max = 10, limits: PostgresLimits = {}, applicationName: string = APPLICATION_NAME.pool): pg.Pool {
  const pool = new pg.Pool({
    connectionString,
    max,
    types: types as pg.CustomTypesConfig,
    application_name: applicationName,
    // pg-pool bounds the wait for a pooled connection with this, and hands it to every new
    // client, whose own connect timeout BoundedClient sets.
    connectionTimeoutMillis: limits.poolWaitMs ?? limits.connectTimeoutMs,
    Client: boundedClient(limits.connectTimeoutMs),
    idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
    keepAlive: true,
  });
  // An idle client losing its connection (server restart) must not crash the process: the
  // pool drops it and tells this listener.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    // Nor may a client that is checked out (a transaction's, between or during statements):
    // pg emits 'error' on it too, and the pool listens only while it is idle. Its statements
    // fail with the error, and the pool discards it when it is given back (it is no longer
    // queryable). Without this listener the emit threw, and the process ended.
    client.on('error', () => undefined);
    instrumentClient(client, limits);
  });
  return pool;
}

/**
 * The pool for runNamed: preparedQuery's statements outside transactions, each a fixed shape
 * that finds a handful of rows by a key (the coalesced reads of keys, orders and balances, the
 * one-statement placement). Its sessions plan each statement once, without its parameters:
 *
 * - `plan_cache_mode = force_generic_plan`: left to choose, PostgreSQL kept planning the
 *   coalesced reads afresh on every execution (their `= any($1)` costs less, to the planner,
 *   for the few keys of the first executions than for its generic guess of ten), which was
 *   43 % of the server's CPU under `GET /quote`: more than running them.
 * - `random_page_cost = 1.1`, PostgreSQL's advice for data that is in memory, which these
 *   statements' index pages are: with the default 4, a plan made without the parameters joined
 *   small tables by scanning them whole rather than probing their unique indexes.
 *
 * Transactions (the other pool) keep the server's settings. Both are set at connection
 * (PostgreSQL 12 or later), after any `options` the URL or PGOPTIONS already give.
 */
export function fixedPlanPool(connectionString: string, max = 10, limits: PostgresLimits = {}): pg.Pool {
  return postgresPool(withSessionOptions(connectionString, '-c plan_cache_mode=force_generic_plan -c random_page_cost=1.1'), max, limits, APPLICATION_NAME.statements);
}

/**
 * pg reads `options` from the URL over its config, so they are added to the URL's own. A URL
 * that does not parse is left as it is, for pg to refuse with its own error, as the other pool's.
 */
function withSessionOptions(connectionString: string, options: string): string {
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    return connectionString;
  }
  const given = url.searchParams.get('options') ?? process.env.PGOPTIONS;
  url.searchParams.set('options', given ? `${given} ${options}` : options);
  return url.toString();
}

/** One hot statement outside a transaction, as a named prepared statement on any pooled connection. */
export async function runNamed<Row>(pool: pg.Pool, text: string, values: readonly unknown[]): Promise<Row[]> {
  const name = preparedStatementNames.get(text);
  const result = await pool.query({ ...(name && { name }), text, values: values as unknown[] });
  return result.rows as Row[];
}

/** pg.Client whose connection attempt gives up after `connectTimeoutMs`, whatever the pool's wait. */
function boundedClient(connectTimeoutMs: number | undefined): typeof pg.Client {
  return class BoundedClient extends pg.Client {
    constructor(config?: pg.ClientConfig) {
      super({ ...config, connectionTimeoutMillis: connectTimeoutMs });
    }
  };
}

/**
 * Every pooled client's statements go through here:
 *
 * - The hot statements (preparedQuery's) go as named prepared statements: the server then
 *   parses each once per connection, not on every call. It may still plan them on every call
 *   (PostgreSQL's plan_cache_mode auto), which fixedPlanPool's sessions do not. Kysely passes
 *   plain SQL text, so the client's query method maps it.
 * - With a query timeout set, a statement not answered in time closes its connection with a
 *   QueryTimeoutError: a server that accepts TCP and then says nothing (a network partition)
 *   costs a request that long, not a hang. Closing, rather than only giving up on the answer,
 *   makes the pool discard the client instead of lending it out with the statement pending.
 */
function instrumentClient(client: pg.PoolClient, limits: PostgresLimits): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((text: unknown, values?: unknown, callback?: unknown) => {
    const name = typeof text === 'string' ? preparedStatementNames.get(text) : undefined;
    const timeoutMs = limits.queryTimeoutMs;
    // A Submittable (a cursor) reports its end its own way: it is not bounded here.
    const submittable = typeof text === 'object' && text !== null && typeof (text as { submit?: unknown }).submit === 'function';
    if (!timeoutMs || submittable) return name ? query({ name, text, values }, callback) : query(text, values, callback);
    const timer = setTimeout(() => closeConnection(client, new QueryTimeoutError(timeoutMs)), timeoutMs);
    const done = () => clearTimeout(timer);
    const config = name ? { name, text, values } : typeof text === 'string' ? { text, values } : text;
    if (typeof callback === 'function' || typeof values === 'function') {
      const cb = (typeof callback === 'function' ? callback : values) as (...args: unknown[]) => void;
      return query(config, typeof callback === 'function' ? values : undefined, (...args: unknown[]) => {
        done();
        cb(...args);
      });
    }
    const result = query(config) as Promise<unknown>;
    result.then(done, done);
    return result;
  }) as typeof client.query;
}

/** A statement got no answer within the query timeout; its connection was closed. */
export class QueryTimeoutError extends Error {
  readonly code = 'STARPORT_QUERY_TIMEOUT';
  constructor(ms: number) {
    super(`the database did not answer within ${ms} ms`);
  }
}

export function closeConnection(client: pg.ClientBase, error: Error): void {
  const connection = (client as unknown as { connection?: { stream?: { destroy(error?: Error): void } } }).connection;
  connection?.stream?.destroy(error);
}

export function postgresDialect(pool: pg.Pool): PostgresDialect {
  return new PostgresDialect({ pool });
}

const pgCode = (error: unknown) => (typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined);

/**
 * SQLSTATEs that say the server cannot serve us right now, not that the statement was wrong:
 * class 08 (connection exception) and these. 57P01-57P03 are a shut-down or restarting server
 * and pg_terminate_backend; 57014 a cancelled statement; 53300 too many connections; 25P03 and
 * 25P04 a session ended for idling in, or overrunning, a transaction; 40003 a statement whose
 * completion is unknown; 53100 the server's disk full. The transaction they hit is rolled back.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '57014', '53100', '53300', '25P03', '25P04', '40003']);
/** Socket errors of a lost or refused connection. */
const UNAVAILABLE_SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EAI_AGAIN',
  'ERR_STREAM_DESTROYED',
  'ERR_STREAM_WRITE_AFTER_END',
  'STARPORT_QUERY_TIMEOUT',
]);
/**
 * pg's and pg-pool's own errors for a connection that is gone, could not be made or lent in
 * time (connectionTimeoutMillis), or a pool that is shutting down; Kysely's for a connection
 * it discarded after a failed rollback. They carry no code, only these messages.
 */
const UNAVAILABLE_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|timeout expired|Query read timeout|Client has encountered a connection error and is not queryable|Client was closed and is not queryable|Cannot use a pool after calling end on the pool|Postgres connection has been discarded)/;

function isUnavailable(error: unknown, depth = 0): boolean {
  if (typeof error !== 'object' || error === null || depth > 5) return false;
  const code = pgCode(error);
  if (code !== undefined && (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_SOCKET_CODES.has(code))) return true;
  if (error instanceof Error && UNAVAILABLE_MESSAGES.test(error.message)) return true;
  // Node reports a refused connection to a name with several addresses as an AggregateError.
  if (error instanceof AggregateError && error.errors.some((e) => isUnavailable(e, depth + 1))) return true;
  return 'cause' in error && isUnavailable(error.cause, depth + 1);
}

export const postgresEngine: Engine = {
  name: 'postgres',
  immutableTableSql: (table) => [
    `create or replace function starport_forbid_change() returns trigger language plpgsql as $$
       begin raise exception '% rows are immutable', tg_table_name; end $$`,
    `create trigger ${table}_immutable before update or delete on ${table} for each row execute function starport_forbid_change()`,
  ],
  isUniqueViolation: (error) => pgCode(error) === '23505',
  // serialization_failure, deadlock_detected, lock_not_available: the work can be retried.
  isBusy: (error) => ['40001', '40P01', '55P03'].includes(pgCode(error) ?? ''),
  lockForClaim: (query) => query.forUpdate().skipLocked() as typeof query,
  // NO KEY UPDATE, not UPDATE: foreign-key checks of other transactions (KEY SHARE on the same
  // row) must not queue behind it, or they deadlock with balance updates (found on PostgreSQL).
  lockForUpdate: (query) => query.forNoKeyUpdate() as typeof query,
  // set_config(…, true) is SET LOCAL.
  capLockWait: async (tx, lockWaitMs) => {
    await sql`select set_config('lock_timeout', ${`${Math.floor(lockWaitMs)}ms`}, true)`.execute(tx);
  },
  isLockTimeout: (error) => pgCode(error) === '55P03',
  isUnavailable: (error) => isUnavailable(error),
};
