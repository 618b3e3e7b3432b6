import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkPasswordLink, logIn, passwordLinkProblem, signUp, usePasswordLink } from '../../../accounts/dashboard-users.js';
import { PASSWORD_MIN_LENGTH } from '../../../accounts/passwords.js';
import { normalizeEmail } from '../../../accounts/accounts.js';
import { clearLoginFailures, reserveLoginAttempt } from '../../../accounts/auth-throttle.js';
import { findPersonByEmail } from '../../../accounts/people.js';
import { createSession, deleteSession, findSession, SESSION_MAX_AGE_MS, type SessionStage } from '../../../accounts/sessions.js';
import { listMemberships } from '../../../accounts/team.js';
import { verifySecondFactor } from '../../../accounts/two-factor.js';
import type { Brand } from '../../../domain/brand.js';
import { dashboardAudit } from '../audit.js';
import { html, type Slot } from '../../html/html.js';
import { emailField, signInForm } from '../../html/sign-in.js';
import { cookieOptions, crossSite, field, redirect, safeNext, sendHtml, SESSION_COOKIE } from '../../html/http.js';
import { authPage, csrfField, errorPage, notice } from '../layout.js';
import { newAccountKeysPage } from './keys.js';
import type { Web } from '../web.js';
import { signedOutForms, tokenRouteOptions, newPasswordFields } from '../signed-out.js';

/** Log in (password, then the two-factor code when on), sign up, log out, and the one-time set-password link (invite and reset). */
const LOGIN_NOTICES: Record<string, Slot> = {
  logged_out: notice('success', 'You are logged out.'),
  expired: notice('info', 'Your session has ended. Log in again to continue.'),
  removed: notice(
    'warning',
    'You no longer belong to that account: an owner removed you from its team. Log in again to open another account of yours, or ask an owner to invite you again.',
  ),
  disabled: notice('warning', 'The account you were looking at is disabled. Contact support.'),
  password_reset: notice('success', 'Your password was changed and every session of yours was ended. Log in with the new password.'),
};

const LOGIN_ERRORS = {
  invalid: () => 'Incorrect e-mail or password.',
  throttled: () => 'Too many failed attempts. Wait 15 minutes and try again, or reset your password with "Forgot your password?".',
  disabled: () => 'This account is disabled. Contact support.',
  removed: (name: string) => `You no longer belong to any ${name} account: you were removed from its team. Ask an owner of the account to invite you again.`,
} as const;
const LOGIN_STATUS = { invalid: 401, throttled: 429, disabled: 403, removed: 403 } as const;

/** Sign-up names the terms and the privacy policy the operator set (docs/operations.md "Branding"). */
function legalConsent(brand: Brand): Slot {
  const links = [
    brand.termsUrl && html`<a href="${brand.termsUrl}" data-testid="signup-terms">Terms of service</a>`,
    brand.privacyUrl && html`<a href="${brand.privacyUrl}" data-testid="signup-privacy">Privacy policy</a>`,
  ].filter((link) => link !== undefined);
  if (links.length === 0) return '';
  return html`<p class="hint">By creating an account you accept the ${links.length === 2 ? html`${links[0]} and the ${links[1]}` : links[0]}.</p>`;
}

