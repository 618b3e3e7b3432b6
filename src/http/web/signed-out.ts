import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isSecretFormat, newSecret } from '../../accounts/secrets.js';
import type { CsrfTokens } from './csrf.js';
import { cookieOptions, crossSite, field, PRE_SESSION_COOKIE, sendHtml } from './http.js';
import { csrfErrorPage } from './layout.js';

/**
 * What the forms of signed-out pages share (log in, sign up, the one-time links, forgotten
 * passwords): a CSRF token bound to the random `sp_pre` cookie (docs/dashboard.md "Security"),
 * its check, and the refusal of a form without it.
 */
export function signedOutForms(csrf: CsrfTokens) {
  return {
    /** The form's CSRF token, setting the pre-session cookie it is bound to when needed. */
    preToken(request: FastifyRequest, reply: FastifyReply): string {
      let value = request.cookies[PRE_SESSION_COOKIE];
      if (!isSecretFormat(value)) {
        value = newSecret();
        reply.setCookie(PRE_SESSION_COOKIE, value, cookieOptions(request));
      }
      return csrf.forPreSession(value);
    },
    preCsrfValid(request: FastifyRequest): boolean {
      const value = request.cookies[PRE_SESSION_COOKIE];
      return !crossSite(request) && isSecretFormat(value) && csrf.check(csrf.forPreSession(value), field(request.body, '_csrf'));
    },
    refuse(request: FastifyRequest, reply: FastifyReply) {
      request.log.warn({ route: request.routeOptions.url }, 'dashboard form refused: CSRF token missing or wrong');
      return sendHtml(reply, csrfErrorPage(), 403);
    },
  };
}

/**
 * Route options for a path holding a one-time token: the request log records URLs at level
 * info, so such routes log at warn and above only (or quieter, if the service is set so).
 */
export function tokenRouteOptions(app: FastifyInstance): { logLevel: 'warn' } {
  const quieter = ['warn', 'error', 'fatal', 'silent'].includes(app.log.level);
  return { logLevel: (quieter ? app.log.level : 'warn') as 'warn' };
}
