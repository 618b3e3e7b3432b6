import type { FastifyInstance } from 'fastify';
import client from 'prom-client';
import type { Db } from '../db/engine.js';
import { ORDER_STATUSES } from '../domain/order-status.js';
import { watcherStatus } from '../deposits/status.js';
import { countOrdersByModeAndStatus, pendingQueue } from '../orders/order-store.js';
import { outboxBacklog } from '../webhooks/outbox.js';
import { outboxStatus } from '../notifications/outbox.js';
import { RequestDurations } from './request-durations.js';

/**
 * Prometheus metrics. Each service instance has its own registry (tests run several in one
 * process). Order gauges are read from the database at scrape time, so every node — API or
 * worker — reports the same queue, wherever the orders were created.
 */
export class ServiceMetrics {
  readonly registry = new client.Registry();
  private readonly requestDurations = new RequestDurations(this.registry);
  readonly fulfilmentDuration = new client.Histogram({
    name: 'starport_fulfilment_duration_seconds',
    help: 'Time from order creation to its final state, by mode and final status',
    labelNames: ['mode', 'status'] as const,
    buckets: [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900],
    registers: [this.registry],
  });

  /** Times this process opened the live circuit breaker, by reason (alert on any increase). */
  readonly liveBreakerOpened = new client.Counter({
    name: 'starport_live_breaker_opened_total',
    help: 'Times this process paused live fulfilment (circuit breaker opened), by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly liveUpstreamErrors = new client.Counter({
    name: 'starport_live_upstream_errors_total',
    help: 'Fragment errors met by live fulfilment in this process, by code',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });

  readonly walletPaymentsSent = new client.Counter({
    name: 'starport_wallet_payments_sent_total',
    help: 'Order payments signed and broadcast by the paying wallet in this process',
    registers: [this.registry],
  });
  readonly walletPaymentsConfirmed = new client.Counter({
    name: 'starport_wallet_payments_confirmed_total',
    help: 'Order payments confirmed on chain (own out message found) by this process',
    registers: [this.registry],
  });
  readonly walletPaymentsHeld = new client.Counter({
    name: 'starport_wallet_payments_held_total',
    help: 'Order payments held for review (unconfirmed after valid_until + margin; alert on any increase)',
    registers: [this.registry],
  });
  readonly walletConfirmation = new client.Histogram({
    name: 'starport_wallet_confirmation_seconds',
    help: 'Time from signing a wallet transfer to finding it on chain',
    buckets: [1, 2, 5, 10, 20, 30, 60, 120, 300],
    registers: [this.registry],
  });

  /** The paying wallet's metric hooks (src/live/wallet). */
  walletHooks() {
    return {
      onSent: (orders: number) => this.walletPaymentsSent.inc(orders),
      onConfirmed: (orders: number, seconds: number) => {
        this.walletPaymentsConfirmed.inc(orders);
        this.walletConfirmation.observe(seconds);
      },
      onHeld: (orders: number) => this.walletPaymentsHeld.inc(orders),
    };
  }

  /**
   * starport_live_paused: 1 while live fulfilment is paused, by the (shared) circuit breaker or
   * the operator; starport_live_paused_by_operator: 1 while the operator's maintenance pause
   * holds it (an alert on an upstream pause leaves these out). Read at scrape time.
   */
  watchLive(status: () => Promise<{ status: string; paused_by?: string }>): void {
    new client.Gauge({
      name: 'starport_live_paused',
      help: '1 while live fulfilment is paused, by the circuit breaker or the operator (new live orders answer 503)',
      registers: [this.registry],
      async collect() {
        this.set((await status()).status === 'paused' ? 1 : 0);
      },
    });
    new client.Gauge({
      name: 'starport_live_paused_by_operator',
      help: "1 while live fulfilment is paused by the operator's maintenance pause (starport live pause)",
      registers: [this.registry],
      async collect() {
        this.set((await status()).paused_by === 'operator' ? 1 : 0);
      },
    });
  }

