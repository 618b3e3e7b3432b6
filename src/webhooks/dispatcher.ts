import { sql } from 'kysely';
import type { Logger } from 'pino';
import { randomBase62 } from '../domain/random.js';
import type { Db } from '../db/engine.js';
import { Outage } from '../db/outage.js';
import type { DestinationPolicy } from './address-policy.js';
import { endpointFromRow, signingSecrets } from './endpoints.js';
import { MESSAGE_RETENTION_MS, type MessageRow, onMessagesQueued, pruneMessages } from './outbox.js';
import { recordAttempt } from './outcome.js';
import { type Resolver, sendWebhook } from './sender.js';
import { signedHeaders } from './signing.js';

/** Deliveries in flight at once per worker process. */
const WEBHOOK_CONCURRENCY = 8;
/**
 * Deliveries in flight at once to one endpoint, counted over every worker (a live lease is a
 * delivery in flight): an endpoint that answers slowly, or whose name never resolves, holds at
 * most this many of a worker's WEBHOOK_CONCURRENCY slots, and the others go to other endpoints.
 */
const WEBHOOK_CONCURRENCY_PER_ENDPOINT = 2;

export interface DispatcherOptions {
  db: Db;
  logger: Logger;
  policy: DestinationPolicy;
  timeoutMs: number;
  retryDelaysMs: readonly number[];
  /**
   * When a message runs out of attempts, its endpoint is disabled if no delivery to it has
   * succeeded since that message's first attempt, or if it has been failing for at least this long.
   */
  disableAfterMs: number;
  /** Extra lease beyond the timeout: a claim outlives the attempt it covers. */
  leaseMarginMs: number;
  /** The public origin for the order's status_url. */
  publicUrl: () => string;
  /** Sends in flight at once in this process (default 8). */
  concurrency?: number;
  /** Sends in flight at once to one endpoint, over all workers (default 2). */
  perEndpoint?: number;
  pollMs?: number;
  resolve?: Resolver;
  onAttempt?: (outcome: 'succeeded' | 'failed') => void;
  /** The clock (tests drive it); Date.now by default. */
  now?: () => number;
  /** The jitter source of the retry schedule; Math.random by default. */
  random?: () => number;
}

/**
 * Delivers the webhook outbox (worker role). Like the fulfilment worker it claims due rows with
 * a lease (FOR UPDATE SKIP LOCKED on PostgreSQL), so any number of workers share the outbox.
 * Claiming counts the attempt, and a lease lasts longer than an attempt can (timeout + margin),
 * so no two workers ever send the same attempt; a worker killed mid-send leaves a lease that
 * runs out, and the next claim sends the message again with the same webhook-id
 * (at-least-once). Up to `concurrency` sends run at once, at most `perEndpoint` of them to one
 * endpoint (see claim), so one slow endpoint does not hold up the others. Messages are sent in
 * no guaranteed order (each endpoint's are started oldest first).
 */
export class WebhookDispatcher {
  readonly id = `whd_${randomBase62(12)}`;
  private running = false;
  private loop: Promise<void> | undefined;
  private readonly inflight = new Set<Promise<void>>();
  private wakeUp: (() => void) | undefined;
  private unsubscribe: (() => void) | undefined;
  /** stop() was called: claimed messages not sent yet go back unsent. */
  private stopped = false;
  private woken = false;
  /** The database unavailable (a full disk): claims back off and it is logged once (outage.ts). */
  private readonly outage = new Outage('webhook dispatcher');
  private readonly concurrency: number;
  private readonly perEndpoint: number;
  private readonly pollMs: number;
  private readonly now: () => number;
  private readonly random: () => number;
  private nextPruneAt = 0;
  /** Loop rounds so far: lets a test see that an idle dispatcher sleeps rather than spins. */
  rounds = 0;

  constructor(private readonly options: DispatcherOptions) {
    this.concurrency = options.concurrency ?? WEBHOOK_CONCURRENCY;
    this.perEndpoint = options.perEndpoint ?? WEBHOOK_CONCURRENCY_PER_ENDPOINT;
    this.pollMs = options.pollMs ?? 250;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
  }

