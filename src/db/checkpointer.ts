import { Worker } from 'node:worker_threads';
import { sqliteEngine } from './sqlite.js';
import { driverPath } from './driver.js';

/**
 * The thread's whole program, CommonJS evaluated by the Worker (the service ships bundled,
 * so there is no separate file to point it at). It opens its own connection to the database
 * file and runs a PASSIVE checkpoint whenever asked: that copies committed WAL pages into the
 * database file without waiting for, or blocking, the writer.
 */
const THREAD_PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = ${10_000}');
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage(null);
  } catch (error) {
    parentPort.postMessage({ code: String(error.code), message: String(error.message) });
  }
});
`;

/** WAL pages after which the writer checkpoints itself, should the thread fall behind or fail. */
const WRITER_CHECKPOINT_PAGES = 10_000;
/** SQLite's default, restored while the thread is down or if it stops working. */
const DEFAULT_CHECKPOINT_PAGES = 1_000;
/** Longest wait between two checkpoints that failed for a passing reason (a full disk). */
const MAX_RETRY_MS = 1_000;
/** Wait before a thread that died is started again. */
const RESTART_MS = 1_000;
/** Restarts in a row, with no checkpoint done between them, before the thread is given up. */
const MAX_RESTARTS = 5;

/**
 * Checkpoints the embedded database on a thread of its own (`serve` only).
 *
 * Why: with SQLite's default, the committing connection copies the WAL back into the database
 * file every 1,000 pages, on the event loop: under a stream of orders that is a stall every
 * few commits, and it writes the hot pages (balances, recent index pages) again each time.
 * Here the writer only checkpoints past WRITER_CHECKPOINT_PAGES, as a safety net, and this
 * thread copies the WAL every `everyMs` meanwhile: the event loop only appends and syncs the
 * WAL, and a page changed by many commits between two checkpoints is copied once.
 *
 * A checkpoint that fails for a reason that passes (the disk full or failing, the file
 * read-only: sqliteEngine.isUnavailable; or busy) is tried again, backing off up to
 * MAX_RETRY_MS, until it succeeds: the thread carries on once space is back
 * (docs/operations-embedded.md "A full disk"). A thread that dies is started again after
 * RESTART_MS, the writer checkpointing itself at SQLite's default meanwhile. Any other failure
 * hands checkpoints back to the writer for good.
 */
export class BackgroundCheckpointer {
  private worker: Worker;
  private exited: Promise<unknown>;
  private readonly timer: NodeJS.Timeout;
  private busy = false;
  private failed = false;
  private closing = false;
  /** Consecutive checkpoints that failed for a passing reason, and when the next may run. */
  private retries = 0;
  private retryAt = 0;
  /** Threads started again since the last checkpoint that succeeded. */
  private restarts = 0;

  /** `writerCheckpointPages(n)` sets the writing connection's wal_autocheckpoint. */
  constructor(
    private readonly file: string,
    private readonly writerCheckpointPages: (pages: number) => void,
    everyMs = 20,
  ) {
    this.worker = this.startThread();
    this.exited = this.exitOf(this.worker);
    // An idle service still wakes the thread every `everyMs`: a checkpoint with nothing to copy
    // costs microseconds. The timer does not keep the process alive.
    this.timer = setInterval(() => {
      if (this.busy || this.failed || Date.now() < this.retryAt) return;
      this.busy = true;
      this.worker.postMessage('checkpoint');
    }, everyMs);
    this.timer.unref();
    this.writerCheckpointPages(WRITER_CHECKPOINT_PAGES);
  }

  private startThread(): Worker {
    const driver = driverPath;
    // No inherited command-line options: under `node --input-type=module -e …` (bench/profile.mjs)
    // the thread's CommonJS program was read as a module and failed to start, and the writer
    // quietly went back to checkpointing on the event loop.
    const worker = new Worker(THREAD_PROGRAM, { eval: true, execArgv: [], workerData: { file: this.file, driver } });
    worker.on('message', (error: { code: string; message: string } | null) => {
      this.busy = false;
      if (error === null) {
        if (this.restarts > 0) this.writerCheckpointPages(WRITER_CHECKPOINT_PAGES);
        this.restarts = 0;
        this.retries = 0;
        this.retryAt = 0;
      } else if (error.code.startsWith('SQLITE_BUSY') || sqliteEngine.isUnavailable(error)) {
        this.retries++;
        this.retryAt = Date.now() + Math.min(MAX_RETRY_MS, 10 * 2 ** Math.min(this.retries, 10));
      } else this.fail();
    });
    // An exception out of the thread (it could not open the file, say) ends it: 'exit' follows.
    worker.on('error', () => undefined);
    worker.once('exit', () => {
      if (this.closing || this.failed || worker !== this.worker) return;
      // A thread that cannot even start (it died again before any checkpoint) is given up.
      if (this.restarts >= MAX_RESTARTS) return this.fail();
      this.writerCheckpointPages(DEFAULT_CHECKPOINT_PAGES);
      const restart = setTimeout(() => {
        if (this.closing || this.failed) return;
        this.restarts++;
        this.busy = false;
        this.worker = this.startThread();
        this.exited = this.exitOf(this.worker);
      }, RESTART_MS);
      restart.unref();
    });
    return worker;
  }

  private exitOf(worker: Worker): Promise<unknown> {
    return new Promise((resolve) => worker.once('exit', resolve));
  }

  private fail(): void {
    if (this.failed) return;
    this.failed = true;
    clearInterval(this.timer);
    this.writerCheckpointPages(DEFAULT_CHECKPOINT_PAGES);
  }

  /** Stops the thread after its current checkpoint; the writer's own checkpoints carry on. */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.timer);
    this.worker.postMessage('close');
    await this.exited;
  }
}
