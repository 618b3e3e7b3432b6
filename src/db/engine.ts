import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { Finisher } from './group-commit.js';
import type { Database } from './schema.js';

/**
 * What differs between the database engines, each difference isolated here: the rest of the
 * code writes portable Kysely queries against `Database`.
 */
export interface Engine {
  name: 'sqlite' | 'postgres';
  /** SQL statements that make a table append-only (the journal, order events). */
  immutableTableSql(table: string): string[];
  /** True when `error` is a unique-constraint violation (the idempotency re-read path). */
  isUniqueViolation(error: unknown): boolean;
  /** True when a database answer says the engine is briefly busy and the work can be retried. */
  isBusy(error: unknown): boolean;
  /**
   * Makes the queue's claim subquery skip rows other workers are claiming (PostgreSQL's
   * FOR UPDATE SKIP LOCKED). SQLite has one writer at a time, so it needs nothing.
   */
  lockForClaim<QB extends SelectQueryBuilder<any, any, any>>(query: QB): QB;
  /**
   * Makes a select inside a transaction lock the rows it reads until the transaction ends
   * (PostgreSQL FOR NO KEY UPDATE: serialises with other such locks, but lets foreign-key checks
   * of inserts that reference the row through), so read-then-write sequences on them
   * serialise. SQLite write
   * transactions (BEGIN IMMEDIATE) already exclude each other, so it needs nothing.
   */
  lockForUpdate<QB extends SelectQueryBuilder<any, any, any>>(query: QB): QB;
  /**
   * Caps how long the statements of transaction `tx` wait for row locks held by other
   * transactions (PostgreSQL lock_timeout). SQLite waits through busy_timeout instead: there
   * it does nothing.
   */
  capLockWait(tx: Kysely<Database>, lockWaitMs: number): Promise<void>;
  /** True when `error` is the lock wait of capLockWait's cap running out. */
  isLockTimeout(error: unknown): boolean;
  /**
   * True when `error` says the database cannot do the work right now but may later, with
   * nothing half-done kept: SQLite's disk full, read-only or failing (docs/operations-embedded.md
   * "A full disk"), PostgreSQL unreachable. Requests answer 503 service_unavailable
   * (src/http/errors.ts); background loops back off and log once per outage (outage.ts).
   */
  isUnavailable(error: unknown): boolean;
}

/** PostgreSQL's NOTIFY channel for queued work (Db.announceQueued, listenQueued). */
export const QUEUED_CHANNEL = 'starport_orders_queued';

/** Stops a subscription. */
export type Unsubscribe = () => Promise<void>;

export interface Db {
  kysely: Kysely<Database>;
  engine: Engine;
  /**
   * Runs a short unit of database-only work in a transaction. On SQLite units that arrive
   * together share one commit (group-commit.ts); on PostgreSQL each has its own transaction
   * (the server groups concurrent commits itself). Resolves once the work is durable.
   */
  writeTransaction<T>(work: (tx: Kysely<Database>) => Promise<T>): Promise<T>;
  /**
   * A stamp that changes whenever an API key or an account may have changed, by this process
   * or any other, read without a table lookup. Only SQLite offers one (sqlite.ts); without it
   * every request looks its key up.
   */
  keysVersion?: () => string;
  /**
   * SQLite: sets work to append to every group commit (GroupCommit's Finisher), so that what
   * it writes shares the commit, and the pages, of the units it follows. PostgreSQL has no
   * group commit, and no such hook.
   */
  setGroupFinisher?: (finisher: Finisher | undefined) => void;
  /**
   * Tells worker processes elsewhere that work was queued and committed (PostgreSQL NOTIFY,
   * at most once per 10 ms: QueuedAnnouncer). Resolves once the NOTIFY covering this call
   * was sent; callers need not wait. SQLite has none: in one process the caller wakes its own
   * worker directly, and other processes poll.
   */
  announceQueued?: () => Promise<void>;
  /** Calls `listener` whenever another process signals queued work (a no-op on SQLite). */
  onQueued(listener: () => void): Promise<Unsubscribe>;
  close(): Promise<void>;
}