export function authRoutes(app: FastifyInstance, web: Web): void {
  const { ctx, csrf } = web;
  const { brand } = ctx;
  const { preToken, preCsrfValid, refuse } = signedOutForms(csrf, brand);

  /** A new session (new id: no fixation), replacing whatever session the browser had. */
  const startSession = async (request: FastifyRequest, reply: FastifyReply, personId: string, accountId: string, stage: SessionStage = 'active') => {
    const previous = await findSession(ctx.db, request.cookies[SESSION_COOKIE]);
    if (previous) await deleteSession(ctx.db, previous.idHash);
    const { id, session } = await createSession(ctx.db, personId, accountId, { stage });
    reply.setCookie(SESSION_COOKIE, id, cookieOptions(request, SESSION_MAX_AGE_MS / 1000));
    return session;
  };

  /** A failed sign-in is in the activity log of every account the e-mail is a member of. */
  const auditFailure = async (request: FastifyRequest, email: string, step: 'password' | 'code') => {
    const person = await findPersonByEmail(ctx.db.kysely, normalizeEmail(email));
    if (!person) return;
    for (const m of await listMemberships(ctx.db.kysely, person.id)) {
      await dashboardAudit(ctx.db.kysely, request, { action: 'dashboard.sign_in_failed', actor: person.email, accountId: m.accountId, details: { step } });
    }
  };

  const codeForm = (token: string, next: string, status?: Slot) =>
    authPage(brand, {
      title: 'Two-factor code',
      heading: 'Enter your code',
      status,
      body: html`<p>Open your authenticator app and enter the 6-digit code for ${brand.name}. Lost your device? Enter one of your recovery codes instead.</p>
<form method="post" action="/login/code" class="stack" novalidate>
  ${csrfField(token)}
  <input type="hidden" name="next" value="${next}">
  <div class="field">
    <label for="code">Code</label>
    <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required autofocus spellcheck="false">
  </div>
  <button type="submit" class="button button-primary button-block">Continue</button>
</form>
<div class="auth-links"><p>Lost both your device and your recovery codes? Ask your ${brand.name} operator to reset two-factor sign-in.</p></div>`,
    });

  const pendingSession = async (request: FastifyRequest) => {
    const session = await findSession(ctx.db, request.cookies[SESSION_COOKIE]);
    return session?.stage === 'second_factor' ? session : undefined;
  };

  app.get('/login/code', async (request, reply) => {
    const session = await pendingSession(request);
    if (!session) return redirect(reply, '/login');
    return sendHtml(reply, codeForm(csrf.forSession(session.idHash), safeNext(field(request.query, 'next'))));
  });

  app.post('/login/code', async (request, reply) => {
    const session = await pendingSession(request);
    if (!session) return redirect(reply, '/login?notice=expired');
    if (crossSite(request) || !csrf.check(csrf.forSession(session.idHash), field(request.body, '_csrf'))) return refuse(request, reply);
    const next = safeNext(field(request.body, 'next'));
    const token = csrf.forSession(session.idHash);
    // The password's throttle covers the code too: the same counters per e-mail and per IP,
    // the attempt counted before the code is checked.
    if (!(await reserveLoginAttempt(ctx.db, session.email, request.ip))) return sendHtml(reply, codeForm(token, next, notice('error', LOGIN_ERRORS.throttled())), 429);
    const result = await verifySecondFactor(ctx.db, session.personId, field(request.body, 'code'));
    if (!result.ok) {
      await auditFailure(request, session.email, 'code');
      return sendHtml(reply, codeForm(token, next, notice('error', 'That code is not right, or was already used. Try the current code.')), 401);
    }
    await clearLoginFailures(ctx.db, session.email);
    // A new id now that the sign-in is complete.
    await deleteSession(ctx.db, session.idHash);
    const { id } = await createSession(ctx.db, session.personId, session.accountId, { secondFactorAt: Date.now() });
    reply.setCookie(SESSION_COOKIE, id, cookieOptions(request, SESSION_MAX_AGE_MS / 1000));
    await dashboardAudit(ctx.db.kysely, request, { action: 'dashboard.sign_in', session, details: { second_factor: result.method } });
    const low = result.method === 'recovery_code' && (result.recoveryCodesLeft ?? 0) <= 3 ? '/account?notice=recovery_low' : undefined;
    return redirect(reply, low ?? next);
  });

  const loginForm = (token: string, options: { email?: string; next?: string; status?: Slot } = {}) =>
    authPage(brand, {
      title: 'Log in',
      heading: `Log in to ${brand.name}`,
      status: options.status,
      body: html`${signInForm({ csrf: token, email: options.email, next: options.next, submit: 'Log in' })}
<div class="auth-links">
  ${ctx.signup === 'open' ? html`<p>New to ${brand.name}? <a href="/signup">Create an account</a></p>` : ''}
  <p><a href="/forgot-password">Forgot your password?</a></p>
</div>`,
    });

  app.get('/login', async (request, reply) => {
    const current = await findSession(ctx.db, request.cookies[SESSION_COOKIE]);
    if (current) return redirect(reply, current.stage === 'second_factor' ? '/login/code' : '/');
    const query = request.query as Record<string, unknown>;
    const status = LOGIN_NOTICES[field(query, 'notice')];
    return sendHtml(reply, loginForm(preToken(request, reply), { next: safeNext(field(query, 'next')), status }));
  });

  app.post('/login', async (request, reply) => {
    if (!preCsrfValid(request)) return refuse(request, reply);
    const body = request.body;
    const email = field(body, 'email');
    const next = safeNext(field(body, 'next'));
    const result = await logIn(ctx.db, { email, password: field(body, 'password'), ip: request.ip, brand: brand.name });
    if (!result.ok) {
      if (result.reason === 'invalid') await auditFailure(request, email, 'password');
      const page = loginForm(preToken(request, reply), { email, next, status: notice('error', LOGIN_ERRORS[result.reason](brand.name)) });
      return sendHtml(reply, page, LOGIN_STATUS[result.reason]);
    }
    if (result.twoFactor) {
      await startSession(request, reply, result.personId, result.accountId, 'second_factor');
      return redirect(reply, `/login/code${next === '/' ? '' : `?next=${encodeURIComponent(next)}`}`);
    }
    const session = await startSession(request, reply, result.personId, result.accountId);
    await dashboardAudit(ctx.db.kysely, request, { action: 'dashboard.sign_in', session });
    return redirect(reply, next);
  });

  app.post('/logout', async (request, reply) => {
    const session = await findSession(ctx.db, request.cookies[SESSION_COOKIE]);
    // Without a live session there is nothing to protect: just make sure the cookie is gone.
    if (session) {
      if (crossSite(request) || !csrf.check(csrf.forSession(session.idHash), field(request.body, '_csrf'))) return refuse(request, reply);
      await deleteSession(ctx.db, session.idHash);
    }
    reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
    return redirect(reply, '/login?notice=logged_out');
  });

  const signupClosed = () =>
    authPage(brand, {
      title: 'Sign-up is closed',
      heading: 'Sign-up is closed',
      body: html`<p>New accounts are created by the ${brand.name} team. Ask your contact for an invitation link.</p>
<p><a href="/login">Log in</a> if you already have an account.</p>`,
    });

  const signupForm = (token: string, options: { email?: string; status?: Slot } = {}) =>
    authPage(brand, {
      title: 'Create your account',
      heading: `Create your ${brand.name} account`,
      status: options.status,
      body: html`<form method="post" action="/signup" class="stack" novalidate>
  ${csrfField(token)}
  ${emailField(options.email)}
  <div class="field">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" aria-describedby="password-hint">
    <p id="password-hint" class="hint">At least ${PASSWORD_MIN_LENGTH} characters. A passphrase of a few words is easy to remember.</p>
  </div>
  ${legalConsent(brand)}
  <button type="submit" class="button button-primary button-block">Create account</button>
</form>
<div class="auth-links"><p>Already have an account? <a href="/login">Log in</a></p></div>`,
    });

  app.get('/signup', async (request, reply) => {
    if (ctx.signup === 'closed') return sendHtml(reply, signupClosed(), 403);
    return sendHtml(reply, signupForm(preToken(request, reply)));
  });

  app.post('/signup', async (request, reply) => {
    if (!preCsrfValid(request)) return refuse(request, reply);
    if (ctx.signup === 'closed') return sendHtml(reply, signupClosed(), 403);
    const email = field(request.body, 'email');
    const result = await signUp(ctx.db, { email, password: field(request.body, 'password'), ip: request.ip, origin: ctx.linkOrigin(), brand: brand.name });
    if (!result.ok) {
      const status = result.reason === 'throttled' ? 429 : 400;
      return sendHtml(reply, signupForm(preToken(request, reply), { email, status: notice('error', result.message) }), status);
    }
    const session = await startSession(request, reply, result.personId, result.accountId);
    request.log.info({ account_id: result.accountId }, 'dashboard sign-up: keys shown once');
    // Both keys, once, in this answer (never stored, logged or put in a URL), as after a reissue.
    const view = { session, mode: 'test' as const, csrf: csrf.forSession(session.idHash), brand };
    return sendHtml(reply, newAccountKeysPage(view, { live: result.liveKey, test: result.testKey }));
  });

  const invalidLink = (why: string) =>
    errorPage(brand, 404, 'This link does not work', `${why} Ask your ${brand.name} operator for a new one, or use "Forgot your password?" on the login page.`, {
      href: '/login',
      label: 'Go to the login page',
    });

  const setPasswordForm = (token: string, linkToken: string, email: string, status?: Slot) =>
    authPage(brand, {
      title: 'Set your password',
      heading: 'Set your password',
      status,
      body: html`<p>For <strong>${email}</strong>. This link works once.</p>
<form method="post" action="/set-password/${linkToken}" class="stack" novalidate>
  ${csrfField(token)}
  ${newPasswordFields(email, { password: 'New password', again: 'Repeat the new password' })}
  <button type="submit" class="button button-primary button-block">Set password and log in</button>
</form>`,
    });

  // The token is in the path: no referrer may carry it elsewhere, and the request log (which
  // records URLs at level info) skips these two routes: at least warn, or quieter if configured so.
  const quiet = tokenRouteOptions(app);
  app.get('/set-password/:token', quiet, async (request, reply) => {
    reply.header('referrer-policy', 'no-referrer');
    const { token } = request.params as { token: string };
    const link = await checkPasswordLink(ctx.db, token);
    if (!link) return sendHtml(reply, invalidLink(await passwordLinkProblem(ctx.db, token)), 404);
    return sendHtml(reply, setPasswordForm(preToken(request, reply), token, link.email));
  });

  app.post('/set-password/:token', quiet, async (request, reply) => {
    reply.header('referrer-policy', 'no-referrer');
    if (!preCsrfValid(request)) return refuse(request, reply);
    const { token } = request.params as { token: string };
    const link = await checkPasswordLink(ctx.db, token);
    if (!link) return sendHtml(reply, invalidLink(await passwordLinkProblem(ctx.db, token)), 404);
    const password = field(request.body, 'password');
    if (password !== field(request.body, 'password_again')) {
      return sendHtml(reply, setPasswordForm(preToken(request, reply), token, link.email, notice('error', 'The two passwords are different.')), 400);
    }
    const result = await usePasswordLink(ctx.db, token, password, Date.now(), (tx, used) =>
      dashboardAudit(tx, request, { action: 'dashboard.password_link', actor: link.email, accountId: used.accountId }),
    );
    if (!result.ok) {
      if (result.reason === 'invalid_link') return sendHtml(reply, invalidLink(await passwordLinkProblem(ctx.db, token)), 404);
      return sendHtml(reply, setPasswordForm(preToken(request, reply), token, link.email, notice('error', result.message)), 400);
    }
    // The password is set; a disabled account (or none left) is not signed in to.
    if (!result.accountId) {
      const why = result.member ? LOGIN_ERRORS.disabled() : LOGIN_ERRORS.removed(brand.name);
      return sendHtml(reply, loginForm(preToken(request, reply), { email: link.email, status: notice('error', why) }), 403);
    }
    if (result.twoFactor) {
      await startSession(request, reply, result.personId, result.accountId, 'second_factor');
      return redirect(reply, '/login/code');
    }
    await startSession(request, reply, result.personId, result.accountId);
    return redirect(reply, '/?notice=password_set');
  });
}
