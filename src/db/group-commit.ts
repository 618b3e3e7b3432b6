import type { ControlledTransaction, Kysely } from 'kysely';
import type { Database } from './schema.js';

/** Most units of work one commit carries: bounds how long a batch holds the writer. */
const MAX_BATCH = 64;

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

  constructor(private readonly kysely: Kysely<Database>) {}

  run<T>(work: (tx: Kysely<Database>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    // setImmediate runs after the I/O callbacks of this turn: every request that arrived
    // with this batch of socket reads joins it.
    setImmediate(() => {
      void this.flush().finally(() => {
        this.scheduled = false;
        this.schedule();
      });
    });
  }

  private async flush(): Promise<void> {
    const jobs = this.queue.splice(0, MAX_BATCH);
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
      await trx.commit().execute();
    } catch (error) {
      await trx.rollback().execute().catch(() => undefined);
      for (const job of jobs) job.reject(error);
      return;
    }
    for (const settle of outcomes) settle();
  }

  private async runInSavepoint(trx: ControlledTransaction<Database>, job: Job): Promise<() => void> {
    const savepoint = await trx.savepoint('unit').execute();
    try {
      const value = await job.work(savepoint);
      await savepoint.releaseSavepoint('unit').execute();
      return () => job.resolve(value);
    } catch (error) {
      await savepoint.rollbackToSavepoint('unit').execute();
      return () => job.reject(error);
    }
  }
}
