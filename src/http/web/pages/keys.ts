import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { activeKeys, reissueKey } from '../../../accounts/accounts.js';
import { isMode, type Mode, MODES } from '../../../domain/api-key.js';
import { copyButton } from '../components.js';
import { modeLabel, modePath, time } from '../../html/format.js';
import { type Html, html, type Slot } from '../../html/html.js';
import { field, redirect, sendHtml } from '../../html/http.js';
import { csrfField, dashboardPage, notice, type View } from '../layout.js';
import type { Web } from '../web.js';
import { dashboardAudit } from '../audit.js';

const NOTICES: Record<string, Slot> = {
  already_reissued: notice('info', 'That key had already been replaced, so nothing changed. The key shown below is the active one.'),
};

/**
 * API keys: each mode's active key (display prefix and creation time), and a reissue that asks
 * for confirmation, then shows the full new key exactly once. The key is only ever in that one
 * response: never stored (only its hash), never logged, never put in a URL.
 */
export function keyRoutes(app: FastifyInstance, web: Web): void {
  const { ctx } = web;

  web.page('/keys', async (request, reply, mode) => {
    const view = web.view(request, mode);
    const keys = await activeKeys(ctx.db, view.session.accountId);
    const card = (m: Mode) => {
      const key = keys[m];
      return html`<article class="card key-card${m === mode ? ' is-current' : ''}" aria-labelledby="key-${m}">
  <div class="card-head"><h2 id="key-${m}">${modeLabel(m)} key</h2><span class="pill pill-${m}">${m === 'live' ? 'Real money' : 'Simulated'}</span></div>
  ${
    key
      ? html`<dl class="details">
    <div><dt>Key</dt><dd><code data-testid="${m}-key-prefix">${key.displayPrefix}…</code></dd></div>
    <div><dt>Created</dt><dd>${time(key.createdAt)}</dd></div>
  </dl>`
      : html`<p class="muted">No active ${m} key.</p>`
  }
  <p class="hint">${m === 'live' ? 'Spends your live balance on real deliveries.' : 'Spends test funds on simulated orders.'} A full key is shown only once, when it is issued: to get one you can copy, reveal a new key.</p>
  <p class="card-actions"><a class="button button-secondary" href="${modePath(m, `/keys/reissue?mode=${m}`)}" data-testid="reissue-${m}">${key ? `Reveal new ${m} key` : `Create ${m} key`}</a></p>
</article>`;
    };
    const body = html`<div class="page-head"><h1>API keys</h1></div>
<p class="lead">Send a key as <code>Authorization: Bearer &lt;key&gt;</code>. Keys can spend your balance: use them only on your server, never in a browser, an app or a public repository.</p>
<div class="grid-2">${card('live')}${card('test')}</div>`;
    return sendHtml(reply, dashboardPage(view, { title: 'API keys', section: 'keys', body, notice: NOTICES[field(request.query, 'notice')] }));
  });

  web.page('/keys/reissue', async (request, reply, mode) => {
    const keyMode = field(request.query, 'mode');
    if (!isMode(keyMode)) return redirect(reply, modePath(mode, '/keys'));
    // A key's pages are styled as its mode (test banner for a test key), whichever page led here.
    const view = web.view(request, keyMode);
    const current = (await activeKeys(ctx.db, view.session.accountId))[keyMode];
    const body = html`<div class="page-head"><h1>${current ? `Reveal a new ${keyMode} key?` : `Create a ${keyMode} key?`}</h1></div>
<section class="card confirm-card" aria-labelledby="confirm-heading">
  <h2 id="confirm-heading" class="visually-hidden">Confirm</h2>
  ${
    current
      ? notice(
          'warning',
          html`<strong>This reissues the key: the current ${keyMode} key <code>${current.displayPrefix}…</code> stops working immediately.</strong> Requests made with it are refused with <code>401 api_key_revoked</code> from the very next one. Put the new key on your servers right away.`,
        )
      : ''
  }
  <p>The new key is shown once, on the next page. Copy it then: ${ctx.brand.name} keeps only a fingerprint of it and cannot show it again.</p>
  <form method="post" action="${modePath(mode, '/keys/reissue')}" class="button-row">
    ${csrfField(view.csrf)}
    <input type="hidden" name="mode" value="${keyMode}">
    <input type="hidden" name="replaces" value="${current?.id ?? ''}">
    <button type="submit" class="button ${current ? 'button-danger' : 'button-primary'}">${current ? `Reissue and reveal ${keyMode} key` : `Create ${keyMode} key`}</button>
    <a class="button button-quiet" href="${modePath(mode, '/keys')}">Cancel</a>
  </form>
</section>`;
    return sendHtml(reply, dashboardPage(view, { title: 'Reveal a new key', section: 'keys', body }));
  });

  for (const mode of MODES) {
    app.post(modePath(mode, '/keys/reissue'), { preHandler: [web.authenticated, web.sessionCsrf] }, async (request: FastifyRequest, reply: FastifyReply) => {
      const keyMode = field(request.body, 'mode');
      if (!isMode(keyMode)) return redirect(reply, modePath(mode, '/keys'));
      const view = web.view(request, keyMode);
      const current = (await activeKeys(ctx.db, view.session.accountId))[keyMode];
      // The form names the key it replaces: a resubmitted form (reload, double click) must not
      // revoke the key it just showed.
      if ((current?.id ?? '') !== field(request.body, 'replaces')) return redirect(reply, modePath(mode, '/keys?notice=already_reissued'));
      const session = view.session;
      const key = await reissueKey(ctx.db, session.accountId, keyMode, Date.now(), (tx, prefix) =>
        dashboardAudit(tx, request, { action: 'dashboard.key_reveal', session, mode: keyMode, details: { key_prefix: prefix } }),
      );
      request.log.info({ account_id: view.session.accountId, mode: keyMode }, 'dashboard key reissued');
      const body = html`<div class="page-head"><h1>Your new ${keyMode} key</h1></div>
<section class="card new-key-card" aria-labelledby="new-key-label">
  ${notice('warning', html`<strong>Copy this key now.</strong> For your security it is shown only once. If you lose it, reissue it again.`)}
  <label id="new-key-label" for="new-key" class="label">New ${keyMode} key</label>
  <div class="copy-field">
    <input id="new-key" class="copy-value mono" type="text" value="${key}" readonly spellcheck="false" autocomplete="off" data-testid="new-key">
    ${copyButton('new-key', `the new ${keyMode} key`, 'button-primary')}
  </div>
  ${current ? html`<p>The previous key <code>${current.displayPrefix}…</code> no longer works.</p>` : ''}
  <p><a class="button button-secondary" href="${modePath(mode, '/keys')}">I have saved it</a></p>
</section>`;
      return sendHtml(reply, dashboardPage(view, { title: `New ${keyMode} key`, section: 'keys', body }));
    });
  }
}

