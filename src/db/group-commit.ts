import { type ControlledTransaction, type Kysely, sql } from 'kysely';
import { type DirectRunner, directTransactionRunner } from './prepared.js';
import type { Database } from './schema.js';

/** Most units of work one commit carries: bounds how long a batch holds the writer. */
const MAX_BATCH = 64;
/** Longest a batch waits for more units (see `schedule`). */
const LINGER_MS = 2;

/**
 * Work appended to every batch before its commit, in a savepoint of its own (the test-mode
 * worker's due steps: see FulfilmentWorker.stepDueIn). Its failure rolls back only that
 * savepoint. What it returns runs once the batch is durable.
 */
export type Finisher = (tx: Kysely<Database>) => Promise<(() => void) | undefined>;

interface Job {
  work: (tx: Kysely<Database>) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for SQLite. With `synchronous = FULL` every commit waits for the disk, and
 * SQLite has one writer: one commit per order caps creation at the disk's sync rate. Units
 * of work that arrive in the same turn of the event loop share one transaction instead, each
 * inside its own savepoint, so a unit that fails (insufficient balance, a lost idempotency
 * race) is rolled back alone. Every caller is answered only after the shared commit: an
 * acknowledged write is as durable as with a commit of its own.
 */
export class GroupCommit {
  private queue: Job[] = [];
  private scheduled = false;
  /** Units the last commit carried: what the next batch waits for, up to `lingerMs`. */
  private lastBatchSize = 1;
  /** Commits made (batches that reached COMMIT). */
  commits = 0;
  private finisher: Finisher | undefined;

  /**
   * Savepoints go straight to the connection where they can: Kysely's savepoint API compiles
   * each statement and makes a new transaction object, about 10 µs per unit (docs/performance-history.md "Tenth round").
   */
  private readonly direct: DirectRunner | undefined;

  constructor(
    private readonly kysely: Kysely<Database>,
    private readonly lingerMs = LINGER_MS,
  ) {
    this.direct = directTransactionRunner(kysely);
  }

  run<T>(work: (tx: Kysely<Database>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  /** Sets (or with undefined removes) the work appended to each batch. */
  setFinisher(finisher: Finisher | undefined): void {
    this.finisher = finisher;
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    // setImmediate runs after the I/O callbacks of this turn: every request that arrived
    // with this batch of socket reads joins it. Under steady load the clients answered by the
    // last commit send their next orders over the following few turns, so the batch waits,
    // a turn at a time and at most `lingerMs`, until it is as large as the last one: fewer,
    // fuller commits (measured: 24 → 30 orders per commit, 1–8 % more orders a second, a lower
    // p99). A lone order after a quiet spell (last batch of 1) does not wait.
    const since = performance.now();
    const start = () => {
      if (this.queue.length < this.lastBatchSize && performance.now() - since < this.lingerMs) {
        setImmediate(start);
        return;
      }
      void this.flush().finally(() => {
        this.scheduled = false;
        this.schedule();
      });
    };
    setImmediate(start);
  }

  private async flush(): Promise<void> {
    const jobs = this.queue.splice(0, MAX_BATCH);
    this.lastBatchSize = jobs.length;
    const outcomes: Array<() => void> = [];
    let trx: ControlledTransaction<Database>;
    try {
      trx = await this.kysely.startTransaction().execute();
    } catch (error) {
      for (const job of jobs) job.reject(error);
      return;
    }
    try {
      for (const job of jobs) outcomes.push(await this.runInSavepoint(trx, job));
      if (this.finisher) outcomes.push(await this.finish(trx, this.finisher));
      await trx.commit().execute();
      this.commits++;
    } catch (error) {
      await trx
        .rollback()
        .execute()
        .catch(() => undefined);
      for (const job of jobs) job.reject(error);
      return;
    }
    for (const settle of outcomes) settle();
  }

  private async finish(trx: ControlledTransaction<Database>, finisher: Finisher): Promise<() => void> {
    await this.savepoint(trx, 'savepoint finish');
    try {
      const after = await finisher(trx);
      await this.savepoint(trx, 'release finish');
      return after ?? (() => undefined);
    } catch (error) {
      // The finisher reports its own failures; the batch's units still commit.
      await this.rollBackTo(trx, 'finish', error);
      return () => undefined;
    }
  }

  private async runInSavepoint(trx: ControlledTransaction<Database>, job: Job): Promise<() => void> {
    await this.savepoint(trx, 'savepoint unit');
    try {
      const value = await job.work(trx);
      await this.savepoint(trx, 'release unit');
      return () => job.resolve(value);
    } catch (error) {
      await this.rollBackTo(trx, 'unit', error);
      return () => job.reject(error);
    }
  }

  /**
   * Undoes the savepoint's work and takes it off the stack. When that fails, SQLite has rolled
   * the whole transaction back (it does on SQLITE_FULL or SQLITE_IOERR, even for a statement
   * in a savepoint): the batch is lost, and every unit in it fails with `cause`, the error
   * that lost it (docs/architecture.md "Group commit").
   */
  private async rollBackTo(trx: ControlledTransaction<Database>, name: 'unit' | 'finish', cause: unknown): Promise<void> {
    try {
      await this.savepoint(trx, `rollback to ${name}`);
      await this.savepoint(trx, `release ${name}`);
    } catch {
      throw cause;
    }
  }

  private savepoint(trx: ControlledTransaction<Database>, statement: string): Promise<unknown> | undefined {
    if (!this.direct) return sql.raw(statement).execute(trx);
    const ran = this.direct(statement, []);
    return ran instanceof Promise ? ran : undefined;
  }
}
