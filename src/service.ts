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
import { ServiceMetrics } from './http/metrics.js';
import { IdempotencyGate } from './orders/idempotency-gate.js';
import { testFulfilmentStep } from './orders/test-fulfilment.js';
import { FixedRateFeed, ListPriceSource } from './providers/pricing/list-price-source.js';
import { testRecipientDirectory } from './providers/simulated/test-recipients.js';
import { FulfilmentWorker } from './workers/fulfilment-worker.js';



export interface RunningService {
  app: FastifyInstance;
  db: Db;
  worker: FulfilmentWorker | undefined;
  /** http://HOST:PORT as bound. */
  url: string;
  /** The TON/USD rate feed the API prices with (TON_USD_RATE); tests move it at run time. */
  rateFeed: FixedRateFeed;
  stop(): Promise<void>;
}

/**
 * The composition root: database, adapters, worker and HTTP server for `serve`. Live mode has
 * no fulfiller yet, so live order creation and live recipient checks answer 503.
 */
export async function startService(config: Config, logger: Logger, role: Role = 'all'): Promise<RunningService> {
  const db = await openConfiguredDatabase(config);
  const metrics = new ServiceMetrics(db);
  const worker = role === 'api' ? undefined : createWorker(config, db, logger, metrics);
  let boundUrl = '';
  const rateFeed = new FixedRateFeed(config.tonUsdRate);
  const api = role === 'worker' ? undefined : apiContext(config, db, rateFeed, (request?: ForwardedRequest) => publicOrigin(config, boundUrl, request), () => worker?.wake());
  let stopListening: Unsubscribe | undefined;
  let app: FastifyInstance | undefined;
  try {
    const web = role === 'worker' ? undefined : { db, signup: config.signup, depositAddress: config.depositAddress, publicUrl: config.publicUrl };
    app = await buildApp({ logger, db, metrics, api, web, trustProxy: config.trustProxy });
    await app.listen({ port: config.port, host: config.host });
    // Orders created by other processes (API nodes) wake this one's worker at once.
    if (worker) stopListening = await db.onQueued(() => worker.wake());
  } catch (error) {
    await app?.close();
    await db.close();
    throw error;
  }
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  boundUrl = `http://${host}:${address.port}`;
  worker?.start();

  let stopping: Promise<void> | undefined;
  const server = app;
  const stop = () => {
    stopping ??= (async () => {
      await server.close();
      await stopListening?.();
      await worker?.stop();
      await db.close();
    })();
    return stopping;
  };
  return { app: server, db, worker, url: boundUrl, rateFeed, stop };
}

function createWorker(config: Config, db: Db, logger: Logger, metrics: ServiceMetrics): FulfilmentWorker {
  return new FulfilmentWorker({
    db,
    logger,
    leaseMs: config.workerLeaseMs,
    steps: { test: testFulfilmentStep(db.kysely, { delayMs: config.testFulfilmentDelayMs, slowDelayMs: config.testSlowDelayMs }) },
    onFinal: (order, status) => metrics.fulfilmentDuration.observe({ mode: order.mode, status }, (Date.now() - order.createdAt) / 1000),
  });
}

/** What a Fastify request tells about the origin the client used (X-Forwarded-* under TRUST_PROXY). */
export interface ForwardedRequest {
  protocol: string;
  host: string;
}

/**
 * The origin of status_url (CONTRACT: PUBLIC_URL, by default the address the server bound).
 * Behind a trusted reverse proxy (TRUST_PROXY) the bound address means nothing to clients, so
 * when a route passes its request the default becomes the scheme and host the client used.
 */
export function publicOrigin(config: Pick<Config, 'publicUrl' | 'trustProxy'>, boundUrl: string, request?: ForwardedRequest): string {
  if (config.publicUrl) return config.publicUrl;
  if (config.trustProxy !== false && request?.host) return `${request.protocol}://${request.host}`;
  return boundUrl;
}

function apiContext(config: Config, db: Db, rateFeed: FixedRateFeed, publicUrl: ApiContext['publicUrl'], wakeWorker: () => void): ApiContext {
  const prices = new ListPriceSource(config.prices, rateFeed);
  return {
    db,
    prices,
    directories: { test: testRecipientDirectory },
    quoteTtlSeconds: config.quoteTtlSeconds,
    rateLimiter: rateLimiter(config),
    publicUrl,
    orders: { db, prices, gate: new IdempotencyGate(), liveAvailable: () => false, onCreated: wakeWorker },
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