/**
 * Right after sign-up: both new keys, shown once with the same care as a reissue (copy now,
 * never shown again). The page is the sign-up form's answer, so the keys are in no URL.
 */
export function newAccountKeysPage(view: View, keys: Record<Mode, string>): Html {
  const field = (m: Mode) => html`<div class="field">
  <label for="new-key-${m}" class="label">${modeLabel(m)} key <span class="pill pill-${m}">${m === 'live' ? 'Real money' : 'Simulated'}</span></label>
  <div class="copy-field">
    <input id="new-key-${m}" class="copy-value mono" type="text" value="${keys[m]}" readonly spellcheck="false" autocomplete="off" data-testid="new-key-${m}">
    ${copyButton(`new-key-${m}`, `the ${m} key`, m === 'test' ? 'button-primary' : 'button-secondary')}
  </div>
  <p class="hint">${m === 'live' ? 'Spends your live balance on real deliveries.' : 'Spends test funds on simulated orders: start with this one.'}</p>
</div>`;
  const body = html`<div class="page-head"><h1>Your account is ready: your API keys</h1></div>
<section class="card new-key-card" aria-labelledby="keys-heading">
  <h2 id="keys-heading" class="visually-hidden">Your API keys</h2>
  ${notice('warning', html`<strong>Copy both keys now.</strong> For your security they are shown only once, on this page. ${view.brand.name} keeps only a fingerprint of each; if you lose one, reissue it on the API keys page (the old one then stops working).`)}
  ${field('test')}
  ${field('live')}
  <p><a class="button button-primary" href="/test?notice=welcome">I have saved them</a></p>
</section>`;
  return dashboardPage(view, { title: 'Your API keys', section: 'keys', body });
}
