import { DEFAULT_BRAND } from '../../../domain/brand.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isSecretFormat, newSecret } from '../../../accounts/secrets.js';
import { PASSWORD_MIN_LENGTH } from '../../../accounts/passwords.js';
import { recordAudit } from '../../../audit/audit.js';
import { createOperatorSession, deleteOperatorSession, findOperatorSession, OPERATOR_MAX_AGE_MS, type OperatorStage } from '../../../operator/operator-sessions.js';
import { operatorCodeSignIn, operatorPasswordSignIn } from '../../../operator/operator-sign-in.js';
import { confirmOperatorEnrolment, operatorEnrolment } from '../../../operator/operator-two-factor.js';
import { checkOperatorLink, setOperatorPassword } from '../../../operator/operators.js';
import { qrSvg } from '../../../ton/transfer-link.js';
import { brandMark, csrfField, document, errorPage, notice } from '../../html/document.js';
import { html, type Slot } from '../../html/html.js';
import { signInForm } from '../../html/sign-in.js';
import { cookieOptions, crossSite, field, redirect, safeNext, sendHtml } from '../../html/http.js';
import { type Console, OPERATOR_COOKIE, OPERATOR_PRE_COOKIE } from '../console.js';

/**
 * Signing in to the console: the one-time set-password link, the password, the two-factor
 * enrolment every operator goes through at the first sign-in, the code on every later one,
 * and sign-out. Signed-out forms carry a CSRF token bound to a random pre-session cookie; the
 * forms of a session in progress, one bound to that session.
 */
function signedOutPage(title: string, body: Slot, status?: Slot) {
  return document(DEFAULT_BRAND, {
    title: `${title} · Console`,
    bodyClass: 'signed-out',
    body: html`<main id="main" class="auth">
  <p class="brand auth-brand">${brandMark(DEFAULT_BRAND)} <span class="muted">Operator console</span></p>
  <div class="card auth-card">
    <h1>${title}</h1>
    ${status ?? ''}
    ${body}
  </div>
</main>`,
  });
}

const cookie = (request: FastifyRequest, maxAgeS?: number) => ({ ...cookieOptions(request, maxAgeS), sameSite: 'strict' as const });

