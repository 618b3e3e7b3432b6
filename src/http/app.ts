import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import { newId } from '../domain/random.js';
import type { ApiContext } from './api/context.js';
import { apiPlugin, BODY_LIMIT_BYTES } from './api/plugin.js';
import { handleError, handleNotFound } from './errors.js';
import { healthRoutes } from './health.js';
import type { ServiceMetrics } from './metrics.js';
import type { Db } from '../db/engine.js';

export interface AppOptions {
  db: Db;
  metrics: ServiceMetrics;
  /** The /api/v1 routes; absent on worker nodes, which serve health and metrics only. */
  api?: ApiContext;
  logger: Logger;
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: options.logger,
    genReqId: () => newId('req'),
    // Request ids are ours; a client-sent header must not become the id in our logs.
    requestIdHeader: false,
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    bodyLimit: BODY_LIMIT_BYTES,
    // The contract validates strictly: "100" is not 100, and unknown fields are rejected
    // rather than silently dropped. allErrors lets the error mapper pick the first failing
    // check in the contract's order.
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: true } },
  }) as unknown as FastifyInstance;

  app.addHook('onRequest', async (request, reply) => {
    reply.header('Request-Id', request.id);
  });
  app.setErrorHandler(handleError);
  app.setNotFoundHandler(handleNotFound);

  options.metrics.instrument(app);
  healthRoutes(app, options.db);
  options.metrics.routes(app);
  const { api } = options;
  if (api) await app.register(async (scope) => apiPlugin(scope, api), { prefix: '/api/v1' });
  return app;
}
