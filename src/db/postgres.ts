import { PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { type Engine, QUEUED_CHANNEL, type Unsubscribe } from './engine.js';
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

export function postgresPool(connectionString: string, max = 10): pg.Pool {
  const pool = new pg.Pool({ connectionString, max, types: types as pg.CustomTypesConfig });
  // An idle client losing its connection (server restart) must not crash the process.
  pool.on('error', () => undefined);
  pool.on('connect', nameHotStatements);
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
export function fixedPlanPool(connectionString: string, max = 10): pg.Pool {
  return postgresPool(withSessionOptions(connectionString, '-c plan_cache_mode=force_generic_plan -c random_page_cost=1.1'), max);
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

/**
 * Sends the hot statements (preparedQuery's) as named prepared statements: the server then
 * parses each once per connection, not on every call. It may still plan them on every call
 * (PostgreSQL's plan_cache_mode auto), which fixedPlanPool's sessions do not. Kysely passes
 * plain SQL text, so the client's query method maps it.
 */
function nameHotStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((text: unknown, values?: unknown, callback?: unknown) => {
    const name = typeof text === 'string' ? preparedStatementNames.get(text) : undefined;
    return name ? query({ name, text, values }, callback) : query(text, values, callback);
  }) as typeof client.query;
}

export function postgresDialect(pool: pg.Pool): PostgresDialect {
  return new PostgresDialect({ pool });
}

const pgCode = (error: unknown) =>
  typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;

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
  // The server's disk full (53100), shutting down or starting (57P01–57P03), the connection
  // lost (class 08, or the socket's own error).
  isUnavailable: (error) => {
    const code = pgCode(error) ?? '';
    return code === '53100' || /^57P0[123]$/.test(code) || code.startsWith('08') || ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT'].includes(code);
  },
};

const RECONNECT_DELAY_MS = 1_000;
/** The worker's own coalescing window (FulfilmentWorker.coalesceMs): a finer NOTIFY wakes it no sooner. */
const ANNOUNCE_WINDOW_MS = 10;

/**
 * NOTIFY for queued work, at most once per window: the first announcement after a quiet spell
 * goes out at once, the ones during a window share one more at its end. Each announcement is
 * thus followed by a NOTIFY sent after it (so after the commit it announces) within the window.
 *
 * Why not a NOTIFY inside each creating transaction, delivered at its commit: PostgreSQL takes
 * a lock shared by the whole cluster from the commit of a notifying transaction until it ends,
 * its WAL flush included, so notifying transactions commit one after another. Measured on
 * order creation across 100 accounts: 640–690 → 840–940 orders/s, and 1.5 → 1.0–1.2 ms of
 * PostgreSQL CPU per order.
 */
export class QueuedAnnouncer {
  private lastSent = Number.NEGATIVE_INFINITY;
  private trailing: Promise<void> | undefined;

  constructor(
    private readonly send: () => Promise<void>,
    private readonly windowMs = ANNOUNCE_WINDOW_MS,
  ) {}

  announce(): Promise<void> {
    const now = performance.now();
    if (!this.trailing && now - this.lastSent >= this.windowMs) {
      this.lastSent = now;
      return this.send();
    }
    this.trailing ??= new Promise((resolve) => setTimeout(resolve, Math.max(0, this.lastSent + this.windowMs - now))).then(() => {
      this.trailing = undefined;
      this.lastSent = performance.now();
      return this.send();
    });
    return this.trailing;
  }
}

/** QueuedAnnouncer on `pool`. A lost NOTIFY costs a worker's poll interval, nothing more. */
export function queuedAnnouncer(pool: pg.Pool): QueuedAnnouncer {
  return new QueuedAnnouncer(async () => {
    await pool.query(`select pg_notify('${QUEUED_CHANNEL}', '')`).catch(() => undefined);
  });
}

/**
 * LISTENs on its own connection (a pooled one could be handed to a query mid-LISTEN) and
 * reconnects after a loss; the worker's polling covers the gap while it is down.
 */
export async function listenQueued(connectionString: string, listener: () => void): Promise<Unsubscribe> {
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = async () => {
    const next = new pg.Client({ connectionString });
    next.on('notification', () => listener());
    next.on('error', () => undefined);
    next.on('end', () => {
      if (!stopped) retry = setTimeout(() => void connect().catch(() => undefined), RECONNECT_DELAY_MS);
    });
    await next.connect();
    await next.query(`listen ${QUEUED_CHANNEL}`);
    client = next;
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end().catch(() => undefined);
  };
}
