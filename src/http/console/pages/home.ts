import { formatTon } from '../../../domain/money.js';
import { ORDER_STATUSES } from '../../../domain/order-status.js';
import { HOME_DAYS, homeFigures } from '../../../operator/console-home.js';
import { statusLabel, time } from '../../html/format.js';
import { type Html, html } from '../../html/html.js';
import { sendHtml } from '../../html/http.js';
import type { Console } from '../console.js';
import { consolePage } from '../layout.js';
import { walletWithin } from '../wallet.js';

const figure = (label: string, value: Html | string | number, testId: string, hint?: Html | string) =>
  html`<div class="card stat"><p class="eyebrow">${label}</p><p class="stat-value" data-testid="${testId}">${value}</p>${hint ? html`<p class="muted small">${hint}</p>` : ''}</div>`;

const seconds = (s: number) => (s < 120 ? `${Math.round(s)} s` : s < 7200 ? `${Math.round(s / 60)} min` : `${Math.round(s / 3600)} h`);

/**
 * Home: what needs a person first (held orders, unmatched deposits, a paused upstream, live
 * paused by an operator, each with its count and a link), then live fulfilment, the paying wallet and how many orders it
 * covers, the deposit watcher, the queue, today's orders, the last 30 days (uPlot, as the
 * dashboard's overview) and the webhook backlog. Live mode.
 */
export function homeRoutes(web: Console): void {
  web.get('/', 'support', async (request, reply) => {
    const session = web.session(request);
    const { ctx } = web;
    const [figures, live, breaker, wallet] = await Promise.all([
      homeFigures(ctx.db.kysely, { depositAddress: ctx.depositAddress }),
      ctx.liveStatus(),
      ctx.breaker(),
      walletWithin(ctx),
    ]);

    const paused = breaker.state === 'open';
    const operatorPause = breaker.operatorPause;
    const needs = [
      { count: figures.held, label: 'orders held for review', href: '/orders?held=1', testId: 'needs-held' },
      { count: figures.unmatched, label: 'unmatched deposits', href: '/deposits', testId: 'needs-unmatched' },
      { count: paused ? 1 : 0, label: `live upstream paused${paused ? ` (${breaker.reason})` : ''}`, href: '/live', testId: 'needs-paused' },
      {
        count: operatorPause ? 1 : 0,
        label: `live fulfilment paused by an operator${operatorPause ? ` (${operatorPause.reason})` : ''}`,
        href: '/live',
        testId: 'needs-operator-paused',
      },
    ];
    const waiting = needs.filter((n) => n.count > 0);
    const needsSection = html`<section class="section" aria-labelledby="needs-heading">
  <h2 id="needs-heading">Needs a person</h2>
  ${
    waiting.length === 0
      ? html`<p class="notice notice-success" role="status" data-testid="needs-none">Nothing waits for a person.</p>`
      : html`<ul class="needs">${waiting.map((n) => html`<li class="notice notice-warning"><a href="${n.href}"><strong data-testid="${n.testId}">${n.count}</strong> ${n.label}</a></li>`)}</ul>`
  }
</section>`;

    const liveText = operatorPause
      ? html`Paused by operator: ${operatorPause.reason} (${operatorPause.by} since ${time(operatorPause.at)})`
      : paused
        ? html`Paused: ${breaker.reason}${breaker.openedAt ? html` since ${time(breaker.openedAt)}` : ''}`
        : live.status === 'available'
          ? 'Available'
          : `Not configured (${[!live.fragment_session && 'Fragment session', !live.wallet && 'wallet'].filter(Boolean).join(' and ')} missing)`;
    let walletValue: Html | string = 'Not configured';
    let walletHint: Html | string | undefined;
    if (wallet.state === 'ok') {
      walletValue = `${wallet.balance} TON`;
      const covers = figures.averagePayment ? wallet.balance_nanotons / figures.averagePayment : undefined;
      walletHint =
        covers === undefined
          ? 'No live payment in the last 30 days to estimate how many orders it covers.'
          : html`Covers about <strong data-testid="wallet-covers">${covers}</strong> orders at the last ${HOME_DAYS} days' average payment (${formatTon(figures.averagePayment as bigint)} TON).`;
    } else if (wallet.state === 'error') {
      walletValue = 'Unknown';
      walletHint = wallet.message;
    }
    const deposits = figures.deposits;
    const depositValue = deposits ? (deposits.lagSeconds === null ? 'No transaction yet' : `${seconds(deposits.lagSeconds)} behind`) : 'Not configured';
    const depositHint = deposits
      ? html`Last poll ${deposits.lastCheckedAt ? time(deposits.lastCheckedAt) : 'never'} · ${deposits.unmatched} unmatched`
      : 'DEPOSIT_ADDRESS is not set.';
    const queue = figures.queue;

    const statusRows = ORDER_STATUSES.map(
      (s) => html`<tr><th scope="row">${statusLabel(s)}</th><td class="num" data-label="Orders" data-testid="today-${s}">${figures.today[s]}</td></tr>`,
    );
    const chart = figures.chart;
    const chartSection = html`<section class="section" aria-labelledby="chart-heading">
  <div class="section-head"><h2 id="chart-heading">Last ${HOME_DAYS} days (live)</h2></div>
  <div class="charts" data-chart="${JSON.stringify(chart)}" data-testid="charts">
  <figure class="card chart-card"><figcaption><span class="chart-title">Orders per day</span> <span class="muted small">${chart.totals.delivered} delivered, ${chart.totals.failed} failed</span></figcaption>
    <div class="chart" data-series="orders" role="img" aria-label="Orders per day, last ${HOME_DAYS} days: ${chart.totals.delivered} delivered, ${chart.totals.failed} failed"></div></figure>
  <figure class="card chart-card"><figcaption><span class="chart-title">Revenue per day</span> <span class="muted small" data-testid="revenue-total">${chart.totals.spent} TON of delivered orders</span></figcaption>
    <div class="chart" data-series="spent" role="img" aria-label="Revenue per day, last ${HOME_DAYS} days: ${chart.totals.spent} TON"></div></figure>
  </div>
</section>`;

    const body = html`<h1>Operator console</h1>
${needsSection}
<section class="section" aria-labelledby="status-heading">
  <h2 id="status-heading">Status</h2>
  <div class="stats">
    ${figure('Live fulfilment', liveText, 'live-status', live.fragment_session ? 'Fragment session set' : 'No Fragment session')}
    ${figure('Paying wallet', walletValue, 'wallet-balance', walletHint)}
    ${figure('Deposit watcher', depositValue, 'deposit-lag', depositHint)}
    ${figure('Queue (live)', String(queue.depth), 'queue-depth', queue.oldestAt === null ? 'Nothing waiting' : html`Oldest since ${time(queue.oldestAt)}`)}
    ${figure('Webhook backlog', String(figures.webhookBacklog), 'webhook-backlog', 'messages waiting for delivery')}
  </div>
</section>
<section class="section" aria-labelledby="today-heading">
  <h2 id="today-heading">Today's orders (live, UTC)</h2>
  <div class="table-wrap"><table class="table"><caption class="visually-hidden">Today's live orders by status</caption><tbody>${statusRows}</tbody></table></div>
</section>
${chartSection}`;
    return sendHtml(reply, consolePage({ session, csrf: web.token(request) }, { title: 'Home', section: 'home', body, charts: true }));
  });
}
