import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { markSecondFactor, switchSessionAccount } from '../../../accounts/sessions.js';
import { clearLoginFailures, releaseLoginAttempt, reserveLoginAttempt } from '../../../accounts/auth-throttle.js';
import { listMemberships } from '../../../accounts/team.js';
import { accountsRequiringTwoFactor, confirmEnrolment, pendingEnrolment, startEnrolment, turnOffTwoFactor, verifySecondFactor } from '../../../accounts/two-factor.js';
import { qrSvg } from '../../../ton/transfer-link.js';
import { dashboardAudit } from '../audit.js';
import { copyField } from '../components.js';
import { html, type Slot } from '../../html/html.js';
import { field, redirect, safeNext, sendHtml } from '../../html/http.js';
import { csrfField, dashboardPage, notice, type View } from '../layout.js';
import type { Web } from '../web.js';
import { may } from '../rules.js';
import { emailNotices, emailSection } from './email.js';

/**
 * The signed-in person's own page: the accounts they belong to (switch between them) and their
 * two-factor sign-in (enrol with a QR code or the secret, recovery codes shown once, turn off),
 * and the code form that a sensitive action asks for again after 10 minutes (docs/dashboard.md).
 * Every member may use these, whatever their role.
 */
const NOTICES: Record<string, Slot> = {
  required: notice('warning', 'The owner of this account requires two-factor sign-in. Turn it on to continue.'),
  recovery_low: notice('warning', 'You have 3 or fewer recovery codes left. Turn two-factor off and on again to get new ones.'),
  switched: notice('success', 'Switched account.'),
  two_factor_off: notice('success', 'Two-factor sign-in is off.'),
  confirmed: notice('success', 'Confirmed.'),
};

/** Why two-factor cannot be turned off: the accounts that require it, by name. */
function requiredByText(accounts: string[]): string {
  const list = accounts.length === 1 ? accounts[0] : `${accounts.slice(0, -1).join(', ')} and ${accounts.at(-1)}`;
  return `Two-factor sign-in cannot be turned off: ${list} ${accounts.length === 1 ? 'requires' : 'require'} it of every member.`;
}

