import { type Compilable, type CompiledQuery, type Kysely, PostgresAdapter } from 'kysely';
import type { Database } from './schema.js';

const PLACEHOLDER = '\u0000Starport-Parameter:'; // mixed case: a case conversion shows

/**
 * The SQL text of every prepared query, with a stable statement name. PostgreSQL's driver
 * turns these into named server-side prepared statements (postgres.ts), so the server parses
 * and plans each hot statement once per connection instead of on every call.
 */
export const preparedStatementNames = new Map<string, string>();

interface Plan {
  compiled: CompiledQuery;
  /** For each bound parameter: the index of the argument that fills it, or a constant. */
  slots: Array<number | { constant: unknown }>;
}

/**
 * A query built and compiled once per SQL dialect, then run with fresh parameter values.
 * Kysely otherwise rebuilds and recompiles the query tree on every call, which on the
 * hottest reads (the API key lookup, the balance, an order) costs about twice SQLite's own
 * work. `build` must pass each argument straight into the query as a value (no arithmetic or
 * conversion on it, no `in` lists), so that its place among the parameters can be found; the
 * first call checks that.
 */
export function preparedQuery<A extends unknown[], Row>(build: (db: Kysely<Database>, ...args: A) => Compilable<Row>): (db: Kysely<Database>, ...args: A) => Promise<Row[]> {
  // Keyed by the adapter's class: transactions share their database's dialect.
  const plans = new Map<unknown, Plan>();
  return async (db, ...args) => {
    const dialect = db.getExecutor().adapter.constructor;
    let plan = plans.get(dialect);
    if (!plan) {
      plan = compilePlan(db, build, args.length);
      plans.set(dialect, plan);
    }
    const parameters = plan.slots.map((slot) => (typeof slot === 'number' ? args[slot] : slot.constant));
    const direct = directPaths.get(db.getExecutor().adapter);
    if (direct && (db.isTransaction ? direct.inTransactions : direct.outsideTransactions())) return direct.run<Row>(plan.compiled.sql, parameters);
    const result = await db.executeQuery<Row>({ ...plan.compiled, parameters } as CompiledQuery<Row>);
    return result.rows;
  };
}

/** Runs one statement straight on the driver, without Kysely's connection handling. */
export type DirectRunner = <Row>(sql: string, parameters: readonly unknown[]) => Promise<Row[]> | Row[];

export interface DirectPath {
  run: DirectRunner;
  /** Whether statements of a transaction may take this path (its connection is the runner's). */
  inTransactions: boolean;
  /** Whether a statement outside any transaction may take it now. */
  outsideTransactions: () => boolean;
  /**
   * Whether coalescedRead may merge reads asked for together into one statement. Worth it
   * where each statement is a network round trip (PostgreSQL), not on SQLite's in-process
   * connection.
   */
  coalescesReads?: boolean;
}

/** Keyed by the Kysely adapter, which a database shares with its transactions. */
const directPaths = new WeakMap<object, DirectPath>();

/**
 * Lets prepared queries skip Kysely's connection handling. On PostgreSQL, outside a
 * transaction, they go straight to the pool: that handling (a pool checkout, several promise
 * hops, a release) cost about as much as `pg` itself, 96 µs of CPU per statement against 52 µs
 * raw. On SQLite, whose one connection is synchronous, they run on it at once, in a transaction
 * or not: Kysely's promise chain per statement cost more than SQLite's own work.
 */
export function runPreparedDirectly(db: Kysely<Database>, path: DirectPath): void {
  directPaths.set(db.getExecutor().adapter, path);
}

/**
 * The runner that statements of `db`'s transactions may take straight to the connection, if
 * there is one (SQLite): for statements no query builder needs to compile, such as savepoints.
 */
export function directTransactionRunner(db: Kysely<Database>): DirectRunner | undefined {
  const path = directPaths.get(db.getExecutor().adapter);
  return path?.inTransactions ? path.run : undefined;
}

