import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Mode } from '../domain/api-key.js';
import { randomBase62 } from '../domain/random.js';
import type { Db } from '../db/engine.js';
import { Outage } from '../db/outage.js';
import type { Database } from '../db/schema.js';
import { isFinal, type OrderStatus } from '../domain/order-status.js';
import { type Order, orderFromRow } from '../orders/order.js';
import { claimDue, dueOrders, extendLease, giveBackLeases, nextDueAt, postpone } from './order-queue.js';
import { withLedgerMovesLast } from '../orders/transitions.js';

/**
 * Performs the next step of one claimed order and returns the status it left the order in
 * (undefined when another actor moved it first).
 */
export type OrderStep = (order: Order, now: number) => Promise<OrderStatus | undefined>;

/**
 * Steps that only write to the database (test mode), for a batch of orders of one mode: they
 * run inside the transaction that claimed the orders, so a whole batch costs one commit and
 * needs no lease. Returns each order's status after its steps (as OrderStep does).
 */
type TransactionalStep = (tx: Kysely<Database>, orders: Order[], now: number) => Promise<Array<OrderStatus | undefined>>;

export interface FulfilmentWorkerOptions {
  db: Db;
  /** Steps that wait on the outside world: claimed under a lease, run one by one. */
  steps: Partial<Record<Mode, OrderStep>>;
  /** Steps run in the claiming transaction, a batch per commit. */
  transactionalSteps?: Partial<Record<Mode, TransactionalStep>>;
  logger: Logger;
  /** How long a claim protects an order from other workers. */
  leaseMs?: number;
  /** Longest sleep between looks at the queue when nothing wakes the worker. */
  pollMs?: number;
  batchSize?: number;
  /** How long a wake-up waits for more new orders before the worker looks (default 10 ms). */
  coalesceMs?: number;
  /** Delay before an order whose step threw is tried again. */
  retryAfterErrorMs?: number;
  /**
   * Leased steps run at most this many at a time (default 1: one by one). Live steps wait on
   * Fragment and the chain, so several in parallel keep one worker's throughput up.
   */
  concurrency?: number;
  /** Told when a step leaves an order final (metrics). */
  onFinal?: (order: Order, status: OrderStatus) => void;
}

/**
 * On PostgreSQL each settlement of a batch locks its balance row until the commit and costs a
 * round trip, so a batch of 50 held its first rows locked through some 50 round trips, and
 * every new order of those accounts waited for them (half the accounts of a 100-account load).
 * Batches of 10, in alternating runs of order creation: 1.32× the orders a second and 0.63×
 * the p99 across 100 accounts, 1.35× and 0.78× on one account; 4 was no better, 20 worse.
 * SQLite has one writer and no row locks: there a batch keeps `batchSize`.
 */
const POSTGRES_SETTLEMENT_BATCH = 10;

function byBalanceRow(a: Order, b: Order): number {
  const key = (o: Order) => `${o.accountId}\0${o.mode}`;
  return key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0;
}

/**
 * The orders table is the queue (docs/architecture.md "Orders as the queue"): the worker claims due orders
 * (`next_run_at <= now`, no live lease) by writing a lease, runs one step for each, and sleeps
 * until the next due time, a wake-up from a new order, or the poll interval.
 */
export class FulfilmentWorker {
  readonly id = `wrk_${randomBase62(12)}`;
  private running = false;
  private loop: Promise<void> | undefined;
  private sleeper: { timer: NodeJS.Timeout; until: number; resolve: () => void } | undefined;
  private wokenDuringRun = false;
  /** The database unavailable (a full disk): rounds back off and it is logged once (outage.ts). */
  private readonly outage = new Outage('fulfilment worker');
  /** Claimed orders whose step has not started (processAll's queues). */
  private readonly waiting = new Set<Order[]>();
  /** stop() was called: orders claimed from now on are not started (their leases go back). */
  private stopped = false;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly batchSize: number;
  /** Most orders one transactional batch of the worker's own carries (POSTGRES_SETTLEMENT_BATCH). */
  private readonly transactionalBatchSize: number;
  private readonly retryAfterErrorMs: number;
  private readonly coalesceMs: number;

  constructor(private readonly options: FulfilmentWorkerOptions) {
    this.leaseMs = options.leaseMs ?? 30_000;
    this.pollMs = options.pollMs ?? 500;
    this.batchSize = options.batchSize ?? 50;
    this.transactionalBatchSize = options.db.engine.name === 'postgres' ? Math.min(POSTGRES_SETTLEMENT_BATCH, this.batchSize) : this.batchSize;
    this.retryAfterErrorMs = options.retryAfterErrorMs ?? 1_000;
    this.coalesceMs = options.coalesceMs ?? 10;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopped = false;
    this.loop = this.run();
  }

  /**
   * New work may be due now (called after an order is created). The worker looks within
   * `coalesceMs`, not at once: under a stream of new orders one claiming transaction then
   * carries many of them, instead of each order costing the writer a second commit.
   */
  wake(): void {
    this.wokenDuringRun = true;
    const sleeper = this.sleeper;
    if (sleeper && sleeper.until > Date.now() + this.coalesceMs) this.sleepUntil(sleeper, this.coalesceMs);
  }

