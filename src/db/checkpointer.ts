import { Worker } from 'node:worker_threads';
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
    parentPort.postMessage(String(error));
  }
});
`;

/** WAL pages after which the writer checkpoints itself, should the thread fall behind or fail. */
const WRITER_CHECKPOINT_PAGES = 10_000;
/** SQLite's default, restored if the thread stops working. */
const DEFAULT_CHECKPOINT_PAGES = 1_000;

/**
 * Checkpoints the embedded database on a thread of its own (`serve` only).
 *
 * Why: with SQLite's default, the committing connection copies the WAL back into the database
 * file every 1,000 pages, on the event loop: under a stream of orders that is a stall every
 * few commits, and it writes the hot pages (balances, recent index pages) again each time.
 * Here the writer only checkpoints past WRITER_CHECKPOINT_PAGES, as a safety net, and this
 * thread copies the WAL every `everyMs` meanwhile: the event loop only appends and syncs the
 * WAL, and a page changed by many commits between two checkpoints is copied once.
 */
export class BackgroundCheckpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<unknown>;
  private readonly timer: NodeJS.Timeout;
  private busy = false;
  private failed = false;

  /** `writerCheckpointPages(n)` sets the writing connection's wal_autocheckpoint. */
  constructor(file: string, writerCheckpointPages: (pages: number) => void, everyMs = 20) {
    const driver = driverPath;
    // No inherited command-line options: under `node --input-type=module -e …` (bench/profile.mjs)
    // the thread's CommonJS program was read as a module and failed to start, and the writer
    // quietly went back to checkpointing on the event loop.
    this.worker = new Worker(THREAD_PROGRAM, { eval: true, execArgv: [], workerData: { file, driver } });
    this.exited = new Promise((resolve) => this.worker.once('exit', resolve));
    const fail = () => {
      if (this.failed) return;
      this.failed = true;
      clearInterval(this.timer);
      writerCheckpointPages(DEFAULT_CHECKPOINT_PAGES);
    };
    this.worker.on('message', (error: string | null) => {
      this.busy = false;
      if (error !== null && !error.includes('SQLITE_BUSY')) fail();
    });
    this.worker.on('error', fail);
    // An idle service still wakes the thread every `everyMs`: a checkpoint with nothing to copy
    // costs microseconds. The timer does not keep the process alive.
    this.timer = setInterval(() => {
      if (this.busy) return;
      this.busy = true;
      this.worker.postMessage('checkpoint');
    }, everyMs);
    this.timer.unref();
    writerCheckpointPages(WRITER_CHECKPOINT_PAGES);
  }

  /** Stops the thread after its current checkpoint; the writer's own checkpoints carry on. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    this.worker.postMessage('close');
    await this.exited;
  }
}
