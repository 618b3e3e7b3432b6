import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Role } from './roles.js';
import type { Db, Unsubscribe } from './db/engine.js';
import { openConfiguredDatabase } from './db/open.js';
import type { ApiContext } from './http/api/context.js';
import { RateLimiter } from './http/api/rate-limit.js';
import { buildApp } from './http/app.js';
import { buildConsoleApp } from './http/console/app.js';
import { walletChainReport } from './live/wallet/report.js';
import { liveCheckReport } from './operator/live-check.js';
import { usdtRateFrom } from './deposits/usdt-rate.js';
import { ServiceMetrics } from './http/metrics.js';
import { IdempotencyGate } from './orders/idempotency-gate.js';
import { testFulfilmentStep } from './orders/test-fulfilment.js';
import { Live } from './live/live.js';
import { testRecipientDirectory } from './providers/simulated/test-recipients.js';
import type { FixedRateFeed } from './providers/pricing/list-price-source.js';
import type { RateFeed } from './providers/ports.js';
import { FulfilmentWorker } from './workers/fulfilment-worker.js';
import type { DepositWatcher } from './deposits/watcher.js';
import { rawAddressForm } from './domain/ton-address.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import { DatabaseWatch } from './notifications/database-watch.js';
import { NotificationWorker } from './notifications/worker.js';
import { SmtpTransport } from './notifications/smtp.js';
import { TelegramBot } from './notifications/telegram.js';

export interface RunningService {
  app: FastifyInstance;
  db: Db;
  worker: FulfilmentWorker | undefined;
  /** Live mode: Fragment client, circuit breaker, live prices and checks. */
  live: Live;
  /** The deposit watcher: on worker nodes when DEPOSIT_ADDRESS is set. */
  deposits: DepositWatcher | undefined;
  webhooks: WebhookDispatcher | undefined;
  /** The notification outbox's sender (worker role). */
  notifications: NotificationWorker | undefined;
  /** http://HOST:PORT as bound. */
  url: string;
  /** The operator console on its own listener (OPERATOR_PORT set, API roles): its server and http://OPERATOR_HOST:PORT as bound. */
  console: { app: FastifyInstance; url: string } | undefined;
  /** The TON/USD rate feed the API prices with (TON_USD_RATE); tests move it at run time. */
  rateFeed: FixedRateFeed;
  stop(): Promise<void>;
}

/**
 * The composition root: database, adapters, worker and HTTP server for `serve`. Live orders
 * are taken once Fragment and the wallet are configured and the circuit breaker is closed
 * (src/live); until a wallet sender exists they wait with their payment request stored.
 */