function compilePlan<A extends unknown[]>(db: Kysely<Database>, build: (db: Kysely<Database>, ...args: A) => Compilable<unknown>, arity: number): Plan {
  const placeholders = Array.from({ length: arity }, (_, i) => `${PLACEHOLDER}${i}`) as A;
  const compiled = build(db, ...placeholders).compile();
  const slots = compiled.parameters.map((value) => (typeof value === 'string' && value.startsWith(PLACEHOLDER) ? Number(value.slice(PLACEHOLDER.length)) : { constant: value }));
  for (let i = 0; i < arity; i++) {
    if (!slots.includes(i)) throw new Error(`preparedQuery: argument ${i} does not reach the query as a parameter`);
  }
  if (!preparedStatementNames.has(compiled.sql)) preparedStatementNames.set(compiled.sql, `starport_${preparedStatementNames.size + 1}`);
  return { compiled, slots };
}

type Waiter<Row> = { resolve: (rows: Row[]) => void; reject: (error: unknown) => void };

/**
 * Rows grouped by their key, through a Map: a key (an order id, a key's hash) is looked up by
 * its hash, never compared with `===`, which for a secret's hash would leak timing.
 */
export function rowsByKey<Row, K>(rows: readonly Row[], keyOf: (row: Row) => K): Map<K, Row[]> {
  const byKey = new Map<K, Row[]>();
  for (const row of rows) {
    const key = keyOf(row);
    const list = byKey.get(key);
    if (list) list.push(row);
    else byKey.set(key, [row]);
  }
  return byKey;
}

/**
 * A read of the rows under one key (an order's id, a key's hash), coalesced where the driver
 * allows it (DirectPath.coalescesReads: PostgreSQL, outside a transaction). The reads asked
 * for in one event-loop turn, typically by requests that arrived together, go to the server
 * as one statement `many(keys)`, and each gets the rows whose `keyOf` is its key. A read never
 * joins a statement already sent: it sees every write committed before it was asked for,
 * which is what a reissued key's revocation needs (docs/api.md "Authentication").
 *
 * Elsewhere (SQLite, and inside transactions) `one(key)` runs at once.
 */
export function coalescedRead<Row, K extends string>(
  one: (db: Kysely<Database>, key: K) => Promise<Row[]>,
  many: (db: Kysely<Database>, keys: K[]) => Promise<Row[]>,
  keyOf: (row: Row) => K,
): (db: Kysely<Database>, key: K) => Promise<Row[]> {
  const pending = new WeakMap<Kysely<Database>, Map<K, Array<Waiter<Row>>>>();

  async function flush(db: Kysely<Database>, batch: Map<K, Array<Waiter<Row>>>): Promise<void> {
    let rows: Row[];
    try {
      rows = await many(db, [...batch.keys()]);
    } catch (error) {
      for (const waiters of batch.values()) for (const waiter of waiters) waiter.reject(error);
      return;
    }
    const byKey = rowsByKey(rows, keyOf);
    for (const [key, waiters] of batch) {
      for (const waiter of waiters) waiter.resolve(byKey.get(key) ?? []);
    }
  }

  return (db, key) => {
    if (db.isTransaction || !directPaths.get(db.getExecutor().adapter)?.coalescesReads) return one(db, key);
    let batch = pending.get(db);
    if (!batch) {
      const opened = new Map<K, Array<Waiter<Row>>>();
      pending.set(db, (batch = opened));
      // After the I/O callbacks of this turn: every request that arrived with this one is in.
      setImmediate(() => {
        pending.delete(db);
        void flush(db, opened);
      });
    }
    const waiters = batch.get(key) ?? [];
    batch.set(key, waiters);
    return new Promise<Row[]>((resolve, reject) => waiters.push({ resolve, reject }));
  };
}

/**
 * Whether `db` (a database or one of its transactions) is PostgreSQL: for the few statements
 * only it can run (an UPDATE or INSERT inside WITH, json_agg), each saving a round trip.
 */
export function onPostgres(db: Kysely<Database>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
