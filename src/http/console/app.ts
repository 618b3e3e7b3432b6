import { DEFAULT_BRAND } from '../../domain/brand.js';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Logger } from 'pino';
import { storedSecret } from '../../accounts/dashboard-secret.js';
import type { TrustProxy } from '../../config.js';
import { Outage } from '../../db/outage.js';
import { newId } from '../../domain/random.js';
import { findOperatorSession } from '../../operator/operator-sessions.js';
import { UNAVAILABLE_RETRY_AFTER_S } from '../errors.js';
import { ASSETS } from '../html/assets.js';
import { CsrfTokens } from '../html/csrf.js';
import { errorPage } from '../html/document.js';
import { cookieOptions, crossSite, field, pageHeaders, redirect, sendHtml } from '../html/http.js';
import { lazyChildLogger } from '../request-logger.js';
import { type Access, type Console, OPERATOR_COOKIE } from './console.js';
import type { ConsoleContext } from './context.js';
import { authRoutes } from './pages/auth.js';
import { homeRoutes } from './pages/home.js';
import { accountRoutes } from './pages/accounts.js';
import { orderRoutes } from './pages/orders.js';
import { depositRoutes } from './pages/deposits.js';
import { planRoutes } from './pages/plans.js';
import { auditRoutes } from './pages/audit.js';
import { liveRoutes } from './pages/live.js';

/** Console requests failed by an unavailable database: logged once as the outage begins. */
const consoleOutage = new Outage('operator console');

const HOME = { href: '/', label: 'Go to the console home' };

/** A route of the console and who may use it (the authorization matrix's rows, test/http/console-access.test.ts). */
export interface ConsoleRoute {
  method: string;
  url: string;
  access: Access;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route the console serves, with its access. */
    consoleRoutes: ConsoleRoute[];
  }
}

/**
 * The operator console (docs/operations.md "Operator console"): its own Fastify server on its
 * own listener (OPERATOR_HOST:OPERATOR_PORT), never the public one. Server-rendered pages with
 * the dashboard's shell, headers and CSP (src/http/html); its own people, cookie (sp_operator,
 * SameSite=Strict) and CSRF key. Every route declares its access; a route without one is a
 * start-up error, so none can be left open by mistake.
 */
export async function buildConsoleApp(options: { ctx: ConsoleContext; logger: Logger; trustProxy: TrustProxy }): Promise<FastifyInstance> {
  const { ctx } = options;
  const app = Fastify({
    loggerInstance: options.logger.child({ component: 'console' }),
    genReqId: () => newId('req'),
    childLoggerFactory: lazyChildLogger,
    requestIdHeader: false,
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    trustProxy: options.trustProxy,
  }) as unknown as FastifyInstance;
  app.decorate('httpsOrigin', false);
  app.decorate('consoleRoutes', [] as ConsoleRoute[]);
  app.decorateRequest('operatorSession', undefined);
  app.addHook('onRoute', (route) => {
    const access = (route.config as { access?: Access } | undefined)?.access;
    if (!access) throw new Error(`console route ${route.method} ${route.url} declares no access`);
    for (const method of [route.method].flat()) if (method !== 'HEAD') app.consoleRoutes.push({ method, url: route.url, access });
  });
  await app.register(cookie);
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  const csrf = new CsrfTokens(await storedSecret(ctx.db, 'operator_csrf_hmac_key'));

  app.addHook('onRequest', (request, reply, done) => {
    reply.header('Request-Id', request.id);
    done();
  });
  app.addHook('onSend', async (request, reply, payload) => {
    pageHeaders(request, reply);
    return payload;
  });

  app.setNotFoundHandler((_request, reply) => sendHtml(reply, errorPage(DEFAULT_BRAND, 404, 'Page not found', 'There is no console page at this address.', HOME), 404));
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (ctx.db.engine.isUnavailable(error)) {
      consoleOutage.failed(request.log, error);
      reply.header('Retry-After', String(UNAVAILABLE_RETRY_AFTER_S));
      return sendHtml(reply, errorPage(DEFAULT_BRAND, 503, 'Temporarily unavailable', 'The database cannot be reached. Nothing was changed: try again in a moment.', HOME), 503);
    }
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'console error');
    const page =
      status === 500
        ? errorPage(DEFAULT_BRAND, 500, 'Something went wrong', `The page could not be shown (reference ${request.id}).`, HOME)
        : errorPage(DEFAULT_BRAND, status, 'This request could not be read', 'Go back, check the form and try again.', HOME);
    return sendHtml(reply, page, status);
  });

  /** Access, before any handler: a signed-in operator for every non-public route, an admin for admin routes, the session's CSRF token on every form. */
  const guard = async (request: FastifyRequest, reply: FastifyReply) => {
    const access = request.routeOptions.config.access;
    if (access === 'public') return;
    const cookieValue = request.cookies[OPERATOR_COOKIE];
    const session = await findOperatorSession(ctx.db, cookieValue);
    if (session?.stage !== 'active') {
      if (cookieValue && !session) reply.clearCookie(OPERATOR_COOKIE, cookieOptions(request));
      if (session?.stage === 'enrol') return redirect(reply, '/enrol');
      if (session?.stage === 'second_factor') return redirect(reply, '/login/code');
      const next = request.method === 'GET' && request.url !== '/' ? `?next=${encodeURIComponent(request.url)}` : '';
      return redirect(reply, `/login${next}`);
    }
    request.operatorSession = session;
    if (access === 'admin' && session.role !== 'admin') {
      request.log.warn({ route: request.routeOptions.url, operator_id: session.operatorId }, 'console: an admin-only route refused to a support operator');
      return sendHtml(
        reply,
        errorPage(DEFAULT_BRAND, 403, 'Admins only', 'Your role (support) reads everything but does not move money or change settings. Ask an admin.', HOME),
        403,
      );
    }
    if (request.method === 'POST' && (crossSite(request) || !csrf.check(csrf.forSession(session.idHash), field(request.body, '_csrf')))) {
      request.log.warn({ route: request.routeOptions.url }, 'console form refused: CSRF token missing or wrong');
      return sendHtml(
        reply,
        errorPage(DEFAULT_BRAND, 403, 'This form has expired', 'For your security the form could not be accepted. Reload the page and submit it again.', HOME),
        403,
      );
    }
  };

  const web: Console = {
    ctx,
    csrf,
    get(path, access, handler) {
      app.get(path, { config: { access }, preHandler: guard }, handler);
    },
    post(path, access, handler) {
      app.post(path, { config: { access }, preHandler: guard }, handler);
    },
    session(request) {
      const session = request.operatorSession;
      if (!session) throw new Error('no console session on a signed-in route');
      return session;
    },
    token(request) {
      return csrf.forSession(web.session(request).idHash);
    },
  };

  app.get('/assets/:name', { config: { access: 'public' } }, async (request, reply) => {
    const asset = ASSETS.get((request.params as { name: string }).name);
    if (!asset) return sendHtml(reply, errorPage(DEFAULT_BRAND, 404, 'Not found', 'No such file.', HOME), 404);
    return reply.header('cache-control', 'public, max-age=31536000, immutable').type(asset.type).send(asset.body);
  });

  authRoutes(app, web);
  homeRoutes(web);
  accountRoutes(web);
  orderRoutes(web);
  depositRoutes(web);
  planRoutes(web);
  liveRoutes(web);
  auditRoutes(web);
  return app;
}
