import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PASSWORD_MIN_LENGTH } from '../../../accounts/passwords.js';
import { isSecretFormat } from '../../../accounts/secrets.js';
import { createSession, deleteSession, findSession, SESSION_MAX_AGE_MS, switchSessionAccount } from '../../../accounts/sessions.js';
import { changeRole, isTeamRole, listMembers, removeMember, setTwoFactorRequired, TEAM_ROLES, TeamError } from '../../../accounts/team.js';
import { acceptInvite, checkInvite, createInvite, listPendingInvites, type PendingInvite, queueInviteMail, resendInvite, revokeInvite } from '../../../accounts/invites.js';
import { recordAudit } from '../../../audit/audit.js';
import type { TeamRole } from '../../../db/schema.js';
import { copyField } from '../components.js';
import { time } from '../format.js';
import { type Html, html, type Slot } from '../html.js';
import { cookieOptions, crossSite, field, PRE_SESSION_COOKIE, redirect, sendHtml, SESSION_COOKIE } from '../http.js';
import { authPage, csrfErrorPage, csrfField, dashboardPage, errorPage, notice, type View } from '../layout.js';
import type { Web } from '../web.js';
import { signedOutForms, tokenRouteOptions } from '../signed-out.js';

/**
 * The team (owners only, src/http/web/access.ts): members and roles, invites by one-time link
 * (72 hours; e-mailed to the invited address and shown to the owner once; resent with a new
 * link, which voids the old one), removal (their sessions end at
 * once), and "require two-factor" for every member. The invite link's own page, /invite/TOKEN,
 * is open: the invited person sets a password there, or accepts while signed in.
 */
const ROLE_TEXT: Record<TeamRole, string> = {
  owner: 'Owner: everything, including the team and settings',
  developer: 'Developer: keys, webhooks, orders, test funds',
  viewer: 'Viewer: read only (balances, orders, history, deposits)',
};

const NOTICES: Record<string, Slot> = {
  removed: notice('success', 'The member was removed; they were signed out of this account at once.'),
  role_changed: notice('success', 'Role changed.'),
  required_on: notice('success', 'Every member must now use two-factor sign-in.'),
  required_off: notice('success', 'Two-factor sign-in is no longer required (members who turned it on keep it).'),
  need_own_2fa: notice('error', 'Turn on two-factor sign-in for yourself first (Your account), then require it of the team.'),
  missing: notice('info', 'That member is no longer on the team.'),
  joined: notice('success', 'You joined the account.'),
  invite_revoked: notice('success', 'The invite was revoked: its link no longer works.'),
  invite_gone: notice('info', 'That invite was no longer pending (used, revoked or expired).'),
};

type ShownInvite = { url: string; email: string; role: TeamRole; expiresAt: number; mailed: boolean; resent?: boolean };

/** The invite itself no longer works (as opposed to a problem with what was typed). */
const isInviteProblem = (reason: string) => reason !== 'weak_password' && reason !== 'wrong_person';

