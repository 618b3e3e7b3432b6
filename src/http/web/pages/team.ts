import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { changeRole, isTeamRole, listMembers, removeMember, setTwoFactorRequired, TEAM_ROLES, TeamError } from '../../../accounts/team.js';
import { createInvite, listPendingInvites, queueInviteMail, resendInvite, revokeInvite } from '../../../accounts/invites.js';
import { recordAudit } from '../../../audit/audit.js';
import type { TeamRole } from '../../../db/schema.js';
import { copyField } from '../components.js';
import { time } from '../../html/format.js';
import { html, type Slot } from '../../html/html.js';
import { field, redirect, sendHtml } from '../../html/http.js';
import { csrfField, dashboardPage, notice, type View } from '../layout.js';
import type { Web } from '../web.js';

/**
 * The team (owners only, src/http/web/access.ts): members and roles, invites by one-time link
 * (72 hours; e-mailed to the invited address and shown to the owner once; resent with a new
 * link, which voids the old one), removal (their sessions end at
 * once), and "require two-factor" for every member. The invite link's own page is
 * invite-link.ts.
 */
export const ROLE_TEXT: Record<TeamRole, string> = {
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

export function teamRoutes(app: FastifyInstance, web: Web): void {
  const { ctx } = web;
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
          brand: ctx.brand.name,
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
        brand: ctx.brand.name,
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
}