  /**
   * Stops claiming and gives back at once the leases of claimed orders whose step has not
   * started, so that another worker can take them now rather than when the lease runs out;
   * then lets the steps under way finish and gives back any lease still held. On a database
   * that does not answer this waits with it: `serve` bounds the whole shutdown
   * (SHUTDOWN_TIMEOUT_S, docs/operations.md "Graceful shutdown"), and a lease it could not give
   * back runs out after WORKER_LEASE_MS.
   */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.stopped = true;
    this.sleeper?.resolve();
    const unstarted = [...this.waiting].flatMap((queue) => queue.splice(0));
    const givenBack = unstarted.length === 0 ? Promise.resolve() : this.giveBack(unstarted.map((order) => order.id));
    try {
      await this.loop;
    } finally {
      await givenBack;
    }
    await this.giveBack();
  }

  /** Clears this worker's leases: of the orders `ids`, or of all it holds. */
  private async giveBack(ids?: string[]): Promise<void> {
    await giveBackLeases(this.options.db.kysely, this.id, ids);
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.wokenDuringRun = false;
      let full = false;
      let backoffMs: number | undefined;
      try {
        full = (await this.round(Date.now())).full;
        this.outage.recovered(this.options.logger);
      } catch (error) {
        if (this.options.db.engine.isUnavailable(error)) backoffMs = this.outage.failed(this.options.logger, error);
        else this.options.logger.error({ err: error, worker: this.id }, 'fulfilment loop failed');
      }
      if (!this.running) break;
      // A full batch: more may be due already. An unavailable database: not before the back-off.
      const delay = backoffMs ?? (full ? 0 : await this.msUntilNextDue());
      // A wake-up that arrived while this round ran would otherwise wait for the next poll.
      await this.sleep(this.wokenDuringRun ? Math.min(delay, this.coalesceMs) : delay);
    }
  }

  /** Claims and processes one batch per kind of step; returns how many orders it claimed. */
  async runOnce(now = Date.now()): Promise<number> {
    return (await this.round(now)).claimed;
  }

  private async round(now: number): Promise<{ claimed: number; full: boolean }> {
    const inTransaction = await this.runTransactionalBatch(now, this.transactionalBatchSize);
    const orders = await this.claim(now);
    await this.processAll(orders);
    return { claimed: Math.max(inTransaction, orders.length), full: inTransaction === this.transactionalBatchSize || orders.length === this.batchSize };
  }

  /**
   * Runs the claimed orders' steps, `concurrency` at a time, in claim order. The orders still
   * waiting for a lane are in `waiting`, where stop() takes them back.
   */
  private async processAll(orders: Order[]): Promise<void> {
    if (this.stopped) return;
    const queue = [...orders];
    const lanes = Math.max(1, Math.min(this.options.concurrency ?? 1, queue.length));
    this.waiting.add(queue);
    try {
      await Promise.all(
        Array.from({ length: lanes }, async () => {
          for (let order = queue.shift(); order; order = queue.shift()) await this.process(order);
        }),
      );
    } finally {
      this.waiting.delete(queue);
    }
  }

  /**
   * Claims due orders and runs their steps in one transaction. If a step throws, the batch is
   * rolled back and retried one order per transaction, so that a single bad order is set
   * aside (retried after a pause) instead of holding back the others.
   */
  private async runTransactionalBatch(now: number, limit: number): Promise<number> {
    if (!this.hasTransactionalSteps()) return 0;
    let failed: Order[] | undefined;
    try {
      const done = await this.options.db.kysely.transaction().execute(async (tx) => {
        const results = await this.stepDue(tx, now, limit, (orders) => {
          failed = orders;
        });
        failed = undefined;
        return results;
      });
      this.reportFinal(done);
      return done.length;
    } catch (error) {
      const [order] = failed ?? [];
      // An unavailable database fails every order alike: none of them is to blame.
      if (!order || this.options.db.engine.isUnavailable(error)) throw error;
      if (limit > 1) return this.runOneByOne(now, limit);
      this.options.logger.error({ err: error, order_id: order.id, worker: this.id }, 'order step failed; will retry');
      await postpone(this.options.db.kysely, order, Date.now() + this.retryAfterErrorMs);
      return 1;
    }
  }

  /**
   * SQLite's group commit appends this to each of its batches (Db.setGroupFinisher): the
   * transactional steps due now, among them those of the orders the batch has just created,
   * are written in that same commit, on pages it writes anyway, instead of in a commit of
   * their own. A new test order thus leaves its creating commit in processing, or already
   * final with no delay configured. A failure rolls back these steps only; the worker's own
   * rounds take the orders up again and deal with it. Returns what to run once committed.
   */
  async stepDueIn(tx: Kysely<Database>): Promise<(() => void) | undefined> {
    if (!this.running || !this.hasTransactionalSteps()) return undefined;
    try {
      const done = await this.stepDue(tx, Date.now(), this.batchSize);
      return () => this.reportFinal(done);
    } catch (error) {
      if (this.options.db.engine.isUnavailable(error)) this.outage.failed(this.options.logger, error);
      else this.options.logger.warn({ err: error, worker: this.id }, 'steps in a creating commit failed; the worker takes them up');
      throw error;
    }
  }

  private hasTransactionalSteps(): boolean {
    return Object.keys(this.options.transactionalSteps ?? {}).length > 0;
  }

  /**
   * Claims the due orders of the transactional steps in `tx` and runs their steps, a batch per
   * mode (`onBatch` is told which orders each is about to run).
   */
  private async stepDue(tx: Kysely<Database>, now: number, limit: number, onBatch?: (orders: Order[]) => void): Promise<Array<[Order, OrderStatus | undefined]>> {
    const steps = this.options.transactionalSteps ?? {};
    const modes = Object.keys(steps) as Mode[];
    // Steps lock balance rows as they settle; taking them in one global order keeps two
    // workers' batches (and an order creation queued behind them) out of a deadlock.
    const orders = (await dueOrders(tx, this.options.db.engine, modes, now, limit).execute()).map(orderFromRow).sort(byBalanceRow);
    const results: Array<[Order, OrderStatus | undefined]> = [];
    await withLedgerMovesLast(tx, async () => {
      for (const mode of modes) {
        const ofMode = orders.filter((order) => order.mode === mode);
        if (ofMode.length === 0) continue;
        onBatch?.(ofMode);
        const statuses = await steps[mode]!(tx, ofMode, now);
        for (const [i, order] of ofMode.entries()) results.push([order, statuses[i]]);
      }
    });
    return results;
  }

  private reportFinal(done: Array<[Order, OrderStatus | undefined]>): void {
    for (const [order, status] of done) if (status && isFinal(status)) this.options.onFinal?.(order, status);
  }

  private async runOneByOne(now: number, limit: number): Promise<number> {
    let done = 0;
    while (done < limit && (await this.runTransactionalBatch(now, 1)) === 1) done++;
    return done;
  }

  private async claim(now: number): Promise<Order[]> {
    const modes = Object.keys(this.options.steps) as Mode[];
    if (modes.length === 0) return [];
    return claimDue(this.options.db.kysely, this.options.db.engine, { owner: this.id, modes, now, leaseMs: this.leaseMs, limit: this.batchSize });
  }

  private async process(order: Order): Promise<void> {
    const step = this.options.steps[order.mode];
    if (!step) return;
    const heartbeat = this.heartbeat(order);
    try {
      const status = await step(order, Date.now());
      if (status && isFinal(status)) this.options.onFinal?.(order, status);
    } catch (error) {
      if (this.options.db.engine.isUnavailable(error)) this.outage.failed(this.options.logger, error);
      else this.options.logger.error({ err: error, order_id: order.id, worker: this.id }, 'order step failed; will retry');
      // Keep the lease a little longer so the order is retried after a pause, not in a hot loop.
      await extendLease(this.options.db.kysely, order.id, this.id, Date.now() + this.retryAfterErrorMs).catch(() => undefined);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /**
   * A step may wait on a slow upstream: extend the lease while it runs so that no other
   * worker takes the order over. A crashed worker stops beating and its lease runs out.
   */
  private heartbeat(order: Order): NodeJS.Timeout {
    return setInterval(
      () => {
        void extendLease(this.options.db.kysely, order.id, this.id, Date.now() + this.leaseMs).catch((error) => {
          if (this.options.db.engine.isUnavailable(error)) this.outage.failed(this.options.logger, error);
          else this.options.logger.warn({ err: error, order_id: order.id }, 'lease heartbeat failed');
        });
      },
      Math.max(100, Math.floor(this.leaseMs / 3)),
    );
  }

  private async msUntilNextDue(): Promise<number> {
    const modes = [...Object.keys(this.options.steps), ...Object.keys(this.options.transactionalSteps ?? {})] as Mode[];
    if (modes.length === 0) return this.pollMs;
    const next = await nextDueAt(this.options.db.kysely, modes).catch(() => null);
    if (next === null) return this.pollMs;
    return Math.max(0, Math.min(this.pollMs, next - Date.now()));
  }

  /**
   * Always a real timer, even for 0 ms: with SQLite every query resolves synchronously, so a
   * loop that only awaited resolved promises would never let requests or timers run.
   */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const sleeper = {
        timer: undefined as unknown as NodeJS.Timeout,
        until: 0,
        resolve: () => {
          clearTimeout(sleeper.timer);
          this.sleeper = undefined;
          resolve();
        },
      };
      this.sleeper = sleeper;
      this.sleepUntil(sleeper, ms);
    });
  }

  private sleepUntil(sleeper: NonNullable<FulfilmentWorker['sleeper']>, ms: number): void {
    clearTimeout(sleeper.timer);
    sleeper.until = Date.now() + ms;
    sleeper.timer = setTimeout(sleeper.resolve, ms);
  }
}