export function authRoutes(app: FastifyInstance, web: Console): void {
  const { ctx, csrf } = web;
  // A token in the URL: the request log records URLs at info, these routes log at warn and above.
  const quiet = { logLevel: 'warn' as const };

  const preToken = (request: FastifyRequest, reply: FastifyReply) => {
    let value = request.cookies[OPERATOR_PRE_COOKIE];
    if (!isSecretFormat(value)) {
      value = newSecret();
      reply.setCookie(OPERATOR_PRE_COOKIE, value, cookie(request));
    }
    return csrf.forPreSession(value);
  };
  const preValid = (request: FastifyRequest) => {
    const value = request.cookies[OPERATOR_PRE_COOKIE];
    return !crossSite(request) && isSecretFormat(value) && csrf.check(csrf.forPreSession(value), field(request.body, '_csrf'));
  };
  const refuse = (reply: FastifyReply) =>
    sendHtml(
      reply,
      errorPage(DEFAULT_BRAND, 403, 'This form has expired', 'For your security the form could not be accepted. Reload the page and submit it again.', {
        href: '/login',
        label: 'Sign in',
      }),
      403,
    );

  /** A new session (a new id: no fixation), replacing the browser's previous one. */
  const startSession = async (request: FastifyRequest, reply: FastifyReply, operatorId: string, stage: OperatorStage) => {
    const previous = await findOperatorSession(ctx.db, request.cookies[OPERATOR_COOKIE]);
    if (previous) await deleteOperatorSession(ctx.db, previous.idHash);
    const { id } = await createOperatorSession(ctx.db, operatorId, stage);
    reply.setCookie(OPERATOR_COOKIE, id, cookie(request, OPERATOR_MAX_AGE_MS / 1000));
  };

  /** The session of a sign-in in progress at `stage`. */
  const pending = async (request: FastifyRequest, stage: OperatorStage) => {
    const session = await findOperatorSession(ctx.db, request.cookies[OPERATOR_COOKIE]);
    return session?.stage === stage ? session : undefined;
  };

  // The set-password link printed by `starport operator create`.
  const passwordForm = (token: string, linkToken: string, email: string, status?: Slot) =>
    signedOutPage(
      'Choose your password',
      html`<p>You are setting the console password of <strong>${email}</strong>. Two-factor sign-in is set up next.</p>
<form method="post" action="/set-password" class="stack" novalidate>
  ${csrfField(token)}
  <input type="hidden" name="token" value="${linkToken}">
  <input type="email" name="username" value="${email}" autocomplete="username" hidden>
  <div class="field">
    <label for="password">New password</label>
    <input id="password" name="password" type="password" autocomplete="new-password" required minlength="${PASSWORD_MIN_LENGTH}" aria-describedby="password-hint" autofocus>
    <p id="password-hint" class="hint">At least ${PASSWORD_MIN_LENGTH} characters.</p>
  </div>
  <div class="field">
    <label for="password-again">The same password again</label>
    <input id="password-again" name="password_again" type="password" autocomplete="new-password" required>
  </div>
  <button type="submit" class="button button-primary button-block">Set password</button>
</form>`,
      status,
    );
  const badLink = (message: string) => signedOutPage('This link does not work', html`<p>${message}</p><p><a href="/login">Sign in</a></p>`);

  app.get('/set-password', { config: { access: 'public' }, ...quiet }, async (request, reply) => {
    const linkToken = field(request.query, 'token');
    const checked = await checkOperatorLink(ctx.db.kysely, linkToken);
    if (!checked.ok) return sendHtml(reply, badLink(checked.message), 410);
    reply.header('referrer-policy', 'no-referrer');
    return sendHtml(reply, passwordForm(preToken(request, reply), linkToken, checked.operator.email));
  });

  app.post('/set-password', { config: { access: 'public' }, ...quiet }, async (request, reply) => {
    if (!preValid(request)) return refuse(reply);
    const linkToken = field(request.body, 'token');
    const password = field(request.body, 'password');
    const checked = await checkOperatorLink(ctx.db.kysely, linkToken);
    if (!checked.ok) return sendHtml(reply, badLink(checked.message), 410);
    const again = (message: string) => sendHtml(reply, passwordForm(preToken(request, reply), linkToken, checked.operator.email, notice('error', message)), 400);
    if (password !== field(request.body, 'password_again')) return again('The two passwords are not the same.');
    const result = await setOperatorPassword(ctx.db, { token: linkToken, password, ip: request.ip });
    if (!result.ok) return again(result.message);
    // The password is proven; two-factor is not set up yet (or is, after a new link): the next stage.
    await startSession(request, reply, result.operator.id, result.operator.twoFactor ? 'second_factor' : 'enrol');
    return redirect(reply, result.operator.twoFactor ? '/login/code' : '/enrol');
  });

  const loginForm = (token: string, options: { email?: string; next?: string; status?: Slot } = {}) =>
    signedOutPage(
      'Sign in to the console',
      html`${signInForm({ csrf: token, email: options.email, next: options.next, submit: 'Sign in' })}
<div class="auth-links"><p>Console access is given by an administrator with <code>starport operator create</code>.</p></div>`,
      options.status,
    );

  app.get('/login', { config: { access: 'public' } }, async (request, reply) => {
    const current = await findOperatorSession(ctx.db, request.cookies[OPERATOR_COOKIE]);
    if (current) return redirect(reply, current.stage === 'active' ? '/' : current.stage === 'enrol' ? '/enrol' : '/login/code');
    const query = request.query;
    const status = field(query, 'notice') === 'signed_out' ? notice('success', 'You are signed out.') : undefined;
    return sendHtml(reply, loginForm(preToken(request, reply), { next: safeNext(field(query, 'next')), status }));
  });

  app.post('/login', { config: { access: 'public' } }, async (request, reply) => {
    if (!preValid(request)) return refuse(reply);
    const email = field(request.body, 'email');
    const next = safeNext(field(request.body, 'next'));
    const result = await operatorPasswordSignIn(ctx.db, { email, password: field(request.body, 'password'), ip: request.ip });
    if (!result.ok) {
      const message = result.reason === 'throttled' ? 'Too many failed attempts. Wait 15 minutes and try again.' : 'Incorrect e-mail or password.';
      return sendHtml(reply, loginForm(preToken(request, reply), { email, next, status: notice('error', message) }), result.reason === 'throttled' ? 429 : 401);
    }
    const stage = result.operator.twoFactor ? 'second_factor' : 'enrol';
    await startSession(request, reply, result.operator.id, stage);
    const query = next === '/' ? '' : `?next=${encodeURIComponent(next)}`;
    return redirect(reply, `${stage === 'enrol' ? '/enrol' : '/login/code'}${query}`);
  });

  const codeForm = (token: string, next: string, status?: Slot) =>
    signedOutPage(
      'Enter your code',
      html`<p>Open your authenticator app and enter the 6-digit code for Starport's operator console.</p>
<form method="post" action="/login/code" class="stack" novalidate>
  ${csrfField(token)}
  <input type="hidden" name="next" value="${next}">
  <div class="field">
    <label for="code">Code</label>
    <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required autofocus spellcheck="false">
  </div>
  <button type="submit" class="button button-primary button-block">Continue</button>
</form>
<div class="auth-links"><p>Lost your device? An administrator gives you a new link with <code>starport operator link</code>; you then set up two-factor again.</p></div>`,
      status,
    );

  app.get('/login/code', { config: { access: 'public' } }, async (request, reply) => {
    const session = await pending(request, 'second_factor');
    if (!session) return redirect(reply, '/login');
    return sendHtml(reply, codeForm(csrf.forSession(session.idHash), safeNext(field(request.query, 'next'))));
  });

  app.post('/login/code', { config: { access: 'public' } }, async (request, reply) => {
    const session = await pending(request, 'second_factor');
    if (!session) return redirect(reply, '/login');
    if (crossSite(request) || !csrf.check(csrf.forSession(session.idHash), field(request.body, '_csrf'))) return refuse(reply);
    const next = safeNext(field(request.body, 'next'));
    const outcome = await operatorCodeSignIn(ctx.db, { id: session.operatorId, email: session.email }, field(request.body, 'code'), request.ip);
    if (outcome !== 'ok') {
      const message = outcome === 'throttled' ? 'Too many failed attempts. Wait 15 minutes and try again.' : 'That code is not right, or was already used. Try the current code.';
      return sendHtml(reply, codeForm(csrf.forSession(session.idHash), next, notice('error', message)), outcome === 'throttled' ? 429 : 401);
    }
    await startSession(request, reply, session.operatorId, 'active');
    return redirect(reply, next);
  });

  const enrolForm = (token: string, secret: string, next: string, status?: Slot) =>
    signedOutPage(
      'Set up two-factor sign-in',
      html`<p>The console requires two-factor sign-in. Scan this QR code with an authenticator app, or type the secret in, then enter the code it shows.</p>
<p><img src="/enrol/qr.svg" width="200" height="200" alt="QR code for your authenticator app (the secret is also shown below)" class="qr"></p>
<p>Secret: <code data-testid="totp-secret">${secret}</code></p>
<form method="post" action="/enrol" class="stack" novalidate>
  ${csrfField(token)}
  <input type="hidden" name="next" value="${next}">
  <div class="field">
    <label for="code">Code from the app</label>
    <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required spellcheck="false">
  </div>
  <button type="submit" class="button button-primary button-block">Turn on and continue</button>
</form>`,
      status,
    );

  app.get('/enrol', { config: { access: 'public' } }, async (request, reply) => {
    const session = await pending(request, 'enrol');
    if (!session) return redirect(reply, '/login');
    const enrolment = await operatorEnrolment(ctx.db, session.operatorId, session.email);
    if (!enrolment) return redirect(reply, '/login');
    return sendHtml(reply, enrolForm(csrf.forSession(session.idHash), enrolment.secret, safeNext(field(request.query, 'next'))));
  });

  app.get('/enrol/qr.svg', { config: { access: 'public' } }, async (request, reply) => {
    const session = await pending(request, 'enrol');
    const enrolment = session && (await operatorEnrolment(ctx.db, session.operatorId, session.email));
    if (!enrolment) return sendHtml(reply, errorPage(DEFAULT_BRAND, 404, 'Not found', 'No enrolment in progress.', { href: '/login', label: 'Sign in' }), 404);
    return reply.type('image/svg+xml').send(await qrSvg(enrolment.uri));
  });

  app.post('/enrol', { config: { access: 'public' } }, async (request, reply) => {
    const session = await pending(request, 'enrol');
    if (!session) return redirect(reply, '/login');
    if (crossSite(request) || !csrf.check(csrf.forSession(session.idHash), field(request.body, '_csrf'))) return refuse(reply);
    const next = safeNext(field(request.body, 'next'));
    if (!(await confirmOperatorEnrolment(ctx.db, session.operatorId, field(request.body, 'code'), request.ip))) {
      const enrolment = await operatorEnrolment(ctx.db, session.operatorId, session.email);
      if (!enrolment) return redirect(reply, '/login');
      return sendHtml(
        reply,
        enrolForm(csrf.forSession(session.idHash), enrolment.secret, next, notice('error', 'That code is not right. Check the time on your device and try the current code.')),
        401,
      );
    }
    await ctx.db.kysely
      .transaction()
      .execute((tx) => recordAudit(tx, { actor: session.email, source: 'console', operatorId: session.operatorId, ip: request.ip, action: 'operator.sign_in', now: Date.now() }));
    await startSession(request, reply, session.operatorId, 'active');
    return redirect(reply, next);
  });

  app.post('/logout', { config: { access: 'public' } }, async (request, reply) => {
    const session = await findOperatorSession(ctx.db, request.cookies[OPERATOR_COOKIE]);
    if (session) {
      if (crossSite(request) || !csrf.check(csrf.forSession(session.idHash), field(request.body, '_csrf'))) return refuse(reply);
      await deleteOperatorSession(ctx.db, session.idHash);
      await ctx.db.kysely
        .transaction()
        .execute((tx) =>
          recordAudit(tx, { actor: session.email, source: 'console', operatorId: session.operatorId, ip: request.ip, action: 'operator.sign_out', now: Date.now() }),
        );
    }
    reply.clearCookie(OPERATOR_COOKIE, cookie(request));
    return redirect(reply, '/login?notice=signed_out');
  });
}