export function accountRoutes(app: FastifyInstance, web: Web): void {
  const { ctx } = web;
  const guarded = { preHandler: [web.authenticated, web.sessionCsrf] };
  const signedIn = { preHandler: web.authenticated };
  const viewOf = (request: FastifyRequest): View => web.view(request, 'live');

  const accountPage = async (request: FastifyRequest, reply: FastifyReply, problem?: { status: number; message: Slot }) => {
    const view = viewOf(request);
    const { session } = view;
    const memberships = await listMemberships(ctx.db.kysely, session.personId);
    const rows = memberships.map(
      (m) => html`<tr data-account="${m.accountId}">
  <td data-label="Account">${m.accountEmail}</td>
  <td data-label="Your role"><span class="pill" data-role="${m.role}">${m.role}</span></td>
  <td class="actions">${
    m.accountId === session.accountId
      ? html`<strong>Current</strong>`
      : html`<form method="post" action="/account/switch" class="inline-form">${csrfField(view.csrf)}<input type="hidden" name="account" value="${m.accountId}"><button type="submit" class="button button-secondary button-small" data-testid="switch-${m.accountId}">Switch</button></form>`
  }</td>
</tr>`,
    );
    const requiredBy = session.twoFactor ? await accountsRequiringTwoFactor(ctx.db.kysely, session.personId) : [];
    const twoFactor = session.twoFactor
      ? html`<p data-testid="two-factor-status">Two-factor sign-in is <strong>on</strong>.</p>
${
  requiredBy.length > 0
    ? html`<p class="hint" data-testid="two-factor-required-by">${requiredByText(requiredBy)}</p>`
    : html`<form method="post" action="/account/two-factor/disable" class="stack">
  ${csrfField(view.csrf)}
  <div class="field"><label for="disable-code">Code from your app, to turn it off</label><input id="disable-code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required></div>
  <p><button type="submit" class="button button-danger">Turn off two-factor sign-in</button></p>
</form>`
}`
      : html`<p data-testid="two-factor-status">Two-factor sign-in is <strong>off</strong>.</p>
<p><a class="button button-primary" href="/account/two-factor" data-testid="enable-two-factor">Turn on two-factor sign-in</a></p>`;
    const body = html`<div class="page-head"><h1>Your account</h1></div>
<p class="lead">Signed in as <strong>${session.email}</strong>, ${session.role} of ${session.accountEmail}.</p>
<p><a class="button button-secondary" href="/account/notifications" data-testid="notifications-link">Notifications</a></p>
${may(session.role, 'GET', '/team') ? html`<p class="button-row"><a class="button button-secondary" href="/team" data-testid="team-link">Team</a> <a class="button button-secondary" href="/activity" data-testid="activity-link">Activity</a></p>` : ''}
<section class="card" aria-labelledby="accounts-heading">
  <h2 id="accounts-heading">Accounts you belong to</h2>
  <div class="table-wrap" tabindex="0" role="region" aria-label="Your accounts"><table class="table">
  <caption class="visually-hidden">Accounts you belong to</caption>
  <thead><tr><th scope="col">Account</th><th scope="col">Your role</th><th scope="col"><span class="visually-hidden">Switch</span></th></tr></thead>
  <tbody>${rows}</tbody></table></div>
</section>
<section class="card section" aria-labelledby="two-factor-heading">
  <h2 id="two-factor-heading">Two-factor sign-in</h2>
  ${twoFactor}
</section>
${emailSection(view)}`;
    const status = problem ? notice('error', problem.message) : (NOTICES[field(request.query, 'notice')] ?? emailNotices(ctx.brand.name)[field(request.query, 'notice')]);
    return sendHtml(reply, dashboardPage(view, { title: 'Your account', section: 'account', body, notice: status }), problem?.status ?? 200);
  };

  app.get('/account', signedIn, (request, reply) => accountPage(request, reply));

  app.post('/account/switch', guarded, async (request, reply) => {
    const { session } = viewOf(request);
    const target = field(request.body, 'account');
    const memberships = await listMemberships(ctx.db.kysely, session.personId);
    if (!memberships.some((m) => m.accountId === target)) return redirect(reply, '/account');
    await switchSessionAccount(ctx.db, session.idHash, target);
    return redirect(reply, '/?notice=switched');
  });

  const enrolPage = async (request: FastifyRequest, reply: FastifyReply, error?: string) => {
    const view = viewOf(request);
    const { session } = view;
    if (session.twoFactor) return redirect(reply, '/account');
    const enrolment =
      (await pendingEnrolment(ctx.db, session.personId, session.email, ctx.brand.name)) ?? (await startEnrolment(ctx.db, session.personId, session.email, ctx.brand.name));
    const body = html`<div class="page-head"><h1>Turn on two-factor sign-in</h1></div>
<section class="card" aria-labelledby="enrol-heading">
  <h2 id="enrol-heading">1. Add ${ctx.brand.name} to your authenticator app</h2>
  <p>Scan this QR code with an authenticator app (Google Authenticator, 1Password, Authy…), or type the secret in.</p>
  <p><img src="/account/two-factor/qr.svg" width="200" height="200" alt="QR code for your authenticator app (the secret is also shown below)" class="qr"></p>
  ${copyField('totp-secret', enrolment.secret, 'secret', { className: 'mono' })}
  <h2>2. Enter the code it shows</h2>
  <form method="post" action="/account/two-factor" class="stack" novalidate>
    ${csrfField(view.csrf)}
    <div class="field">
      <label for="code">6-digit code</label>
      <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required${error ? html` aria-invalid="true" aria-describedby="code-error"` : ''}>
      ${error ? html`<p id="code-error" class="field-error">${error}</p>` : ''}
    </div>
    <p><button type="submit" class="button button-primary">Turn on</button></p>
  </form>
</section>`;
    return sendHtml(reply, dashboardPage(view, { title: 'Two-factor sign-in', section: 'account', body, notice: NOTICES[field(request.query, 'notice')] }), error ? 400 : 200);
  };

  app.get('/account/two-factor', signedIn, (request, reply) => enrolPage(request, reply));

  app.get('/account/two-factor/qr.svg', signedIn, async (request, reply) => {
    const { session } = viewOf(request);
    const enrolment = await pendingEnrolment(ctx.db, session.personId, session.email, ctx.brand.name);
    if (!enrolment) return reply.code(404).type('text/plain; charset=utf-8').send('No enrolment in progress.');
    return reply
      .header('cache-control', 'private, no-store')
      .type('image/svg+xml')
      .send(await qrSvg(enrolment.uri));
  });

  app.post('/account/two-factor', guarded, async (request, reply) => {
    const view = viewOf(request);
    const { session } = view;
    if (!(await reserveLoginAttempt(ctx.db, session.email, request.ip))) return enrolPage(request, reply, 'Too many wrong codes. Wait 15 minutes and try again.');
    const codes = await confirmEnrolment(ctx.db, session.personId, field(request.body, 'code'));
    if (!codes) {
      return enrolPage(request, reply, 'That code is not right. Enter the code your app shows now.');
    }
    await clearLoginFailures(ctx.db, session.email);
    await markSecondFactor(ctx.db, session.idHash);
    await dashboardAudit(ctx.db.kysely, request, { action: 'two_factor.enable', session });
    const list = codes.map((c) => html`<li><code>${c}</code></li>`);
    const body = html`<div class="page-head"><h1>Two-factor sign-in is on</h1></div>
<section class="card new-key-card" aria-labelledby="codes-heading">
  <h2 id="codes-heading">Your recovery codes</h2>
  ${notice('warning', html`<strong>Save these codes now.</strong> They are shown only once. Each works once, instead of a code from your app, if you lose your device.`)}
  <ol class="recovery-codes mono" data-testid="recovery-codes">${list}</ol>
  <p><a class="button button-primary" href="/account">I have saved them</a></p>
</section>`;
    return sendHtml(reply, dashboardPage(view, { title: 'Recovery codes', section: 'account', body }));
  });

  app.post('/account/two-factor/disable', guarded, async (request, reply) => {
    const { session } = viewOf(request);
    const requiredBy = await accountsRequiringTwoFactor(ctx.db.kysely, session.personId);
    if (requiredBy.length > 0) return accountPage(request, reply, { status: 409, message: requiredByText(requiredBy) });
    const attempt = await reserveLoginAttempt(ctx.db, session.email, request.ip);
    if (!attempt) return accountPage(request, reply, { status: 429, message: 'Too many wrong codes. Wait 15 minutes and try again.' });
    const result = await verifySecondFactor(ctx.db, session.personId, field(request.body, 'code'));
    if (!result.ok) return accountPage(request, reply, { status: 401, message: 'That code is not right, or was already used. Two-factor sign-in is still on.' });
    await releaseLoginAttempt(ctx.db, attempt);
    const off = await turnOffTwoFactor(ctx.db, session.personId, (tx) => dashboardAudit(tx, request, { action: 'two_factor.disable', session }));
    if (!off.ok) return accountPage(request, reply, { status: 409, message: requiredByText(off.requiredBy) });
    return redirect(reply, '/login?notice=logged_out');
  });

  const confirmPage = (view: View, next: string, error?: string) =>
    dashboardPage(view, {
      title: 'Confirm it is you',
      section: 'account',
      body: html`<div class="page-head"><h1>Confirm it is you</h1></div>
<section class="card" aria-labelledby="confirm-heading">
  <h2 id="confirm-heading">Enter your two-factor code</h2>
  <p>Revealing a live key, changing a webhook endpoint or the team asks for your code again when you last gave it more than 10 minutes ago.</p>
  <form method="post" action="/account/confirm" class="stack" novalidate>
    ${csrfField(view.csrf)}
    <input type="hidden" name="next" value="${next}">
    <div class="field">
      <label for="code">Code or recovery code</label>
      <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required autofocus${error ? html` aria-invalid="true" aria-describedby="code-error"` : ''}>
      ${error ? html`<p id="code-error" class="field-error">${error}</p>` : ''}
    </div>
    <p><button type="submit" class="button button-primary">Confirm</button></p>
  </form>
</section>`,
    });

  app.get('/account/confirm', signedIn, async (request, reply) => {
    const view = viewOf(request);
    const next = safeNext(field(request.query, 'next'));
    if (!view.session.twoFactor) return redirect(reply, next);
    return sendHtml(reply, confirmPage(view, next));
  });

  app.post('/account/confirm', guarded, async (request, reply) => {
    const view = viewOf(request);
    const { session } = view;
    const next = safeNext(field(request.body, 'next'));
    if (!(await reserveLoginAttempt(ctx.db, session.email, request.ip)))
      return sendHtml(reply, confirmPage(view, next, 'Too many wrong codes. Wait 15 minutes and try again.'), 429);
    const result = await verifySecondFactor(ctx.db, session.personId, field(request.body, 'code'));
    if (!result.ok) {
      return sendHtml(reply, confirmPage(view, next, 'That code is not right, or was already used.'), 401);
    }
    await clearLoginFailures(ctx.db, session.email);
    await markSecondFactor(ctx.db, session.idHash);
    return redirect(reply, next);
  });
}