export async function startService(config: Config, logger: Logger, role: Role = 'all'): Promise<RunningService> {
  // The long-running service checkpoints off the event loop; short CLI commands need not.
  const db = await openConfiguredDatabase(config, {
    backgroundCheckpoints: true,
    for: 'serve',
    logger,
    onWaiting: (reason) => logger.warn({ reason }, 'the database cannot be reached yet; still trying'),
  });
  const depositRaw = config.depositAddress ? rawAddressForm(config.depositAddress) : undefined;
  const metrics = new ServiceMetrics(db, { depositAddress: depositRaw });
  const live = new Live(config, db, logger, {
    onBreakerOpen: (reason) => metrics.liveBreakerOpened.inc({ reason }),
    onUpstreamError: (e) => metrics.liveUpstreamErrors.inc({ code: e.code }),
    wallet: metrics.walletHooks(),
  });
  try {
    await live.validate();
  } catch (error) {
    await db.close();
    throw error;
  }
  metrics.watchLive(() => live.status());
  const worker = role === 'api' ? undefined : createWorker(config, db, logger, metrics, live);
  const deposits = role === 'api' ? undefined : await createDepositWatcher(config, db, logger, live.tonUsdFeed);
  let boundUrl = '';
  const webhooks = role === 'api' ? undefined : createDispatcher(config, db, logger, metrics, () => publicOrigin(config, boundUrl));
  const notifications = role === 'api' ? undefined : createNotificationWorker(config, db, logger, metrics, depositRaw);
  // Without a notification worker, nothing else would tell the operator this node lost its database.
  const databaseWatch = role === 'api' ? new DatabaseWatch(db, logger.child({ component: 'database-watch' })) : undefined;
  const api =
    role === 'worker'
      ? undefined
      : apiContext(
          config,
          db,
          live,
          (request?: ForwardedRequest) => publicOrigin(config, boundUrl, request),
          () => worker?.wake(),
        );
  let stopListening: Unsubscribe | undefined;
  let app: FastifyInstance | undefined;
  let consoleApp: FastifyInstance | undefined;
  try {
    const web =
      role === 'worker'
        ? undefined
        : {
            db,
            brand: config.brand,
            signup: config.signup,
            depositAddress: config.depositAddress,
            tonNetwork: config.tonNetwork,
            usdt: config.usdt,
            publicUrl: config.publicUrl,
            linkOrigin: () => publicOrigin({ publicUrl: config.publicUrl, trustProxy: false }, boundUrl),
            webhooks: config.webhooks,
            prices: live.prices,
            notifications: notificationsForWeb(config),
          };
    app = await buildApp({ logger, db, metrics, api, web, trustProxy: config.trustProxy, limits: config.http, liveStatus: () => live.status(), depositAddress: depositRaw });
    await app.listen({ port: config.port, host: config.host });
    // The operator console: its own server and listener, never the public one (docs/operations.md "Operator console").
    if (role !== 'worker' && config.operator.port !== undefined) {
      consoleApp = await buildConsoleApp({
        ctx: {
          db,
          depositAddress: depositRaw,
          liveStatus: () => live.status(),
          breaker: () => live.breaker.read(),
          wallet: () => walletChainReport(config),
          liveCheck: () => liveCheckReport(db, config),
          usdtConversion: async () => ({ rate: await usdtRateFrom(live.tonUsdFeed)(), spreadPercent: config.usdt.spreadPercent }),
          publicUrl: config.publicUrl,
          tonNetwork: config.tonNetwork,
          feeAllowance: config.live.feeAllowance,
        },
        logger,
        trustProxy: config.trustProxy,
      });
      await consoleApp.listen({ port: config.operator.port, host: config.operator.host });
    }
    // Orders created by other processes (API nodes) wake this one's worker at once.
    if (worker) {
      stopListening = await db.onQueued(() => {
        worker.wake();
        webhooks?.wake();
        notifications?.wake();
      });
    }
  } catch (error) {
    await consoleApp?.close();
    await app?.close();
    await db.close();
    throw error;
  }
  boundUrl = urlOf(app);
  const consoleServer = consoleApp && { app: consoleApp, url: urlOf(consoleApp) };
  worker?.start();
  if (worker) db.setGroupFinisher?.((tx) => worker.stepDueIn(tx));
  // Workers probe the paused upstream after each cool-down (one process wins each probe).
  if (worker) live.startProbing();
  deposits?.start();
  webhooks?.start();
  notifications?.start();
  databaseWatch?.start();
  if (notifications && config.notifications.telegram?.webhookSecret) void registerTelegramWebhook(config, logger, () => publicOrigin(config, boundUrl));

  let stopping: Promise<void> | undefined;
  const server = app;
  const stop = () => {
    stopping ??= (async () => {
      db.setGroupFinisher?.(undefined);
      // The HTTP server drains while the workers stop claiming and give back the leases of
      // work they have not started: another node can take that work while this one drains.
      const failed = await settleAll(logger, {
        'http server': closeServer(server),
        'operator console': consoleServer && closeServer(consoleServer.app),
        worker: worker?.stop(),
        'webhook dispatcher': webhooks?.stop(),
        'notification worker': notifications?.stop(),
        'database watch': databaseWatch?.stop(),
        'deposit watcher': deposits?.stop(),
        live: live.stop(),
      });
      failed.push(...(await settleAll(logger, { 'notification listener': stopListening?.() })));
      failed.push(...(await settleAll(logger, { database: db.close() })));
      if (failed.length > 0) throw new Error(`shutdown incomplete: ${failed.join(', ')} failed`);
    })();
    return stopping;
  };
  return { app: server, db, worker, live, deposits, webhooks, notifications, url: boundUrl, console: consoleServer, rateFeed: live.fixedRate, stop };
}

