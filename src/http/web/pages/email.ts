import type { FastifyInstance } from 'fastify';
import { confirmEmailChange, requestEmailChange, resendVerification, verifyEmail } from '../../../accounts/email-verification.js';
import { checkEmailToken } from '../../../accounts/email-tokens.js';
import { html, type Html, type Slot } from '../../html/html.js';
import { field, redirect, sendHtml } from '../../html/http.js';
import { authPage, csrfField, errorPage, notice, type View } from '../layout.js';
import type { Web } from '../web.js';
import { signedOutForms, tokenRouteOptions } from '../signed-out.js';

/**
 * The person's sign-in address (docs/dashboard.md "Verified e-mail, password reset and invites
 * by e-mail"): the verification link and a new one on request, and a change of address, which
 * the new address confirms before it takes effect. The links' tokens are in the path: those
 * routes log at warn only and send no referrer.
 */
export const emailNotices = (brandName: string): Record<string, Slot> => ({
  email_verified: notice('success', 'Your e-mail address is verified.'),
  verification_sent: notice('success', 'We sent a new verification link. It works once, for 24 hours.'),
  verification_throttled: notice('error', 'Too many verification links were asked for. Try again in an hour.'),
  email_change_sent: notice('success', 'We sent a link to the new address. Your address changes when it is opened (within 24 hours).'),
  email_changed: notice('success', 'Your sign-in address was changed. The old one was told.'),
  email_invalid: notice('error', 'Enter a valid e-mail address, like you@example.com.'),
  email_same: notice('error', 'That is already your address.'),
  email_taken: notice('error', `That address already signs in to ${brandName}: it cannot be yours too.`),
  email_wrong_password: notice('error', 'That password is not right: the address was not changed.'),
  email_throttled: notice('error', 'Too many changes asked for. Try again in an hour.'),
});

/** The account page's section: the address, whether it is verified, and the change form. */
export function emailSection(view: View): Html {
  const { session } = view;
  const badge = session.emailUnverified
    ? html`<span class="pill" data-testid="email-status">Not verified</span>`
    : html`<span class="pill" data-testid="email-status">Verified</span>`;
  return html`<section class="card section" aria-labelledby="email-heading">
  <h2 id="email-heading">Sign-in e-mail</h2>
  <p>${session.email} ${badge}</p>
  ${
    session.emailUnverified
      ? html`<form method="post" action="/account/verify-email" class="inline-form">${csrfField(view.csrf)}<button type="submit" class="button button-secondary">Send a new verification link</button></form>`
      : ''
  }
  <form method="post" action="/account/email" class="stack" novalidate>
    ${csrfField(view.csrf)}
    <div class="field">
      <label for="new-email">New address</label>
      <input id="new-email" name="email" type="email" autocomplete="email" required maxlength="254">
    </div>
    <div class="field">
      <label for="email-password">Your password</label>
      <input id="email-password" name="password" type="password" autocomplete="current-password" required>
    </div>
    <p class="hint">We send a link to the new address; it takes effect when that link is opened, and the old address is told.</p>
    <p><button type="submit" class="button button-secondary">Change address</button></p>
  </form>
</section>`;
}

export function emailRoutes(app: FastifyInstance, web: Web): void {
  const { ctx, csrf } = web;
  const { preToken, preCsrfValid, refuse } = signedOutForms(csrf, ctx.brand);
  const guarded = { preHandler: [web.authenticated, web.sessionCsrf] };

  app.post('/account/verify-email', guarded, async (request, reply) => {
    const session = web.view(request, 'live').session;
    const outcome = await resendVerification(ctx.db, { personId: session.personId, ip: request.ip, origin: ctx.linkOrigin(), brand: ctx.brand.name });
    return redirect(reply, `/account?notice=${outcome === 'sent' ? 'verification_sent' : outcome === 'throttled' ? 'verification_throttled' : 'email_verified'}`);
  });

  app.post('/account/email', guarded, async (request, reply) => {
    const session = web.view(request, 'live').session;
    const result = await requestEmailChange(ctx.db, {
      personId: session.personId,
      password: field(request.body, 'password'),
      newEmail: field(request.body, 'email'),
      ip: request.ip,
      origin: ctx.linkOrigin(),
      brand: ctx.brand.name,
    });
    return redirect(reply, `/account?notice=${result.ok ? 'email_change_sent' : `email_${result.reason === 'invalid_email' ? 'invalid' : result.reason}`}`);
  });

  const quiet = tokenRouteOptions(app);
  const linkProblem = (message: string) => errorPage(ctx.brand, 404, 'This link does not work', message, { href: '/account', label: 'Go to your account' });
  const confirmPage = (title: string, text: Slot, action: string, button: string, token: string) =>
    authPage(ctx.brand, {
      title,
      heading: title,
      body: html`<p>${text}</p><form method="post" action="${action}" class="stack">${csrfField(token)}<button type="submit" class="button button-primary button-block">${button}</button></form>`,
    });

  // A link opened in a mail client's preview or by a link scanner changes nothing: the page asks
  // for one click, which posts the form.
  app.get('/verify-email/:token', quiet, async (request, reply) => {
    reply.header('referrer-policy', 'no-referrer');
    const { token } = request.params as { token: string };
    const link = await checkEmailToken(ctx.db.kysely, 'verify_email', token);
    if (!link.ok) return sendHtml(reply, linkProblem(`${link.message} Sign in and ask for a new one on your account page.`), 404);
    return sendHtml(
      reply,
      confirmPage(
        'Verify your address',
        html`Confirm that <strong>${link.email}</strong> is your address.`,
        `/verify-email/${token}`,
        'Verify my address',
        preToken(request, reply),
      ),
    );
  });

  app.post('/verify-email/:token', quiet, async (request, reply) => {
    reply.header('referrer-policy', 'no-referrer');
    if (!preCsrfValid(request)) return refuse(request, reply);
    const { token } = request.params as { token: string };
    const result = await verifyEmail(ctx.db, token);
    if (!result.ok) return sendHtml(reply, linkProblem(`${result.message} Sign in and ask for a new one on your account page.`), 404);
    return redirect(reply, '/account?notice=email_verified');
  });

  app.get('/confirm-email/:token', quiet, async (request, reply) => {
    reply.header('referrer-policy', 'no-referrer');
    const { token } = request.params as { token: string };
    const link = await checkEmailToken(ctx.db.kysely, 'change_email', token);
    if (!link.ok) return sendHtml(reply, linkProblem(`${link.message} Ask for the change again on your account page.`), 404);
    return sendHtml(
      reply,
      confirmPage(
        'Confirm your new address',
        html`Sign in to ${ctx.brand.name} with <strong>${link.email}</strong> from now on.`,
        `/confirm-email/${token}`,
        'Use this address',
        preToken(request, reply),
      ),
    );
  });

  app.post('/confirm-email/:token', quiet, async (request, reply) => {
    reply.header('referrer-policy', 'no-referrer');
    if (!preCsrfValid(request)) return refuse(request, reply);
    const { token } = request.params as { token: string };
    const result = await confirmEmailChange(ctx.db, token, Date.now(), ctx.brand.name);
    if (!result.ok) return sendHtml(reply, linkProblem(`${result.message} Ask for the change again on your account page.`), 404);
    return redirect(reply, '/account?notice=email_changed');
  });
}
