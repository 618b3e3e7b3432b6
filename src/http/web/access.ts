import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Session } from '../../accounts/sessions.js';
import type { Brand } from '../../domain/brand.js';
import { steppedUp } from '../../accounts/two-factor.js';
import { modePath } from '../html/format.js';
import { html } from '../html/html.js';
import { field, redirect, sendHtml } from '../html/http.js';
import { dashboardPage, type View } from './layout.js';
import { isPersonal, may, rulePath, whoMay } from './rules.js';

/**
 * The dashboard's guard: applied to every signed-in request before its handler, from the route
 * and the session's role, with the rule table of src/http/web/rules.ts (the same table the pages
 * read to show a role only what it may use). A forbidden request answers 403 and changes nothing,
 * whatever a page showed.
 */

/** The route without the test-mode prefix: '/test/webhooks/:id' → '/webhooks/:id'. */
function routePath(request: FastifyRequest): string {
  return rulePath(request.routeOptions.url ?? request.url);
}

/**
 * The actions that ask for the second factor again when it was last given more than 10
 * minutes ago: revealing a live key, adding or changing a webhook endpoint, changing the team.
 * GET pages that lead to them ask before the form is shown.
 */
function needsStepUp(request: FastifyRequest, path: string): boolean {
  const read = request.method === 'GET' || request.method === 'HEAD';
  if (path === '/keys/reissue') return (read ? field(request.query, 'mode') : field(request.body, 'mode')) === 'live';
  if (read) return false;
  if (path === '/webhooks' || /^\/webhooks\/:id\/(rotate|delete|enable)$/.test(path)) return true;
  return /^\/team(\/|$)/.test(path);
}

/** The dashboard's own page, with its menu: the person is signed in, only this is not theirs to use. */
function forbiddenPage(view: View, method: string, path: string) {
  const body = html`<div class="page-head"><div><p class="eyebrow">Error 403</p><h1>Not available to your role</h1></div></div>
<section class="card confirm-card" aria-label="Why">
  <p>Your role on this account is <strong>${view.session.role}</strong>: this ${method === 'GET' || method === 'HEAD' ? 'page' : 'action'} is for ${whoMay(method, path)} only. Ask an owner of the account if you need it.</p>
  <p><a class="button button-primary" href="${modePath(view.mode, '/')}">Go to the overview</a></p>
</section>`;
  return dashboardPage(view, { title: 'Not available to your role', body });
}

function stepUpPage(view: View, next: string) {
  const body = html`<div class="page-head"><div><p class="eyebrow">Error 403</p><h1>Confirm it is you</h1></div></div>
<section class="card confirm-card" aria-label="Why">
  <p>This action asks for your two-factor code again (last given more than 10 minutes ago). Confirm, then submit the form again.</p>
  <p><a class="button button-primary" href="/account/confirm?next=${encodeURIComponent(next)}">Enter your code</a></p>
</section>`;
  return dashboardPage(view, { title: 'Confirm it is you', body });
}

/**
 * Applies the rules above to a signed-in request. Answers (and returns false) when the request
 * may not go on: a session still owing its second factor goes to the code form, a member of an
 * account that requires two-factor but has not enrolled goes to enrolment, a forbidden route
 * answers 403, a sensitive one without a recent second factor asks for it.
 */
export function guard(request: FastifyRequest, reply: FastifyReply, session: Session, csrf: string, brand: Brand): boolean {
  const path = routePath(request);
  const view: View = { session, mode: /^\/test([/?]|$)/.test(request.url) ? 'test' : 'live', csrf, brand };
  if (session.stage === 'second_factor') {
    redirect(reply, '/login/code');
    return false;
  }
  if (session.twoFactorRequired && !session.twoFactor && !isPersonal(path)) {
    redirect(reply, '/account/two-factor?notice=required');
    return false;
  }
  if (!may(session.role, request.method, path)) {
    request.log.warn({ route: request.routeOptions.url, role: session.role }, 'dashboard request refused: role');
    sendHtml(reply, forbiddenPage(view, request.method, path), 403);
    return false;
  }
  if (needsStepUp(request, path) && !steppedUp(session)) {
    const read = request.method === 'GET' || request.method === 'HEAD';
    if (read) redirect(reply, `/account/confirm?next=${encodeURIComponent(request.url)}`);
    else
      sendHtml(
        reply,
        stepUpPage(view, request.url.replace(/\/(rotate|delete|enable|invite|remove|revoke|resend|role|two-factor)$/, '').replace(/\/(members|invites)\/[^/]+$/, '')),
        403,
      );
    return false;
  }
  return true;
}
