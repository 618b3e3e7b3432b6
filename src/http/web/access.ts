import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Session } from '../../accounts/sessions.js';
import { steppedUp } from '../../accounts/two-factor.js';
import { html } from './html.js';
import type { TeamRole } from '../../db/schema.js';
import { field, redirect, sendHtml } from './http.js';
import { errorPage } from './layout.js';

/**
 * Who may do what in the dashboard, decided on the server for every page and form from the
 * route and the session's role (docs/dashboard.md, "Team and roles"), before the handler runs:
 * a forbidden request answers 403 and changes nothing, whatever the menu showed.
 *
 *   owner      everything
 *   developer  keys, webhooks, orders, test funds; not the team, activity or settings
 *   viewer     reads balances, orders, history and deposits; no keys, no webhooks, no forms
 *
 * Every person may use their own account page (switch account, their own two-factor). A POST
 * route not named below is the owner's: a new form is closed until it is listed here.
 */
type Access = 'allowed' | 'forbidden';

/** The route without the test-mode prefix: '/test/webhooks/:id' → '/webhooks/:id'. */
function routePath(request: FastifyRequest): string {
  const url = request.routeOptions.url ?? request.url.split('?')[0] ?? '/';
  if (url === '/test') return '/';
  return url.startsWith('/test/') ? url.slice('/test'.length) : url;
}

const OWNER_ONLY = /^\/(team|activity|settings)(\/|\.|$)/;
const DEVELOPER = /^\/(keys|webhooks)(\/|$)/;
const EVERYONE_POSTS = /^\/account(\/|$)/;

function access(role: TeamRole, method: string, path: string): Access {
  if (role === 'owner') return 'allowed';
  if (OWNER_ONLY.test(path)) return 'forbidden';
  const read = method === 'GET' || method === 'HEAD';
  if (read) return role === 'viewer' && DEVELOPER.test(path) ? 'forbidden' : 'allowed';
  if (EVERYONE_POSTS.test(path)) return 'allowed';
  if (role === 'viewer') return 'forbidden';
  // Developers: keys, webhooks and test funds (POST /test/top-up).
  return DEVELOPER.test(path) || path === '/top-up' ? 'allowed' : 'forbidden';
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

function forbiddenPage(role: TeamRole) {
  return errorPage(
    403,
    'Not available to your role',
    `Your role on this account is ${role}: this page or action is for ${role === 'viewer' ? 'developers and owners' : 'owners'} only. Ask an owner of the account if you need it.`,
  );
}

function stepUpPage(next: string) {
  return errorPage(403, 'Confirm it is you', html`This action asks for your two-factor code again (last given more than 10 minutes ago). Confirm, then submit the form again.`, {
    href: `/account/confirm?next=${encodeURIComponent(next)}`,
    label: 'Enter your code',
  });
}

/**
 * Applies the rules above to a signed-in request. Answers (and returns false) when the request
 * may not go on: a session still owing its second factor goes to the code form, a member of an
 * account that requires two-factor but has not enrolled goes to enrolment, a forbidden route
 * answers 403, a sensitive one without a recent second factor asks for it.
 */
export function guard(request: FastifyRequest, reply: FastifyReply, session: Session): boolean {
  const path = routePath(request);
  if (session.stage === 'second_factor') {
    redirect(reply, '/login/code');
    return false;
  }
  if (session.twoFactorRequired && !session.twoFactor && !EVERYONE_POSTS.test(path)) {
    redirect(reply, '/account/two-factor?notice=required');
    return false;
  }
  if (access(session.role, request.method, path) === 'forbidden') {
    request.log.warn({ route: request.routeOptions.url, role: session.role }, 'dashboard request refused: role');
    sendHtml(reply, forbiddenPage(session.role), 403);
    return false;
  }
  if (needsStepUp(request, path) && !steppedUp(session)) {
    const read = request.method === 'GET' || request.method === 'HEAD';
    if (read) redirect(reply, `/account/confirm?next=${encodeURIComponent(request.url)}`);
    else
      sendHtml(reply, stepUpPage(request.url.replace(/\/(rotate|delete|enable|invite|remove|revoke|resend|role|two-factor)$/, '').replace(/\/(members|invites)\/[^/]+$/, '')), 403);
    return false;
  }
  return true;
}
