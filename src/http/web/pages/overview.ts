import type { FastifyInstance } from 'fastify';
import { type Mode, MODES } from '../../../domain/api-key.js';
import { readBalance } from '../../../ledger/ledger.js';
import { lowBalanceAlerts } from '../../../ledger/low-balance.js';
import { disabledEndpoints, type WebhookEndpoint } from '../../../webhooks/endpoints.js';
import { CHART_DAYS, type ChartData, chartData } from '../charts.js';
import { emptyState, ordersTable } from '../components.js';
import { modeLabel, modePath, ton } from '../../html/format.js';
import { type Html, html, type Slot } from '../../html/html.js';
import { sendHtml, field } from '../../html/http.js';
import { dashboardPage, notice } from '../layout.js';
import { orderPage } from '../order-list.js';
import type { Web } from '../web.js';
import { lowBalanceBanners } from '../low-balance-banner.js';
import { may } from '../rules.js';

const NOTICES: Record<string, Slot> = {
  welcome: notice(
    'success',
    html`<strong>Your account is ready.</strong> You are in test mode: add test funds and create a first order with the test key you saved — nothing is charged.`,
  ),
  password_set: notice('success', 'Your password is set. You are logged in.'),
};

/**
 * A notice per mode with disabled webhook endpoints (whichever mode is viewed: a dead live
 * endpoint matters in test mode too), linking to that mode's webhooks page to re-enable them.
 */
function disabledWebhooksNotice(mode: Mode, endpoints: WebhookEndpoint[]): Slot {
  if (endpoints.length === 0) return '';
  const one = endpoints.length === 1;
  const urls = endpoints.map((e, i) => html`${i > 0 ? ', ' : ''}<code>${e.url}</code>`);
  return notice(
    'warning',
    html`<strong>${one ? 'A' : String(endpoints.length)} ${mode} webhook endpoint${one ? ' is' : 's are'} disabled</strong> (${urls}): new events are not sent to ${one ? 'it' : 'them'}.
<a href="${modePath(mode, '/webhooks')}" data-testid="disabled-webhooks-${mode}">See why and re-enable on the ${mode} webhooks page</a>`,
  );
}

/**
 * The last 30 days of the mode viewed, as three charts drawn by uPlot (app.js) from the data in
 * `data-chart`; each figure also says its totals in words, which is all there is without script.
 */
function chartsSection(mode: Mode, data: ChartData): Html {
  const last = data.balance[data.balance.length - 1] ?? '0';
  const ordersText = `${data.totals.delivered} delivered, ${data.totals.failed} failed`;
  const figure = (series: string, title: string, summary: string) => html`<figure class="card chart-card">
    <figcaption><span class="chart-title">${title}</span> <span class="muted small" data-testid="chart-summary-${series}">${summary}</span></figcaption>
    <div class="chart" data-series="${series}" role="img" aria-label="${title}, last ${CHART_DAYS} days: ${summary}"></div>
  </figure>`;
  return html`<section class="section" aria-labelledby="charts-heading">
  <div class="section-head"><h2 id="charts-heading">Last ${CHART_DAYS} days (${mode})</h2></div>
  <div class="charts" data-chart="${JSON.stringify(data)}" data-testid="charts">
  ${figure('orders', 'Orders per day', ordersText)}
  ${figure('spent', 'TON spent per day', `${data.totals.spent} TON on delivered orders`)}
  ${figure('balance', 'Available balance', `${last} TON now`)}
  </div>
</section>`;
}

/** Overview: both balances, recent orders of the mode being viewed, disabled webhooks, and first steps. */
export function overviewRoutes(_app: FastifyInstance, web: Web): void {
  web.page('/', async (request, reply, mode) => {
    const view = web.view(request, mode);
    const { accountId } = view.session;
    const db = web.ctx.db;
    const [live, test, recent, disabled, charts, alerts] = await Promise.all([
      readBalance(db.kysely, { accountId, mode: 'live' }),
      readBalance(db.kysely, { accountId, mode: 'test' }),
      orderPage(db, { accountId, mode, limit: 5 }),
      disabledEndpoints(db.kysely, accountId),
      chartData(db, { accountId, mode }),
      lowBalanceAlerts(db.kysely, accountId),
    ]);
    const webhookNotices = MODES.map((m) =>
      disabledWebhooksNotice(
        m,
        disabled.filter((e) => e.mode === m),
      ),
    );
    const zero = { available: 0n, reserved: 0n };
    const card = (m: Mode, balance = zero) => html`<article class="card balance-card${m === mode ? ' is-current' : ''}" aria-labelledby="balance-${m}">
  <div class="card-head">
    <h2 id="balance-${m}">${modeLabel(m)} balance</h2>
    ${m === mode ? html`<span class="pill">Viewing</span>` : ''}
  </div>
  <dl class="balance">
    <div><dt>Available</dt><dd class="amount" data-testid="${m}-available">${ton(balance.available)}</dd></div>
    <div><dt>Reserved</dt><dd class="amount-small" data-testid="${m}-reserved">${ton(balance.reserved)}</dd></div>
  </dl>
  <p class="card-actions">
    ${m === 'live' || may(view.session.role, 'POST', modePath(m, '/top-up')) ? html`<a class="button button-secondary" href="${modePath(m, '/top-up')}">${m === 'live' ? 'Top up' : 'Add test funds'}</a>` : ''}
    ${m !== mode ? html`<a href="${modePath(m, '/')}">View ${m} data</a>` : ''}
  </p>
</article>`;
    const recentBlock = recent.orders.length
      ? ordersTable(recent.orders, mode, `Recent ${mode} orders`)
      : emptyState(
          `No ${mode} orders yet`,
          mode === 'test'
            ? 'Create your first order with your test key: it goes through every status in a few seconds and costs only test funds.'
            : 'Orders you create with your live key appear here.',
          { href: modePath('test', '/guide'), label: 'Read the first order guide' },
        );
    const body = html`<div class="page-head"><h1>Overview</h1></div>
${lowBalanceBanners(alerts, view.session.role)}
${webhookNotices}
<p class="reserved-note muted">Reserved amounts belong to orders still being fulfilled: they are debited on delivery and released if an order fails.</p>
<section class="balances" aria-label="Balances">${card('live', live)}${card('test', test)}</section>
${chartsSection(mode, charts)}
<section class="section" aria-labelledby="recent-heading">
  <div class="section-head">
    <h2 id="recent-heading">Recent ${mode} orders</h2>
    ${recent.orders.length ? html`<a href="${modePath(mode, '/orders')}">View all orders</a>` : ''}
  </div>
  ${recentBlock}
</section>`;
    return sendHtml(reply, dashboardPage(view, { title: 'Overview', section: 'overview', body, notice: NOTICES[field(request.query, 'notice')], charts: true }));
  });
}
