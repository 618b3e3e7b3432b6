import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Logger } from 'pino';
import { ApiError } from '../domain/api-error.js';
import { newId } from '../domain/random.js';
import type { ApiContext } from './api/context.js';
import { ApiReference } from './api/openapi/document.js';
import { referenceRoutes } from './api/openapi/routes.js';
import { apiPlugin, BODY_LIMIT_BYTES } from './api/plugin.js';
import { clientErrorHandler } from './client-error.js';
import { handleError, handleNotFound } from './errors.js';
import { errorForBrowsers, notFoundForBrowsers } from './web/pages/error.js';
import { healthRoutes } from './health.js';
import type { ServiceMetrics } from './metrics.js';
import type { WebContext } from './web/context.js';
import { webPlugin } from './web/plugin.js';
import { lazyChildLogger } from './request-logger.js';
import { guardServer, nodeServerOptions } from './server-limits.js';
import { ApiRouteIndex, fromApiClient } from './route-hints.js';
import { type HttpLimits, httpLimits, type TrustProxy } from '../config.js';
import type { Db } from '../db/engine.js';

const API_PREFIX = '/api/v1';

export interface AppOptions {
  db: Db;
  metrics: ServiceMetrics;
  /** The /api/v1 routes; absent on worker nodes, which serve health and metrics only. */
  api?: ApiContext;
  trustProxy?: TrustProxy;
  /** The client dashboard at / (src/http/web); absent on worker nodes too. */
  web?: WebContext;
  logger: Logger;
  /** Live fulfilment's state for /readyz (available, paused by the breaker, not configured). */
  liveStatus?: () => Promise<unknown>;
  /** The deposit wallet (raw form) when live top-ups are configured: /readyz reports its watcher. */
  depositAddress?: string;
  /** Time limits and connection cap (HEADERS_TIMEOUT_MS …); the defaults of loadConfig when absent. */
  limits?: HttpLimits;
}

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const limits = options.limits ?? httpLimits({});
  const { engine } = options.db;
  // With the dashboard on, browsers get its pages for unknown URLs and unreadable requests
  // outside /api; API clients always get the contract's JSON error.
  const apiRoutes = new ApiRouteIndex(API_PREFIX);
  const hint = (request: FastifyRequest) => (options.api ? apiRoutes.suggestion(request.method, request.url.split('?')[0] ?? '') : undefined);
  const { web } = options;
  const notFound = (request: FastifyRequest, reply: FastifyReply) =>
    web ? notFoundForBrowsers(web.brand, request, reply, hint(request)) : handleNotFound(request, reply, hint(request));
  const onError = web
    ? (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => errorForBrowsers(web.brand, error, request, reply, engine)
    : (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => handleError(error, request, reply, engine);
  const app = Fastify({
    loggerInstance: options.logger,
    genReqId: () => newId('req'),
    // A request's logger is made when it first logs (request-logger.ts).
    childLoggerFactory: lazyChildLogger,
    // Request ids are ours; a client-sent header must not become the id in our logs.
    requestIdHeader: false,
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    bodyLimit: BODY_LIMIT_BYTES,
    // Slow clients (docs/operations.md "Slow and hostile clients"): the headers, the whole
    // request, an idle keep-alive connection and a connection making no progress at all each
    // have a time limit; a request cut by one is answered 408 (client-error.ts).
    http: nodeServerOptions(limits),
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionTimeout: limits.requestTimeoutMs,
    // Any id reaches the route and its contract answer (404 order_not_found), however long;
    // Node's header size limit still bounds the URL.
    routerOptions: { maxParamLength: 16 * 1024 },
    // TRUST_PROXY: the client's address and scheme come from the proxy's X-Forwarded-* headers.
    trustProxy: options.trustProxy ?? false,
    // The contract validates strictly: "100" is not 100, and unknown fields are rejected
    // rather than silently dropped. allErrors lets the error mapper pick the first failing
    // check in the contract's order.
    // Requests Node cannot parse get a contract error body too (client-error.ts).
    clientErrorHandler,
    // So do URLs the router cannot decode (a bad percent-escape, invalid UTF-8): Fastify would
    // answer them itself, before any hook, with its own body and no Request-Id.
    frameworkErrors: (error, request, reply) => {
      reply.header('Request-Id', request.id);
      return onError(error, request, reply);
    },
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: true } },
  }) as unknown as FastifyInstance;

  // An https PUBLIC_URL makes the dashboard's cookies Secure and sends HSTS (web/http.ts).
  app.decorate('httpsOrigin', options.web?.publicUrl?.startsWith('https:') ?? false);

  // The connection cap and what Node answers outside Fastify (CONNECT, an unknown Expect).
  guardServer(app.server, limits, app.log);

  // Hooks on every request take Fastify's callback form: an async hook costs a promise and its
  // resolution per request (docs/performance-history.md "Fourth round").
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('Request-Id', request.id);
    // HTTP/1.1 requires Host (RFC 9112 3.2); Node would refuse its absence with an empty 400.
    if (request.raw.headers.host === undefined && request.raw.httpVersion === '1.1') {
      void handleError(new ApiError('invalid_request', 'The Host header is missing.'), request, reply);
      return;
    }
    // An unknown route answers 404 before anything else, its body unread (docs/api.md "Order of checks");
    // Fastify would otherwise parse the body first. Replying ends the hook chain.
    if (request.is404) void notFound(request, reply);
    // An API client on a dashboard page that shares an API path (GET /balance without /api/v1)
    // gets the API's 404 naming the path, not a redirect to the login page.
    else {
      const meant = options.web && !request.url.startsWith('/api/') && fromApiClient(request) ? hint(request) : undefined;
      if (meant) void handleNotFound(request, reply, meant);
      else done();
    }
  });
  app.setErrorHandler(onError);
  app.setNotFoundHandler(notFound);

  options.metrics.instrument(app);
  healthRoutes(app, options.db, { depositAddress: options.depositAddress, liveStatus: options.liveStatus });
  options.metrics.routes(app);
  const { api } = options;
  if (api) {
    // One reference for the /api/v1 routes: GET /api/v1/openapi.json, /api/v1/docs and /docs.
    const reference = new ApiReference(api.publicUrl, api.brand);
    app.addHook('onRoute', apiRoutes.add);
    await app.register(async (scope) => apiPlugin(scope, api, reference), { prefix: API_PREFIX });
    referenceRoutes(app, reference, { openapi: false });
  }
  if (options.web) await app.register(webPlugin, options.web);
  return app;
}
