import { csrfField } from './document.js';
import { type Html, html } from './html.js';

/** The e-mail field of the sign-in and sign-up forms (focused: it is the first thing to type). */
export function emailField(email: string | undefined): Html {
  return html`<div class="field">
    <label for="email">E-mail</label>
    <input id="email" name="email" type="email" autocomplete="username" required value="${email ?? ''}" autofocus>
  </div>`;
}

/**
 * The e-mail and password form of the dashboard's and the console's sign-in pages: one markup, so
 * that password managers and the browser suites see the same fields on both. Each posts to its
 * own server's /login with its own CSRF token and `next`.
 */
export function signInForm(options: { csrf: string; email?: string; next?: string; submit: string }): Html {
  return html`<form method="post" action="/login" class="stack" novalidate>
  ${csrfField(options.csrf)}
  <input type="hidden" name="next" value="${options.next ?? '/'}">
  ${emailField(options.email)}
  <div class="field">
    <label for="password">Password</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required>
  </div>
  <button type="submit" class="button button-primary button-block">${options.submit}</button>
</form>`;
}