  /** Notification attempts of this process: sent, kept (no SMTP_URL), failed (for good), retry. */
  readonly notificationAttempts = new client.Counter({
    name: 'starport_notification_attempts_total',
    help: 'Notification send attempts by channel and outcome (sent, kept, failed: given up, retry: will be tried again)',
    labelNames: ['channel', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookDeliveries = new client.Counter({
    name: 'starport_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome (succeeded: a 2xx answer)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  /** `depositAddress`: the deposit wallet (raw form) when live top-ups are configured. */
  constructor(db: Db, options: { depositAddress?: string } = {}) {
    client.collectDefaultMetrics({ register: this.registry, prefix: 'starport_' });
    if (options.depositAddress) this.depositGauges(db, options.depositAddress);
    new client.Gauge({
      name: 'starport_orders',
      help: 'Orders by mode and status',
      labelNames: ['mode', 'status'] as const,
      registers: [this.registry],
      async collect() {
        const counts = await countOrdersByModeAndStatus(db.kysely);
        this.reset();
        for (const mode of ['live', 'test']) for (const status of ORDER_STATUSES) this.set({ mode, status }, 0);
        for (const { mode, status, count } of counts) this.set({ mode, status }, count);
      },
    });
    new client.Gauge({
      name: 'starport_webhook_outbox_backlog',
      help: 'Webhook messages waiting to be delivered (pending, to enabled endpoints)',
      registers: [this.registry],
      async collect() {
        this.set(await outboxBacklog(db.kysely));
      },
    });
    new client.Gauge({
      name: 'starport_notification_backlog',
      help: 'Notifications waiting to be sent, by channel (operator: alerts not yet fanned out)',
      labelNames: ['channel'] as const,
      registers: [this.registry],
      async collect() {
        const { backlog } = await outboxStatus(db.kysely);
        for (const [channel, n] of Object.entries(backlog)) this.set({ channel }, n);
      },
    });
    new client.Gauge({
      name: 'starport_queue_depth',
      help: 'Orders waiting in fulfillment_pending',
      registers: [this.registry],
      async collect() {
        this.set((await pendingQueue(db.kysely)).depth);
      },
    });
    new client.Gauge({
      name: 'starport_queue_oldest_pending_age_seconds',
      help: 'Age of the oldest order still in fulfillment_pending (0 when none)',
      registers: [this.registry],
      async collect() {
        const { oldestCreatedAt } = await pendingQueue(db.kysely);
        this.set(oldestCreatedAt === null ? 0 : (Date.now() - oldestCreatedAt) / 1000);
      },
    });
  }

  /** Read from the database at scrape time, like the order gauges: any node reports the watcher. */
  private depositGauges(db: Db, rawAddress: string): void {
    new client.Gauge({
      name: 'starport_deposit_watcher_lag_seconds',
      help: 'Now minus the block time of the newest deposit-wallet transaction the watcher processed (absent until the first one)',
      registers: [this.registry],
      async collect() {
        const { lagSeconds } = await watcherStatus(db.kysely, rawAddress);
        this.reset();
        if (lagSeconds !== null) this.set(lagSeconds);
      },
    });
    new client.Gauge({
      name: 'starport_deposit_watcher_checked_age_seconds',
      help: 'Seconds since a deposit watcher poll last reached the newest transaction of the deposit wallet (absent until the first one)',
      registers: [this.registry],
      async collect() {
        const { lastCheckedAt } = await watcherStatus(db.kysely, rawAddress);
        this.reset();
        if (lastCheckedAt !== null) this.set(Math.max(0, (Date.now() - lastCheckedAt) / 1000));
      },
    });
    new client.Gauge({
      name: 'starport_deposits_unmatched',
      help: 'Deposits waiting for the operator (deposit list --unmatched)',
      registers: [this.registry],
      async collect() {
        this.set((await watcherStatus(db.kysely, rawAddress)).unmatched);
      },
    });
  }

  /**
   * Times every request; the route label is the route pattern, never the raw URL (ids). Call
   * it before any route is registered.
   */
  instrument(app: FastifyInstance): void {
    this.requestDurations.instrument(app);
  }

  routes(app: FastifyInstance): void {
    app.get('/metrics', async (_request, reply) => {
      reply.header('Content-Type', this.registry.contentType);
      return this.registry.metrics();
    });
  }
}
