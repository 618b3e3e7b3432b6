import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Db } from './db/engine.js';
import { openConfiguredDatabase } from './db/open.js';
import { buildApp } from './http/app.js';
import { RateLimiter } from './http/api/rate-limit.js';
import { IdempotencyGate } from './orders/idempotency-gate.js';
import { testFulfilmentStep } from './orders/test-fulfilment.js';
import { FixedRateFeed, ListPriceSource } from './providers/pricing/list-price-source.js';
import { testRecipientDirectory } from './providers/simulated/test-recipients.js';
import { FulfilmentWorker } from './workers/fulfilment-worker.js';

export interface RunningService {
  app: FastifyInstance;
  db: Db;
  worker: FulfilmentWorker;
  /** http://HOST:PORT as bound. */
  url: string;
  stop(): Promise<void>;
}

/**
 * The composition root: database, adapters, worker and HTTP server for `serve`. Live mode has
 * no fulfiller yet, so live order creation and live recipient checks answer 503.
 */
export async function startService(config: Config, logger: Logger): Promise<RunningService> {
  const db = await openConfiguredDatabase(config);
  const prices = new ListPriceSource(config.prices, new FixedRateFeed(config.tonUsdRate));
  const worker = new FulfilmentWorker({
    db,
    logger,
    steps: { test: testFulfilmentStep(db.kysely, { delayMs: config.testFulfilmentDelayMs, slowDelayMs: config.testSlowDelayMs }) },
  });
  let boundUrl = '';
  const app = await buildApp({
    logger,
    api: {
      db,
      prices,
      directories: { test: testRecipientDirectory },
      quoteTtlSeconds: config.quoteTtlSeconds,
      rateLimiter: config.rateLimitRps > 0 ? new RateLimiter(config.rateLimitRps, config.rateLimitBurst) : undefined,
      publicUrl: () => config.publicUrl ?? boundUrl,
      orders: { db, prices, gate: new IdempotencyGate(), liveAvailable: () => false, onCreated: () => worker.wake() },
    },
  });
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await db.close();
    throw error;
  }
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  boundUrl = `http://${host}:${address.port}`;
  worker.start();

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await app.close();
      await worker.stop();
      await db.close();
    })();
    return stopping;
  };
  return { app, db, worker, url: boundUrl, stop };
}