/** http://host:port as a listening server bound it. */
function urlOf(app: FastifyInstance): string {
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/** How often a closing server looks for keep-alive connections that its last response left idle. */
const IDLE_SWEEP_MS = 100;

/**
 * Stops accepting and waits for the requests in flight. Fastify closes the connections idle at
 * that moment; a connection whose request finishes later would stay open until the client
 * or the keep-alive timeout (72 s) ends it, holding the shutdown, so those are closed as they
 * go idle. New requests on them meanwhile get a 503 (Fastify's return503OnClosing).
 */
async function closeServer(app: FastifyInstance): Promise<void> {
  const sweep = setInterval(() => app.server.closeIdleConnections(), IDLE_SWEEP_MS);
  try {
    await app.close();
  } finally {
    clearInterval(sweep);
  }
}

/** Waits for every part's stop; logs each one that failed and returns their names. */
async function settleAll(logger: Logger, parts: Record<string, Promise<unknown> | undefined>): Promise<string[]> {
  const names = Object.keys(parts);
  const results = await Promise.allSettled(Object.values(parts));
  const failed: string[] = [];
  results.forEach((result, i) => {
    if (result.status === 'fulfilled') return;
    failed.push(names[i] as string);
    logger.warn({ err: result.reason, part: names[i] }, 'shutdown: stopping a part failed');
  });
  return failed;
}

function createDispatcher(config: Config, db: Db, logger: Logger, metrics: ServiceMetrics, publicUrl: () => string): WebhookDispatcher {
  const { webhooks } = config;
  return new WebhookDispatcher({
    db,
    logger,
    policy: { allowLoopback: webhooks.allowLoopback, dnsServers: webhooks.dnsServers },
    timeoutMs: webhooks.timeoutMs,
    retryDelaysMs: webhooks.retryDelaysMs,
    disableAfterMs: webhooks.disableAfterMs,
    // A claim outlives the attempt it covers, so no second worker sends the same attempt.
    leaseMarginMs: Math.min(config.workerLeaseMs, 5_000),
    publicUrl,
    onAttempt: (outcome) => metrics.webhookDeliveries.inc({ outcome }),
  });
}

function createNotificationWorker(config: Config, db: Db, logger: Logger, metrics: ServiceMetrics, depositAddress: string | undefined): NotificationWorker {
  const { notifications } = config;
  const { smtp, telegram } = notifications;
  return new NotificationWorker({
    db,
    logger: logger.child({ component: 'notifications' }),
    config: notifications,
    mail: smtp ? new SmtpTransport(smtp, notifications.mailFrom, notifications.sendTimeoutMs) : undefined,
    telegram: telegram ? new TelegramBot(telegram.apiUrl, telegram.token) : undefined,
    depositAddress,
    brand: config.brand,
    onAttempt: (channel, outcome) => metrics.notificationAttempts.inc({ channel, outcome }),
  });
}

/** What the dashboard needs of the notification settings: the bot (deep links, the test button), the webhook secret. */
function notificationsForWeb(config: Config) {
  const { telegram, smtp } = config.notifications;
  return {
    telegram: telegram ? new TelegramBot(telegram.apiUrl, telegram.token) : undefined,
    telegramWebhookSecret: telegram?.webhookSecret,
    emailConfigured: smtp !== undefined,
  };
}

/** TELEGRAM_WEBHOOK_SECRET: updates come to PUBLIC_URL/telegram/webhook (setWebhook, on each worker start). */
async function registerTelegramWebhook(config: Config, logger: Logger, origin: () => string): Promise<void> {
  const telegram = config.notifications.telegram;
  if (!telegram?.webhookSecret) return;
  try {
    await new TelegramBot(telegram.apiUrl, telegram.token).setWebhook(`${origin()}/telegram/webhook`, telegram.webhookSecret);
  } catch (error) {
    logger.error({ err: { message: (error as Error).message } }, 'telegram setWebhook failed: chats cannot be linked until it succeeds (restart the worker)');
  }
}

/**
 * Live top-ups, when DEPOSIT_ADDRESS is set. Loaded on demand: @ton/core's full
 * library costs a few hundred ms that the CLI's other commands need not pay.
 */
async function createDepositWatcher(config: Config, db: Db, logger: Logger, rates: RateFeed): Promise<DepositWatcher | undefined> {
  if (!config.depositAddress) return undefined;
  const [{ DepositWatcher, usdtRateFrom }, { ToncenterClient }] = await Promise.all([import('./deposits/watcher.js'), import('./ton/toncenter.js')]);
  const { master, spreadPercent, minUnits } = config.usdt;
  return new DepositWatcher({
    ...(master && { usdt: { master, spreadPercent, minUnits, rate: usdtRateFrom(rates) } }),
    db,
    logger: logger.child({ component: 'deposit-watcher' }),
    client: new ToncenterClient({ baseUrl: config.tonApiUrl, apiKey: config.tonApiKey }),
    address: config.depositAddress,
    minAmount: config.depositMinNanotons,
    pollMs: config.depositPollMs,
  });
}

function createWorker(config: Config, db: Db, logger: Logger, metrics: ServiceMetrics, live: Live): FulfilmentWorker {
  return new FulfilmentWorker({
    db,
    logger,
    leaseMs: config.workerLeaseMs,
    concurrency: config.live.workerConcurrency,
    steps: { live: live.step() },
    transactionalSteps: { test: testFulfilmentStep({ delayMs: config.testFulfilmentDelayMs, slowDelayMs: config.testSlowDelayMs }) },
    onFinal: (order, status) => metrics.fulfilmentDuration.observe({ mode: order.mode, status }, (Date.now() - order.createdAt) / 1000),
  });
}

/** What a Fastify request tells about the origin the client used (X-Forwarded-* under TRUST_PROXY). */
export interface ForwardedRequest {
  protocol: string;
  host: string;
}

/**
 * The origin of status_url (docs/api.md "Orders and statuses": PUBLIC_URL, by default the address the server bound).
 * Behind a trusted reverse proxy (TRUST_PROXY) the bound address means nothing to clients, so
 * when a route passes its request the default becomes the scheme and host the client used.
 */
export function publicOrigin(config: Pick<Config, 'publicUrl' | 'trustProxy'>, boundUrl: string, request?: ForwardedRequest): string {
  if (config.publicUrl) return config.publicUrl;
  if (config.trustProxy !== false && request?.host) return `${request.protocol}://${request.host}`;
  return boundUrl;
}

function apiContext(config: Config, db: Db, live: Live, publicUrl: ApiContext['publicUrl'], wakeWorker: () => void): ApiContext {
  const prices = live.prices;
  return {
    db,
    prices,
    directories: { test: testRecipientDirectory, live: live.directory },
    quoteTtlSeconds: config.quoteTtlSeconds,
    rateLimiter: rateLimiter(config),
    publicUrl,
    orders: { db, prices, gate: new IdempotencyGate(), liveAvailable: () => live.available(), onCreated: wakeWorker },
    deposits: config.depositAddress ? { address: config.depositAddress, network: config.tonNetwork } : undefined,
    webhooks: config.webhooks,
    signupVerify: config.signupVerify,
    brand: config.brand,
  };
}

/**
 * Each API node enforces its share of the per-key limit (RATE_LIMIT_NODES nodes behind one
 * balancer): no shared state and no database write per request.
 */
function rateLimiter(config: Config): RateLimiter | undefined {
  if (config.rateLimitRps === 0) return undefined;
  const nodes = config.rateLimitNodes;
  return new RateLimiter(config.rateLimitRps / nodes, Math.max(1, Math.floor(config.rateLimitBurst / nodes)));
}
