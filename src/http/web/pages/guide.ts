import { envPrefix } from '../../../domain/brand.js';
import type { FastifyInstance } from 'fastify';
import { activeKeys } from '../../../accounts/accounts.js';
import { readBalance } from '../../../ledger/ledger.js';
import { accountPrice } from '../../../plans/account-price.js';
import { copyBlock } from '../components.js';
import { modePath, ton } from '../../html/format.js';
import { html } from '../../html/html.js';
import { originOf, sendHtml } from '../../html/http.js';
import { dashboardPage } from '../layout.js';
import type { Web } from '../web.js';
import { may, whoMay } from '../rules.js';

/** "Your first order": the test-mode path from funds to a delivered order, with curl lines. */
export function guideRoutes(_app: FastifyInstance, web: Web): void {
  web.page('/guide', async (request, reply, mode) => {
    const view = web.view(request, mode);
    const { accountId } = view.session;
    const [keys, balance] = await Promise.all([activeKeys(web.ctx.db, accountId), readBalance(web.ctx.db.kysely, { accountId, mode: 'test' })]);
    const prefix = keys.test?.displayPrefix ?? 'sk_test_';
    const base = `${originOf(request, web.ctx.publicUrl)}/api/v1`;
    const available = balance?.available ?? 0n;
    // The account's test price (its plan's, else PRICE_MARKUP_PERCENT): docs/operations.md "Price plans".
    const firstOrder = web.ctx.prices && (await accountPrice({ db: web.ctx.db.kysely, prices: web.ctx.prices }, { accountId, mode: 'test' }, 'stars', 50));
    const { role } = view.session;
    const env = envPrefix(view.brand);
    const topUp = modePath('test', '/top-up');
    const reissue = modePath('test', '/keys/reissue?mode=test');
    const body = html`<div class="page-head"><h1>Your first order</h1></div>
<p class="lead">Five steps with <code>curl</code>, in test mode: nothing is charged and nothing reaches Telegram. The full reference is in the <a href="/docs">API documentation</a>.</p>
<ol class="guide">
  <li>
    <h2>Add test funds</h2>
    <p>Your test balance is <strong>${ton(available)}</strong>. ${firstOrder === undefined ? '' : html`A first order of 50 Stars costs <strong id="first-order-price">${ton(firstOrder)}</strong> at your price. `}${available > 0n && (firstOrder === undefined || available >= firstOrder) ? 'That is enough for it.' : may(role, 'POST', topUp) ? html`<a href="${topUp}">Add test funds</a> first.` : `The account's ${whoMay('POST', topUp)} can add test funds.`}</p>
  </li>
  <li>
    <h2>Put your test key in your shell</h2>
    <p>Your active test key starts with <code>${prefix}</code>. The full key is shown only once: right after sign-up, and after each reissue. If you do not have it, ${may(role, 'POST', reissue) ? html`<a href="${reissue}">reissue the test key</a>.` : `the account's ${whoMay('POST', reissue)} can reissue it.`}</p>
    ${copyBlock('step-key', `export ${env}_API_KEY="${prefix}…"   # paste your full test key here`, 'the export line')}
  </li>
  <li>
    <h2>Check your balance</h2>
    ${copyBlock('step-balance', `curl ${base}/balance \\\n  -H "Authorization: Bearer $${env}_API_KEY"`, 'the balance request')}
  </li>
  <li>
    <h2>Create an order</h2>
    <p>The <code>Idempotency-Key</code> makes a retry safe: sending the same request again returns the same order.</p>
    ${copyBlock(
      'step-order',
      `curl -X POST ${base}/orders \\\n  -H "Authorization: Bearer $${env}_API_KEY" \\\n  -H "Content-Type: application/json" \\\n  -H "Idempotency-Key: first-order-1" \\\n  -d '{"product": "stars", "recipient": "@durov", "quantity": 50, "external_id": "my-order-1"}'`,
      'the order request',
    )}
  </li>
  <li>
    <h2>Follow it to <code>delivered</code></h2>
    <p>Use the <code>id</code> from the answer. A test order is delivered within a few seconds; you can also watch it on the <a href="${modePath('test', '/orders')}">Orders</a> page.</p>
    ${copyBlock('step-poll', `curl ${base}/orders/ord_… \\\n  -H "Authorization: Bearer $${env}_API_KEY"`, 'the order status request')}
  </li>
</ol>
<section class="card" aria-labelledby="recipients-heading">
  <h2 id="recipients-heading">Test recipients</h2>
  <p>With a test key, these usernames make an order end the way you need to test:</p>
  <div class="table-wrap" role="region" aria-label="Test recipients" tabindex="0">
  <table class="table">
    <thead><tr><th scope="col">Recipient</th><th scope="col">Outcome</th></tr></thead>
    <tbody>
      <tr><td data-label="Recipient"><code>@test_invalid</code></td><td data-label="Outcome">Fails with <code>recipient_invalid</code></td></tr>
      <tr><td data-label="Recipient"><code>@test_not_found</code></td><td data-label="Outcome">Fails with <code>not_found</code> (no such account)</td></tr>
      <tr><td data-label="Recipient"><code>@test_not_a_user</code></td><td data-label="Outcome">Fails with <code>not_a_user</code> (a bot, channel or group)</td></tr>
      <tr><td data-label="Recipient"><code>@test_already_premium</code></td><td data-label="Outcome">Premium fails with <code>already_premium</code>; stars are delivered</td></tr>
      <tr><td data-label="Recipient"><code>@test_not_eligible</code></td><td data-label="Outcome">Fails with <code>not_eligible</code> (cannot receive it now)</td></tr>
      <tr><td data-label="Recipient"><code>@test_failed</code></td><td data-label="Outcome">Fails with <code>upstream_error</code>; the amount is released</td></tr>
      <tr><td data-label="Recipient"><code>@test_slow</code></td><td data-label="Outcome">Delivered after about 30 seconds</td></tr>
      <tr><td data-label="Recipient">any other username</td><td data-label="Outcome">Delivered after about 2 seconds</td></tr>
    </tbody>
  </table>
  </div>
</section>`;
    return sendHtml(reply, dashboardPage(view, { title: 'First order', section: 'guide', body }));
  });
}