  get leaseMs(): number {
    return this.options.timeoutMs + this.options.leaseMarginMs;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    // Messages this process queues are looked for at once, not at the next poll.
    this.unsubscribe = onMessagesQueued(() => this.wake());
    this.loop = this.run();
  }

  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /**
   * Stops claiming and waits for the sends in flight (each bounded by the timeout). A message
   * claimed but not yet sent is given back (deliver()), so another worker sends it at once.
   */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.stopped = true;
    this.unsubscribe?.();
    this.wake();
    await this.loop;
    await Promise.allSettled([...this.inflight]);
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.rounds++;
      this.woken = false;
      const free = this.concurrency - this.inflight.size;
      if (free === 0) {
        // Every slot busy: a finished send wakes the loop (no polling of a due backlog meanwhile).
        await this.sleep(this.pollMs);
        continue;
      }
      await this.pruneNowAndThen();
      let claimed: MessageRow[] = [];
      let backoffMs: number | undefined;
      try {
        claimed = await this.claim(free, this.now());
        this.outage.recovered(this.options.logger);
      } catch (error) {
        if (this.options.db.engine.isUnavailable(error)) backoffMs = this.outage.failed(this.options.logger, error);
        else this.options.logger.error({ err: error, worker: this.id }, 'webhook claim failed');
      }
      for (const message of claimed) this.track(this.deliver(message));
      if (!this.running) break;
      // A full claim may leave more due; otherwise wait for the next due message, a finished
      // send, a wake-up or the poll interval, whichever comes first. An unavailable database
      // (a full disk): the back-off, whatever wakes the loop meanwhile.
      if (backoffMs !== undefined) await this.sleep(backoffMs, { unwoken: true });
      else await this.sleep(claimed.length === free ? 0 : await this.msUntilNextDue());
    }
  }

  private track(work: Promise<void>): void {
    const tracked = work
      .catch((error) => {
        // The send's outcome could not be stored: the message's lease runs out and it is sent again.
        if (this.options.db.engine.isUnavailable(error)) this.outage.failed(this.options.logger, error);
        else this.options.logger.error({ err: error, worker: this.id }, 'webhook delivery failed');
      })
      .finally(() => {
        this.inflight.delete(tracked);
        this.wake();
      });
    this.inflight.add(tracked);
  }

  /**
   * Claims up to `limit` due messages of enabled endpoints and counts their attempt, oldest due
   * first, but never more than `perEndpoint` in flight for one endpoint: messages under a live
   * lease (whichever worker holds it) count against their endpoint, so a backlog on one
   * endpoint cannot fill the batch while another endpoint's messages wait. One endpoint's own
   * messages go oldest first.
   */
  async claim(limit: number, now: number): Promise<MessageRow[]> {
    const { kysely, engine } = this.options.db;
    const at = BigInt(now);
    // Every pending message due by now (the due index's range; a message in flight is among
    // them, under its lease), ranked within its endpoint among those not in flight.
    const fair = sql<string>`(select ranked.id from (
        select due.id, due.next_attempt_at, due.busy,
          sum(due.busy) over (partition by due.endpoint_id) as in_flight,
          row_number() over (partition by due.endpoint_id, due.busy order by due.next_attempt_at, due.id) as turn
        from (
          select m.id, m.endpoint_id, m.next_attempt_at, case when m.lease_until >= ${at} then 1 else 0 end as busy
          from webhook_messages m
          where m.status = 'pending' and m.next_attempt_at <= ${at}
            and m.endpoint_id in (select e.id from webhook_endpoints e where e.status = 'enabled')
        ) due
      ) ranked
      where ranked.busy = 0 and ranked.turn + ranked.in_flight <= ${this.perEndpoint}
      order by ranked.next_attempt_at, ranked.id
      limit ${limit})`;
    return kysely
      .updateTable('webhook_messages')
      .set((eb) => ({ lease_owner: this.id, lease_until: now + this.leaseMs, attempts: eb('attempts', '+', 1n), last_attempt_at: now }))
      .where('id', 'in', (eb) =>
        engine.lockForClaim(
          eb
            .selectFrom('webhook_messages')
            .select('id')
            .where('id', 'in', fair)
            // Again under the lock: another worker may have claimed a row since it was ranked.
            .where('status', '=', 'pending')
            .where('next_attempt_at', '<=', at)
            .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', at)])),
        ),
      )
      .returningAll()
      .execute();
  }

  /** One attempt of one claimed message, and its outcome recorded. */
  async deliver(message: MessageRow): Promise<void> {
    const { kysely } = this.options.db;
    const row = await kysely.selectFrom('webhook_endpoints').selectAll().where('id', '=', message.endpoint_id).executeTakeFirst();
    if (!row) return; // deleted meanwhile (its messages went with it)
    if (this.stopped) return this.giveBack(message);
    const endpoint = endpointFromRow(row);
    const body = this.body(message);
    const startedAt = this.now();
    const headers = signedHeaders(signingSecrets(endpoint, startedAt), message.id, Math.floor(startedAt / 1000), body);
    const result = await sendWebhook({
      url: endpoint.url,
      mode: endpoint.mode,
      headers,
      body,
      timeoutMs: this.options.timeoutMs,
      policy: this.options.policy,
      resolve: this.options.resolve,
    });
    await recordAttempt(this.options.db.kysely, message, startedAt, result, {
      leaseOwner: this.id,
      now: this.now(),
      retryDelaysMs: this.options.retryDelaysMs,
      disableAfterMs: this.options.disableAfterMs,
      random: this.random,
    });
    this.options.onAttempt?.(result.ok ? 'succeeded' : 'failed');
    if (!result.ok)
      this.options.logger.info({ message_id: message.id, endpoint_id: endpoint.id, attempt: Number(message.attempts), error: result.error }, 'webhook attempt failed');
  }

  /**
   * Hands a claimed message back unsent: its lease cleared, and the attempt its claim counted
   * taken off again (last_attempt_at keeps the claim's time).
   */
  private async giveBack(message: MessageRow): Promise<void> {
    await this.options.db.kysely
      .updateTable('webhook_messages')
      .set((eb) => ({ lease_owner: null, lease_until: null, attempts: eb('attempts', '-', 1n) }))
      .where('id', '=', message.id)
      .where('lease_owner', '=', this.id)
      .execute();
  }

  /** The stored payload with the order's status_url (from this node's public origin). */
  private body(message: MessageRow): string {
    const payload = JSON.parse(message.payload) as { data: { order?: Record<string, unknown> } };
    const order = payload.data.order;
    if (order) order.status_url = `${this.options.publicUrl()}/api/v1/orders/${String(order.id)}`;
    return JSON.stringify(payload);
  }

  /** Every 10 minutes: drops finished messages past the retention (one batch; the next round takes more). */
  private async pruneNowAndThen(): Promise<void> {
    const now = this.now();
    if (now < this.nextPruneAt) return;
    this.nextPruneAt = now + 600_000;
    try {
      const pruned = await pruneMessages(this.options.db.kysely, now - MESSAGE_RETENTION_MS);
      if (pruned > 0) this.options.logger.info({ pruned }, 'old webhook messages pruned');
    } catch (error) {
      this.options.logger.warn({ err: error }, 'webhook message pruning failed');
    }
  }

  private async msUntilNextDue(): Promise<number> {
    const now = BigInt(this.now());
    // A message under someone's lease is not due before the lease ends.
    const dueAt = sql<bigint>`case when lease_until > next_attempt_at then lease_until else next_attempt_at end`;
    const row = await this.options.db.kysely
      .selectFrom('webhook_messages')
      .select(sql<bigint | null>`min(${dueAt})`.as('next'))
      .where('status', '=', 'pending')
      // Only what is not due yet: a due message the last claim left is one whose endpoint has
      // all its deliveries in flight, and a finished send wakes the loop (counting it would spin).
      .where(dueAt, '>', now)
      // Messages of a disabled endpoint are not due, however old: counting them would spin the loop.
      .where('endpoint_id', 'in', (sub) => sub.selectFrom('webhook_endpoints').select('id').where('status', '=', 'enabled'))
      .executeTakeFirst()
      .catch(() => undefined);
    if (row?.next === null || row?.next === undefined) return this.pollMs;
    return Math.max(0, Math.min(this.pollMs, Number(row.next) - this.now()));
  }

  /** Waits for a wake-up (new work, a finished send) or the poll interval; always a real timer. */
  private sleep(ms: number, options: { unwoken?: boolean } = {}): Promise<void> {
    if (this.woken && !options.unwoken) ms = 0;
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wakeUp = undefined;
        resolve();
      }
      // Stopping still ends the wait.
      this.wakeUp = options.unwoken ? () => (self.running ? undefined : done()) : done;
    });
  }
}
