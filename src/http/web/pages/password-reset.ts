import type { FastifyInstance, FastifyRequest } from 'fastify';
import { admitPasswordReset, checkResetLink, resetPassword, sendPasswordReset } from '../../../accounts/password-reset.js';
import { DEFAULT_BRAND_NAME } from '../../../domain/brand.js';
import { html, type Slot } from '../../html/html.js';
import { field, redirect, sendHtml } from '../../html/http.js';
import { authPage, csrfField, errorPage, notice } from '../layout.js';
import type { Web } from '../web.js';
import { signedOutForms, tokenRouteOptions, newPasswordFields } from '../signed-out.js';

/**
 * "Forgot your password?" (docs/dashboard.md "Verified e-mail, password reset and invites by
 * e-mail"): the form on the login page, the same answer for every address (the page names
 * none, and src/accounts/password-reset.ts does the same work for known and unknown ones), and
 * the one-time link that sets a new password. The link's token is in the path: these routes log
 * at warn only and send no referrer, as /set-password/:token.
 */
export function passwordResetRoutes(app: FastifyInstance, web: Web): void {
  const { ctx, csrf } = web;
  const { preToken, preCsrfValid, refuse } = signedOutForms(csrf, ctx.brand);

  const forgotForm = (token: string) =>
    authPage(ctx.brand, {
      title: 'Forgot your password?',
      heading: 'Reset your password',
      body: html`<p>Enter the e-mail address you sign in with. We will send it a link to choose a new password.</p>
<form method="post" action="/forgot-password" class="stack" novalidate>
  ${csrfField(token)}
  <div class="field">
    <label for="email">E-mail</label>
    <input id="email" name="email" type="email" autocomplete="username" required autofocus maxlength="254">
  </div>
  <button type="submit" class="button button-primary button-block">Send me a link</button>
</form>
<div class="auth-links">
  <p>No e-mail arrives? Your ${ctx.brand.name} operator can still give you a link${ctx.brand.name === DEFAULT_BRAND_NAME ? html` (<code>starport account invite</code>)` : ''}.</p>
  <p><a href="/login">Back to the login page</a></p>
</div>`,
    });

  // The one answer, whatever the address: it names nothing that depends on it.
  const sentPage = authPage(ctx.brand, {
    title: 'Check your e-mail',
    heading: 'Check your e-mail',
    body: html`<p data-testid="reset-sent">If that address signs in to ${ctx.brand.name}, we have sent it a link to choose a new password. The link works once, for one hour.</p>
<p>Nothing within a few minutes? Check your spam folder, or ask again later: a few links an hour are sent to one address at most.</p>
<div class="auth-links"><p><a href="/login">Back to the login page</a></p></div>`,
  });

  app.get('/forgot-password', async (request, reply) => sendHtml(reply, forgotForm(preToken(request, reply))));

  // The lookup and the mail run once the answer is sent: its time is the same for every address.
  const afterAnswer = new WeakMap<FastifyRequest, () => Promise<void>>();
  const onResponse = async (request: FastifyRequest) => {
    const work = afterAnswer.get(request);
    if (!work) return;
    // On a later turn of the event loop: SQLite's driver is synchronous, and work started in
    // this turn would run before whatever awaits the answer in this process.
    setImmediate(() => {
      work().catch((error: unknown) => request.log.error({ err: error }, 'password reset link not sent'));
    });
  };
  app.post('/forgot-password', { onResponse }, async (request, reply) => {
    if (!preCsrfValid(request)) return refuse(request, reply);
    const email = await admitPasswordReset(ctx.db, { email: field(request.body, 'email'), ip: request.ip });
    if (email !== undefined) {
      const origin = ctx.linkOrigin();
      afterAnswer.set(request, () => sendPasswordReset(ctx.db, { email, origin, brand: ctx.brand.name }));
    }
    return sendHtml(reply, sentPage);
  });

  const quiet = tokenRouteOptions(app);
  const linkProblem = (message: string) =>
    errorPage(ctx.brand, 404, 'This link does not work', html`${message} <a href="/forgot-password">Ask for a new link</a>.`, { href: '/login', label: 'Go to the login page' });

  const resetForm = (token: string, linkToken: string, email: string, status?: Slot) =>
    authPage(ctx.brand, {
      title: 'Choose a new password',
      heading: 'Choose a new password',
      status,
      body: html`<p>For <strong>${email}</strong>. This link works once. Every session of yours ends when the password is changed; two-factor sign-in stays as it is.</p>
<form method="post" action="/reset-password/${linkToken}" class="stack" novalidate>
  ${csrfField(token)}
  ${newPasswordFields(email, { password: 'New password', again: 'Repeat the new password' })}
  <button type="submit" class="button button-primary button-block">Set the new password</button>
</form>`,
    });

  app.get('/reset-password/:token', quiet, async (request, reply) => {
    reply.header('referrer-policy', 'no-referrer');
    const { token } = request.params as { token: string };
    const link = await checkResetLink(ctx.db, token);
    if (!link.ok) return sendHtml(reply, linkProblem(link.message), 404);
    return sendHtml(reply, resetForm(preToken(request, reply), token, link.email));
  });

  app.post('/reset-password/:token', quiet, async (request, reply) => {
    reply.header('referrer-policy', 'no-referrer');
    if (!preCsrfValid(request)) return refuse(request, reply);
    const { token } = request.params as { token: string };
    const link = await checkResetLink(ctx.db, token);
    if (!link.ok) return sendHtml(reply, linkProblem(link.message), 404);
    const password = field(request.body, 'password');
    if (password !== field(request.body, 'password_again')) {
      return sendHtml(reply, resetForm(preToken(request, reply), token, link.email, notice('error', 'The two passwords are different.')), 400);
    }
    const result = await resetPassword(ctx.db, token, password, Date.now(), ctx.brand.name);
    if (!result.ok) {
      if (result.reason === 'weak_password') return sendHtml(reply, resetForm(preToken(request, reply), token, link.email, notice('error', result.message)), 400);
      return sendHtml(reply, linkProblem(result.message), 404);
    }
    return redirect(reply, '/login?notice=password_reset');
  });
}
