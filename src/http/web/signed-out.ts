import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PASSWORD_MIN_LENGTH } from '../../accounts/passwords.js';
import { isSecretFormat, newSecret } from '../../accounts/secrets.js';
import type { Brand } from '../../domain/brand.js';
import type { CsrfTokens } from '../html/csrf.js';
import { type Html, html } from '../html/html.js';
import { cookieOptions, crossSite, field, PRE_SESSION_COOKIE, sendHtml } from '../html/http.js';
import { csrfErrorPage } from './layout.js';

/**
 * What the forms of signed-out pages share (log in, sign up, the one-time links, forgotten
 * passwords): a CSRF token bound to the random `sp_pre` cookie (docs/dashboard.md "Security"),
 * its check, and the refusal of a form without it.
 */
export function signedOutForms(csrf: CsrfTokens, brand: Brand) {
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
      return sendHtml(reply, csrfErrorPage(brand), 403);
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

/**
 * The fields of a form that chooses a password for `email` (a one-time link, a reset, an
 * invite): the address for password managers, the password and its repetition.
 */
export function newPasswordFields(email: string, labels: { password: string; again: string }): Html {
  return html`<input type="email" name="username" value="${email}" autocomplete="username" hidden>
  <div class="field">
    <label for="password">${labels.password}</label>
    <input id="password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" aria-describedby="password-hint" autofocus>
    <p id="password-hint" class="hint">At least ${PASSWORD_MIN_LENGTH} characters.</p>
  </div>
  <div class="field">
    <label for="password-again">${labels.again}</label>
    <input id="password-again" name="password_again" type="password" autocomplete="new-password" required>
  </div>`;
}
