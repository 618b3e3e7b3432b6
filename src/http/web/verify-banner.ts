import { type Html, html } from '../html/html.js';

/**
 * The banner on every dashboard page while the signed-in person's address waits for its
 * verification link (docs/dashboard.md "Verified e-mail, password reset and invites by e-mail"),
 * with a form asking for a new link.
 */
export function verifyBanner(email: string, csrf: string): Html {
  return html`<div class="notice notice-warning" role="status" data-testid="verify-banner"><strong>Verify your e-mail address.</strong> We sent a link to ${email}; until it is opened that address gets no other e-mail from us.
<form method="post" action="/account/verify-email" class="inline-form"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" class="button button-secondary button-small">Send a new link</button></form></div>`;
}