export function teamRoutes(app: FastifyInstance, web: Web): void {
  const { ctx, csrf } = web;
  const { preToken } = signedOutForms(csrf);
  const guarded = { preHandler: [web.authenticated, web.sessionCsrf] };
  const viewOf = (request: FastifyRequest): View => web.view(request, 'live');

  const teamPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    extra: { status?: Slot; form?: { email: string; role: string; error?: string }; invite?: ShownInvite } = {},
  ) => {
    const view = viewOf(request);
    const { session } = view;
    const members = await listMembers(ctx.db.kysely, session.accountId);
    const roleSelect = (name: string, id: string, selected: string) =>
      html`<select id="${id}" name="${name}">${TEAM_ROLES.map((r) => html`<option value="${r}"${r === selected ? ' selected' : ''}>${r}</option>`)}</select>`;
    const rows = members.map(
      (m) => html`<tr data-member="${m.email}">
  <td data-label="E-mail" class="wrap-any">${m.email}${m.personId === session.personId ? html` <span class="muted">(you)</span>` : ''}</td>
  <td data-label="Role">
    <form method="post" action="/team/members/${m.personId}/role" class="role-form">
      ${csrfField(view.csrf)}
      <label class="visually-hidden" for="role-${m.personId}">Role of ${m.email}</label>
      ${roleSelect('role', `role-${m.personId}`, m.role)}
      <button type="submit" class="button button-quiet button-small">Change</button>
    </form>
  </td>
  <td data-label="Two-factor">${m.twoFactor ? 'On' : 'Off'}</td>
  <td data-label="Member since">${time(m.since)}</td>
  <td class="actions"><form method="post" action="/team/members/${m.personId}/remove" class="inline-form">${csrfField(view.csrf)}<button type="submit" class="button button-danger button-small" data-testid="remove-${m.email}">Remove</button></form></td>
</tr>`,
    );
    const invite = extra.invite
      ? html`<section class="card new-key-card" aria-labelledby="invite-link-heading">
  <h2 id="invite-link-heading">Invite link for ${extra.invite.email}</h2>
  ${
    extra.invite.mailed
      ? notice(
          'success',
          html`<span data-testid="invite-mailed"><strong>${extra.invite.resent ? 'A new link was e-mailed' : 'E-mailed'} to ${extra.invite.email}.</strong></span> It works once, until ${time(extra.invite.expiresAt)}, and joins them as <strong>${extra.invite.role}</strong>.${extra.invite.resent ? ' The earlier link no longer works.' : ''} You can also pass it on yourself: it is shown only now.`,
        )
      : notice(
          'warning',
          html`<strong>Pass this link on to ${extra.invite.email} yourself</strong> (that address waits for its own verification, so no e-mail is sent to it). It works once, until ${time(extra.invite.expiresAt)}, and joins them as <strong>${extra.invite.role}</strong>. It is shown only now.`,
        )
  }
  ${copyField('invite-link', extra.invite.url, 'invite link', { className: 'mono' })}
</section>`
      : '';
    const pending = await listPendingInvites(ctx.db.kysely, session.accountId);
    const pendingRows = pending.map(
      (i) => html`<tr data-invite="${i.email}">
  <td data-label="E-mail" class="wrap-any">${i.email}</td>
  <td data-label="Role">${i.role}</td>
  <td data-label="Invited by" class="wrap-any">${i.invitedBy}</td>
  <td data-label="Expires">${time(i.expiresAt)}</td>
  <td class="actions"><form method="post" action="/team/invites/${i.id}/resend" class="inline-form">${csrfField(view.csrf)}<button type="submit" class="button button-secondary button-small" data-testid="resend-${i.email}">Resend</button></form>
  <form method="post" action="/team/invites/${i.id}/revoke" class="inline-form">${csrfField(view.csrf)}<button type="submit" class="button button-danger button-small" data-testid="revoke-${i.email}">Revoke</button></form></td>
</tr>`,
    );
    const pendingSection =
      pending.length === 0
        ? ''
        : html`<section class="card section" aria-labelledby="pending-heading">
  <h2 id="pending-heading">Pending invites</h2>
  <p class="hint">Links not used yet. Any owner can e-mail one again with a new link (the old one stops working) or revoke it; an invite also stops working when the owner who sent it is removed or no longer an owner.</p>
  <div class="table-wrap" tabindex="0" role="region" aria-label="Pending invites"><table class="table">
  <caption class="visually-hidden">Pending invites</caption>
  <thead><tr><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Invited by</th><th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Resend or revoke</span></th></tr></thead>
  <tbody>${pendingRows}</tbody></table></div>
</section>`;
    const form = extra.form;
    const body = html`<div class="page-head"><h1>Team</h1></div>
<p class="lead">People who can use this account's dashboard, and what each may do.</p>
${invite}
<div class="table-wrap" tabindex="0" role="region" aria-label="Team members"><table class="table">
<caption class="visually-hidden">Team members</caption>
<thead><tr><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Two-factor</th><th scope="col">Member since</th><th scope="col"><span class="visually-hidden">Remove</span></th></tr></thead>
<tbody>${rows}</tbody></table></div>
${pendingSection}
<section class="card section" aria-labelledby="invite-heading">
  <h2 id="invite-heading">Invite a teammate</h2>
  <form method="post" action="/team/invite" class="stack" novalidate>
    ${csrfField(view.csrf)}
    <div class="field">
      <label for="invite-email">E-mail</label>
      <input id="invite-email" name="email" type="email" required value="${form?.email ?? ''}"${form?.error ? html` aria-invalid="true" aria-describedby="invite-error"` : ''}>
      ${form?.error ? html`<p id="invite-error" class="field-error">${form.error}</p>` : ''}
    </div>
    <div class="field">
      <label for="invite-role">Role</label>
      ${roleSelect('role', 'invite-role', form?.role ?? 'developer')}
      <ul class="hint">${TEAM_ROLES.map((r) => html`<li>${ROLE_TEXT[r]}</li>`)}</ul>
    </div>
    <p><button type="submit" class="button button-primary">Send invite</button></p>
  </form>
</section>
<section class="card section" aria-labelledby="require-heading">
  <h2 id="require-heading">Two-factor sign-in</h2>
  <p data-testid="two-factor-required">${session.twoFactorRequired ? 'Required of every member.' : 'Not required: each member chooses.'}</p>
  <form method="post" action="/team/two-factor" class="inline-form">
    ${csrfField(view.csrf)}
    <input type="hidden" name="required" value="${session.twoFactorRequired ? 'no' : 'yes'}">
    <button type="submit" class="button button-secondary">${session.twoFactorRequired ? 'Stop requiring two-factor' : 'Require two-factor for every member'}</button>
  </form>
</section>`;
    const status = extra.status ?? NOTICES[field(request.query, 'notice')];
    return sendHtml(reply, dashboardPage(view, { title: 'Team', section: 'team', body, notice: status }), form?.error ? 400 : 200);
  };

  app.get('/team', { preHandler: web.authenticated }, (request, reply) => teamPage(request, reply));

  app.post('/team/invite', guarded, async (request, reply) => {
    const { session } = viewOf(request);
    const email = field(request.body, 'email');
    const role = field(request.body, 'role');
    if (!isTeamRole(role)) return teamPage(request, reply, { form: { email, role, error: 'Choose a role: owner, developer or viewer.' } });
    try {
      const origin = ctx.linkOrigin();
      let mailed = false;
      const invite = await createInvite(ctx.db, { accountId: session.accountId, email, role, invitedBy: session.personId }, Date.now(), async (tx, created) => {
        await recordAudit(tx, {
          actor: session.email,
          source: 'dashboard',
          action: 'team.invite',
          accountId: session.accountId,
          details: { ip: request.ip, email: created.email, role },
          now: Date.now(),
        });
        mailed = await queueInviteMail(tx, {
          accountId: session.accountId,
          accountEmail: session.accountEmail,
          inviter: session.email,
          invite: created,
          link: `${origin}/invite/${created.token}`,
        });
      });
      const url = `${origin}/invite/${invite.token}`;
      return teamPage(request, reply, { invite: { url, email: invite.email, role, expiresAt: invite.expiresAt, mailed } });
    } catch (error) {
      if (error instanceof TeamError) return teamPage(request, reply, { form: { email, role, error: error.message } });
      throw error;
    }
  });

  app.post('/team/invites/:invite/revoke', guarded, async (request, reply) => {
    const { session } = viewOf(request);
    const id = (request.params as { invite: string }).invite;
    const revoked = await revokeInvite(ctx.db, session.accountId, id, session.email, Date.now(), (tx, invite) =>
      recordAudit(tx, {
        actor: session.email,
        source: 'dashboard',
        action: 'team.invite_revoke',
        accountId: session.accountId,
        details: { ip: request.ip, email: invite.email, role: invite.role },
        now: Date.now(),
      }),
    );
    return redirect(reply, `/team?notice=${revoked ? 'invite_revoked' : 'invite_gone'}`);
  });

  app.post('/team/invites/:invite/resend', guarded, async (request, reply) => {
    const { session } = viewOf(request);
    const id = (request.params as { invite: string }).invite;
    const origin = ctx.linkOrigin();
    let mailed = false;
    const invite = await resendInvite(ctx.db, session.accountId, id, { personId: session.personId, email: session.email }, Date.now(), async (tx, created) => {
      await recordAudit(tx, {
        actor: session.email,
        source: 'dashboard',
        action: 'team.invite_resend',
        accountId: session.accountId,
        details: { ip: request.ip, email: created.email, role: created.role },
        now: Date.now(),
      });
      mailed = await queueInviteMail(tx, {
        accountId: session.accountId,
        accountEmail: session.accountEmail,
        inviter: session.email,
        invite: created,
        link: `${origin}/invite/${created.token}`,
      });
    });
    if (!invite) return redirect(reply, '/team?notice=invite_gone');
    return teamPage(request, reply, {
      invite: { url: `${origin}/invite/${invite.token}`, email: invite.email, role: invite.role, expiresAt: invite.expiresAt, mailed, resent: true },
    });
  });

  app.post('/team/members/:person/remove', guarded, async (request, reply) => {
    const { session } = viewOf(request);
    const personId = (request.params as { person: string }).person;
    try {
      await removeMember(ctx.db, session.accountId, personId, (tx, removed) =>
        recordAudit(tx, {
          actor: session.email,
          source: 'dashboard',
          action: 'team.remove',
          accountId: session.accountId,
          details: { ip: request.ip, email: removed.email, role: removed.role },
          now: Date.now(),
        }),
      );
    } catch (error) {
      if (error instanceof TeamError) {
        if (/not a member/.test(error.message)) return redirect(reply, '/team?notice=missing');
        return teamPage(request, reply, { status: notice('error', error.message) });
      }
      throw error;
    }
    // Removing oneself: this session has just ended.
    return redirect(reply, personId === session.personId ? '/login?notice=expired' : '/team?notice=removed');
  });

  app.post('/team/members/:person/role', guarded, async (request, reply) => {
    const { session } = viewOf(request);
    const personId = (request.params as { person: string }).person;
    const role = field(request.body, 'role');
    if (!isTeamRole(role)) return teamPage(request, reply, { status: notice('error', 'Choose a role: owner, developer or viewer.') });
    try {
      await changeRole(ctx.db, session.accountId, personId, role, (tx, change) =>
        recordAudit(tx, {
          actor: session.email,
          source: 'dashboard',
          action: 'team.role',
          accountId: session.accountId,
          details: { ip: request.ip, email: change.email, from: change.from, to: role },
          now: Date.now(),
        }),
      );
    } catch (error) {
      if (error instanceof TeamError) {
        if (/not a member/.test(error.message)) return redirect(reply, '/team?notice=missing');
        return teamPage(request, reply, { status: notice('error', error.message) });
      }
      throw error;
    }
    return redirect(reply, '/team?notice=role_changed');
  });

  app.post('/team/two-factor', guarded, async (request, reply) => {
    const { session } = viewOf(request);
    const required = field(request.body, 'required') === 'yes';
    if (required && !session.twoFactor) return redirect(reply, '/team?notice=need_own_2fa');
    const now = Date.now();
    await setTwoFactorRequired(ctx.db, session.accountId, required, now, (tx) =>
      recordAudit(tx, {
        actor: session.email,
        source: 'dashboard',
        action: 'team.require_two_factor',
        accountId: session.accountId,
        details: { ip: request.ip, required },
        now,
      }),
    );
    return redirect(reply, `/team?notice=${required ? 'required_on' : 'required_off'}`);
  });

  // The invite link. The token is in the path: never sent as a referrer, and not in the request
  // log at level info (as /set-password/:token).
  const quiet = tokenRouteOptions(app);
  const invalidInvite = (message: string) => errorPage(404, 'This invite does not work', message, { href: '/login', label: 'Go to the login page' });

  const invitePage = (token: string, pending: PendingInvite, csrfToken: string, signedInAs: string | undefined, status?: Slot) => {
    const intro = html`<p>Join <strong>${pending.accountEmail}</strong> on Starport as <strong>${pending.role}</strong> (${ROLE_TEXT[pending.role]}).</p>`;
    let body: Html;
    if (signedInAs === pending.email) {
      body = html`${intro}<form method="post" action="/invite/${token}" class="stack">${csrfField(csrfToken)}<button type="submit" class="button button-primary button-block">Join the account</button></form>`;
    } else if (pending.existingPerson) {
      // Never a password form for an address that already has a person: the link holder is not
      // proven to be them (docs/security.md, "Invites").
      body = html`${intro}<p>This invite is for <strong>${pending.email}</strong>, which already has a Starport login. <a href="/login">Log in</a> as ${pending.email} (or first set its password with the link you were given), then open this link again.</p>`;
    } else {
      body = html`${intro}<p>For <strong>${pending.email}</strong>. Choose a password to sign in with. This link works once.</p>
<form method="post" action="/invite/${token}" class="stack" novalidate>
  ${csrfField(csrfToken)}
  <input type="email" name="username" value="${pending.email}" autocomplete="username" hidden>
  <div class="field">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" aria-describedby="password-hint" autofocus>
    <p id="password-hint" class="hint">At least ${PASSWORD_MIN_LENGTH} characters.</p>
  </div>
  <div class="field">
    <label for="password-again">Repeat the password</label>
    <input id="password-again" name="password_again" type="password" autocomplete="new-password" required>
  </div>
  <button type="submit" class="button button-primary button-block">Join and log in</button>
</form>`;
    }
    return authPage({ title: 'Team invite', heading: 'You are invited', status, body });
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
    if (!csrfOk) {
      request.log.warn({ route: request.routeOptions.url }, 'dashboard form refused: CSRF token missing or wrong');
      return sendHtml(reply, csrfErrorPage(), 403);
    }
    const audit = (accepted: { accountId: string; email: string; role: TeamRole }) => (tx: Parameters<NonNullable<Parameters<typeof acceptInvite>[4]>>[0]) =>
      recordAudit(tx, {
        actor: accepted.email,
        source: 'dashboard',
        action: 'team.join',
        accountId: accepted.accountId,
        details: { ip: request.ip, role: accepted.role },
        now: Date.now(),
      });
    if (active) {
      const result = await acceptInvite(ctx.db, token, { personId: active.personId }, Date.now(), (tx, accepted) => audit(accepted)(tx));
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
    const result = await acceptInvite(ctx.db, token, { password }, Date.now(), (tx, accepted) => audit(accepted)(tx));
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
