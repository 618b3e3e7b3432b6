import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { acceptInvite, checkInvite, type PendingInvite } from '../../../accounts/invites.js';
import { isSecretFormat } from '../../../accounts/secrets.js';
import { createSession, deleteSession, findSession, SESSION_MAX_AGE_MS, switchSessionAccount } from '../../../accounts/sessions.js';
import { recordAudit } from '../../../audit/audit.js';
import type { Database, TeamRole } from '../../../db/schema.js';
import { type Html, html, type Slot } from '../../html/html.js';
import { cookieOptions, crossSite, field, PRE_SESSION_COOKIE, redirect, sendHtml, SESSION_COOKIE } from '../../html/http.js';
import { authPage, csrfField, errorPage, notice } from '../layout.js';
import { signedOutForms, tokenRouteOptions, newPasswordFields } from '../signed-out.js';
import type { Web } from '../web.js';
import { ROLE_TEXT } from './team.js';

/**
 * The invite link's own page, /invite/TOKEN, open to anyone holding the link (docs/dashboard.md,
 * "Team and roles"): a person this invite creates chooses a password there; anyone who already
 * exists accepts while signed in as the invited e-mail. A dead link says why.
 */

/** The invite itself no longer works (as opposed to a problem with what was typed). */
const isInviteProblem = (reason: string) => reason !== 'weak_password' && reason !== 'wrong_person';

export function inviteLinkRoutes(app: FastifyInstance, web: Web): void {
  const { ctx, csrf } = web;
  const { preToken, refuse } = signedOutForms(csrf, ctx.brand);
  // The token is in the path: never sent as a referrer, and not in the request
  // log at level info (as /set-password/:token).
  const quiet = tokenRouteOptions(app);
  const invalidInvite = (message: string) => errorPage(ctx.brand, 404, 'This invite does not work', message, { href: '/login', label: 'Go to the login page' });

  const invitePage = (token: string, pending: PendingInvite, csrfToken: string, signedInAs: string | undefined, status?: Slot) => {
    const intro = html`<p>Join <strong>${pending.accountEmail}</strong> on ${ctx.brand.name} as <strong>${pending.role}</strong> (${ROLE_TEXT[pending.role]}).</p>`;
    let body: Html;
    if (signedInAs === pending.email) {
      body = html`${intro}<form method="post" action="/invite/${token}" class="stack">${csrfField(csrfToken)}<button type="submit" class="button button-primary button-block">Join the account</button></form>`;
    } else if (pending.existingPerson) {
      // Never a password form for an address that already has a person: the link holder is not
      // proven to be them (docs/security.md, "Invites").
      body = html`${intro}<p>This invite is for <strong>${pending.email}</strong>, which already has a ${ctx.brand.name} login. <a href="/login">Log in</a> as ${pending.email} (or first set its password with the link you were given), then open this link again.</p>`;
    } else {
      body = html`${intro}<p>For <strong>${pending.email}</strong>. Choose a password to sign in with. This link works once.</p>
<form method="post" action="/invite/${token}" class="stack" novalidate>
  ${csrfField(csrfToken)}
  ${newPasswordFields(pending.email, { password: 'Password', again: 'Repeat the password' })}
  <button type="submit" class="button button-primary button-block">Join and log in</button>
</form>`;
    }
    return authPage(ctx.brand, { title: 'Team invite', heading: 'You are invited', status, body });
  };

  app.get('/invite/:token', quiet, async (request, reply) => {
    reply.header('referrer-policy', 'no-referrer');
    const { token } = request.params as { token: string };
    const lookup = await checkInvite(ctx.db, token);
    if (!lookup.ok) return sendHtml(reply, invalidInvite(lookup.message), 404);
    const pending = lookup.invite;
    const session = await findSession(ctx.db, request.cookies[SESSION_COOKIE]);
    const active = session?.stage === 'active' ? session : undefined;
    const csrfToken = active ? csrf.forSession(active.idHash) : preToken(request, reply);
    return sendHtml(reply, invitePage(token, pending, csrfToken, active?.email));
  });

  app.post('/invite/:token', quiet, async (request, reply) => {
    reply.header('referrer-policy', 'no-referrer');
    const { token } = request.params as { token: string };
    const lookup = await checkInvite(ctx.db, token);
    if (!lookup.ok) return sendHtml(reply, invalidInvite(lookup.message), 404);
    const pending = lookup.invite;
    const session = await findSession(ctx.db, request.cookies[SESSION_COOKIE]);
    const active = session?.stage === 'active' && session.email === pending.email ? session : undefined;
    const given = field(request.body, '_csrf');
    const pre = request.cookies[PRE_SESSION_COOKIE];
    const csrfOk = !crossSite(request) && (active ? csrf.check(csrf.forSession(active.idHash), given) : isSecretFormat(pre) && csrf.check(csrf.forPreSession(pre), given));
    if (!csrfOk) return refuse(request, reply);
    const audit = (tx: Kysely<Database>, accepted: { accountId: string; email: string; role: TeamRole }) =>
      recordAudit(tx, {
        actor: accepted.email,
        source: 'dashboard',
        action: 'team.join',
        accountId: accepted.accountId,
        details: { ip: request.ip, role: accepted.role },
        now: Date.now(),
      });
    if (active) {
      const result = await acceptInvite(ctx.db, token, { personId: active.personId }, Date.now(), audit, ctx.brand.name);
      if (!result.ok)
        return sendHtml(
          reply,
          isInviteProblem(result.reason)
            ? invalidInvite(result.message)
            : invitePage(token, pending, csrf.forSession(active.idHash), active.email, notice('error', result.message)),
          isInviteProblem(result.reason) ? 404 : 400,
        );
      await switchSessionAccount(ctx.db, active.idHash, result.accountId);
      return redirect(reply, '/?notice=joined');
    }
    const password = field(request.body, 'password');
    if (password !== field(request.body, 'password_again')) {
      return sendHtml(reply, invitePage(token, pending, preToken(request, reply), undefined, notice('error', 'The two passwords are different.')), 400);
    }
    const result = await acceptInvite(ctx.db, token, { password }, Date.now(), audit, ctx.brand.name);
    if (!result.ok) {
      if (isInviteProblem(result.reason)) return sendHtml(reply, invalidInvite(result.message), 404);
      return sendHtml(reply, invitePage(token, pending, preToken(request, reply), undefined, notice('error', result.message)), 400);
    }
    if (session) await deleteSession(ctx.db, session.idHash);
    const { id } = await createSession(ctx.db, result.personId, result.accountId);
    reply.setCookie(SESSION_COOKIE, id, cookieOptions(request, SESSION_MAX_AGE_MS / 1000));
    return redirect(reply, '/?notice=joined');
  });
}
