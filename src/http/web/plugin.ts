import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { dashboardSecret } from '../../accounts/dashboard-secret.js';
import { lookUpSession, type Session } from '../../accounts/sessions.js';
import { Outage } from '../../db/outage.js';
import { UNAVAILABLE_RETRY_AFTER_S } from '../errors.js';
import { guard } from './access.js';
import { ASSETS } from '../html/assets.js';
import { brandFile } from '../html/brand.js';
import type { WebContext } from './context.js';
import type { Web } from './web.js';
import { CsrfTokens } from '../html/csrf.js';
import { cookieOptions, crossSite, field, pageHeaders, redirect, sendHtml, SESSION_COOKIE } from '../html/http.js';
import { csrfErrorPage } from './layout.js';
import { authRoutes } from './pages/auth.js';
import { keyRoutes } from './pages/keys.js';
import { orderRoutes } from './pages/orders.js';
import { overviewRoutes } from './pages/overview.js';
import { topUpRoutes } from './pages/top-up.js';
import { guideRoutes } from './pages/guide.js';
import { webhookRoutes } from './pages/webhooks.js';
import { badRequestPage, notFoundPage, serverErrorPage, unavailablePage } from './pages/error.js';
import { balanceHistoryRoutes } from './pages/balance-history.js';
import { statementRoutes } from './pages/statements.js';
import { alertRoutes } from './pages/alerts.js';
import { accountRoutes } from './pages/account.js';
import { activityRoutes } from './pages/activity.js';
import { teamRoutes } from './pages/team.js';
import { inviteLinkRoutes } from './pages/invite-link.js';
import { notificationRoutes } from './pages/notifications.js';
import { passwordResetRoutes } from './pages/password-reset.js';
import { emailRoutes } from './pages/email.js';

/** Dashboard requests failed by an unavailable database: logged once as the outage begins. */
const webOutage = new Outage('dashboard');

/**
 * The client dashboard, served by the same process as the API (`/` dashboard, `/api/v1` API).
 * Server-rendered HTML; an encapsulated Fastify scope, so its cookie and form parsing, error
 * pages and security headers never touch the API's behaviour.
 */
export async function webPlugin(app: FastifyInstance, ctx: WebContext): Promise<void> {
  const csrf = new CsrfTokens(await dashboardSecret(ctx.db));
  await app.register(cookie);
  await app.register(formbody, { bodyLimit: 16 * 1024 });
  app.decorateRequest('dashboardSession', undefined);

  app.addHook('onSend', async (request, reply, payload) => {
    pageHeaders(request, reply);
    return payload;
  });

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    // A full or read-only disk, an unreachable database: nothing of the form was kept.
    if (ctx.db.engine.isUnavailable(error)) {
      webOutage.failed(request.log, error);
      reply.header('Retry-After', String(UNAVAILABLE_RETRY_AFTER_S));
      return sendHtml(reply, unavailablePage(ctx.brand), 503);
    }
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'dashboard error');
    const page = status === 500 ? serverErrorPage(ctx.brand, request.id) : badRequestPage(ctx.brand, status);
    return sendHtml(reply, page, status);
  });

  const authenticated = async (request: FastifyRequest, reply: FastifyReply) => {
    const cookieValue = request.cookies[SESSION_COOKIE];
    const found = cookieValue ? await lookUpSession(ctx.db, cookieValue) : undefined;
    if (found && 'session' in found) {
      request.dashboardSession = found;
      if (!guard(request, reply, found, csrf.forSession(found.idHash), ctx.brand)) return reply;
      return;
    }
    if (cookieValue) reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
    const next = request.method === 'GET' ? request.url : '/';
    // A membership that ended says so (docs/dashboard.md "Team and roles"); anything else: expired.
    const why = found?.ended === 'removed' ? 'removed' : found?.ended === 'disabled' ? 'disabled' : 'expired';
    const params = new URLSearchParams({ ...(next !== '/' && { next }), ...(cookieValue && { notice: why }) });
    const query = params.toString();
    redirect(reply, `/login${query ? `?${query}` : ''}`);
    return reply;
  };

  const sessionCsrf = async (request: FastifyRequest, reply: FastifyReply) => {
    const session = request.dashboardSession;
    if (session && !crossSite(request) && csrf.check(csrf.forSession(session.idHash), field(request.body, '_csrf'))) return;
    request.log.warn({ route: request.routeOptions.url }, 'dashboard form refused: CSRF token missing or wrong');
    sendHtml(reply, csrfErrorPage(ctx.brand), 403);
    return reply;
  };

  const web: Web = {
    ctx,
    csrf,
    authenticated,
    sessionCsrf,
    view(request, mode) {
      const session = request.dashboardSession as Session;
      return { session, mode, csrf: csrf.forSession(session.idHash), brand: ctx.brand };
    },
    page(path, handler) {
      for (const mode of ['live', 'test'] as const) {
        const url = mode === 'live' ? path : path === '/' ? '/test' : `/test${path}`;
        app.get(url, { preHandler: authenticated }, (request, reply) => handler(request, reply, mode));
      }
    },
  };

  app.get('/assets/:name', async (request, reply) => {
    const { name } = request.params as { name: string };
    const asset = ASSETS.get(name) ?? brandFile(ctx.brand, name);
    if (!asset) return sendHtml(reply, notFoundPage(ctx.brand), 404);
    if ('csp' in asset && asset.csp) reply.header('content-security-policy', asset.csp);
    return reply.header('cache-control', 'public, max-age=31536000, immutable').type(asset.type).send(asset.body);
  });

  authRoutes(app, web);
  overviewRoutes(app, web);
  topUpRoutes(app, web);
  keyRoutes(app, web);
  orderRoutes(app, web);
  guideRoutes(app, web);
  webhookRoutes(app, web);
  balanceHistoryRoutes(app, web);
  statementRoutes(app, web);
  alertRoutes(app, web);
  accountRoutes(app, web);
  teamRoutes(app, web);
  inviteLinkRoutes(app, web);
  activityRoutes(app, web);
  notificationRoutes(app, web);
  passwordResetRoutes(app, web);
  emailRoutes(app, web);
}
