/**
 * Queued work on PostgreSQL: the NOTIFY that announces it (at most once per window) and the
 * LISTENing connection that wakes the worker (docs/architecture.md), apart from the pool and
 * the engine in ./postgres.ts.
 */
import pg from 'pg';
import type { Logger } from 'pino';
import { QUEUED_CHANNEL, type Unsubscribe } from './engine.js';
import { Outage } from './outage.js';
import { APPLICATION_NAME, closeConnection, QueryTimeoutError } from './postgres.js';

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
    this.trailing ??= sleepUntil(this.lastSent + this.windowMs).then(() => {
      this.trailing = undefined;
      this.lastSent = performance.now();
      return this.send();
    });
    return this.trailing;
  }
}

/**
 * Resolves once performance.now() has reached `deadline`. A timer alone may fire early by up to
 * the length of the event-loop turn that set it: libuv counts from the loop's cached time (seen
 * at 1.1 ms early in a 50 ms window on a busy CI run).
 */
async function sleepUntil(deadline: number): Promise<void> {
  for (let left = deadline - performance.now(); left > 0; left = deadline - performance.now()) {
    await new Promise((resolve) => setTimeout(resolve, Math.ceil(left)));
  }
}

/** QueuedAnnouncer on `pool`. A lost NOTIFY costs a worker's poll interval, nothing more. */
export function queuedAnnouncer(pool: pg.Pool): QueuedAnnouncer {
  return new QueuedAnnouncer(async () => {
    await pool.query(`select pg_notify('${QUEUED_CHANNEL}', '')`).catch(() => undefined);
  });
}

/**
 * How often the listening connection is checked, and how long the check may take: a connection
 * that a network fault left silently dead (no reset ever arrives) is replaced within a minute,
 * not after the OS's TCP keepalive (hours). The worker polls meanwhile.
 */
const LISTENER_CHECK_MS = 30_000;
const LISTENER_CHECK_TIMEOUT_MS = 10_000;

/**
 * LISTENs on its own connection (a pooled one could be handed to a query mid-LISTEN). It never
 * throws and never ends the process: a connection that fails or is lost is replaced, after
 * Outage's waits (100 ms doubling to 1 s), for as long as it takes. Once a replacement
 * listens, `listener` is called once, a catch-up for work queued while nobody listened (the
 * worker's polling covers that gap too, only later). The outage is logged once, and its end.
 */
export async function listenQueued(
  connectionString: string,
  listener: () => void,
  options: { logger?: Pick<Logger, 'warn' | 'info'>; connectTimeoutMs?: number } = {},
): Promise<Unsubscribe> {
  // Whatever ends the listening connection, it is replaced: every error counts as an outage.
  const outage = new Outage('notification listener');
  const logger = options.logger ?? { warn: () => undefined, info: () => undefined };
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  let attempts = 0;

  const scheduleReconnect = (delayMs: number) => {
    if (stopped || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, delayMs);
  };

  const connect = async (): Promise<void> => {
    if (stopped) return;
    attempts++;
    const next = new pg.Client({
      connectionString,
      application_name: APPLICATION_NAME.listener,
      connectionTimeoutMillis: options.connectTimeoutMs,
      keepAlive: true,
    });
    let lost = false;
    const onLost = (error: unknown) => {
      if (lost) return;
      lost = true;
      if (client === next) client = undefined;
      const delayMs = outage.failed(logger, error);
      void next.end().catch(() => undefined);
      scheduleReconnect(delayMs);
    };
    next.on('notification', () => listener());
    next.on('error', (error) => onLost(error));
    next.on('end', () => onLost(new Error('Connection terminated')));
    try {
      await next.connect();
      await next.query(`listen ${QUEUED_CHANNEL}`);
    } catch (error) {
      onLost(error);
      return;
    }
    if (stopped || lost) {
      await next.end().catch(() => undefined);
      return;
    }
    client = next;
    outage.recovered(logger);
    // Work queued while nobody listened: look for it now rather than at the next poll.
    if (attempts > 1) listener();
  };

  await connect();
  const check = setInterval(() => {
    const listening = client;
    if (!listening) return;
    const timer = setTimeout(() => closeConnection(listening, new QueryTimeoutError(LISTENER_CHECK_TIMEOUT_MS)), LISTENER_CHECK_TIMEOUT_MS);
    listening
      .query('select 1')
      .catch(() => undefined)
      .finally(() => clearTimeout(timer));
  }, LISTENER_CHECK_MS);
  check.unref();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    clearInterval(check);
    const last = client;
    if (!last) return;
    // A partitioned server never answers the goodbye: close the socket after a second.
    const timer = setTimeout(() => closeConnection(last, new Error('the listener stopped')), 1_000);
    await last.end().catch(() => undefined);
    clearTimeout(timer);
  };
}
