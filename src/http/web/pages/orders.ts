import type { FastifyInstance } from 'fastify';
import { isMode, type Mode } from '../../../domain/api-key.js';
import { ORDER_STATUSES, type OrderStatus } from '../../../domain/order-status.js';
import type { OrderEvent } from '../../../orders/order.js';
import { findOrder, listEvents } from '../../../orders/order-store.js';
import { copyField, emptyState, ordersTable } from '../components.js';
import { modeLabel, modePath, productText, statusBadge, statusLabel, time, ton } from '../../html/format.js';
import { type Html, html } from '../../html/html.js';
import { field, originOf, redirect, sendHtml } from '../../html/http.js';
import { dashboardPage, type View } from '../layout.js';
import { decodeCursor, orderPage } from '../order-list.js';
import type { Web } from '../web.js';

const ORDERS_PER_PAGE = 25;

const isStatus = (value: string): value is OrderStatus => (ORDER_STATUSES as readonly string[]).includes(value);

/** Orders: the filtered, searchable, paginated list, and each order with its events. */
export function orderRoutes(_app: FastifyInstance, web: Web): void {
  const { ctx } = web;

  web.page('/orders', async (request, reply, mode) => {
    const query = request.query as Record<string, unknown>;
    const statusText = field(query, 'status');
    const status = isStatus(statusText) ? statusText : undefined;
    const search = field(query, 'q').trim().slice(0, 200);
    // The mode filter is the page's own mode: choosing the other one moves to its pages.
    const wanted = field(query, 'mode');
    if (isMode(wanted) && wanted !== mode) {
      const params = new URLSearchParams({ ...(status && { status }), ...(search && { q: search }) }).toString();
      return redirect(reply, `${modePath(wanted, '/orders')}${params ? `?${params}` : ''}`);
    }
    const view = web.view(request, mode);
    const page = await orderPage(ctx.db, {
      accountId: view.session.accountId,
      mode,
      status,
      search: search || undefined,
      after: decodeCursor(field(query, 'after')),
      before: decodeCursor(field(query, 'before')),
      limit: ORDERS_PER_PAGE,
    });
    const filtered = !!(status || search);
    const pageLink = (param: 'after' | 'before', cursor: string) =>
      `${modePath(mode, '/orders')}?${new URLSearchParams({ ...(status && { status }), ...(search && { q: search }), [param]: cursor }).toString()}`;
    const results = page.orders.length
      ? html`${ordersTable(page.orders, mode, `${modeLabel(mode)} orders`)}
<nav class="pagination" aria-label="Pages of orders">
  ${page.newer ? html`<a class="button button-secondary" href="${pageLink('before', page.newer)}" rel="prev">← Newer</a>` : html`<span></span>`}
  ${page.older ? html`<a class="button button-secondary" href="${pageLink('after', page.older)}" rel="next">Older →</a>` : ''}
</nav>`
      : filtered
        ? emptyState('No orders match', 'Try another status, or search for the full order id (ord_…) or your own external_id.', {
            href: modePath(mode, '/orders'),
            label: 'Clear filters',
          })
        : emptyState(
            `No ${mode} orders yet`,
            mode === 'test' ? 'Create one with your test key and it shows up here within a second.' : 'Orders created with your live key show up here.',
            { href: modePath('test', '/guide'), label: 'Read the first order guide' },
          );
    const option = (value: string, label: string, selected: boolean) => html`<option value="${value}"${selected ? html` selected` : ''}>${label}</option>`;
    const body = html`<div class="page-head"><h1>Orders</h1></div>
<form method="get" action="${modePath(mode, '/orders')}" class="filters" role="search" aria-label="Filter orders">
  <div class="field field-grow">
    <label for="q">Search</label>
    <input id="q" name="q" type="search" value="${search}" placeholder="ord_… or your external_id" autocomplete="off" spellcheck="false">
  </div>
  <div class="field">
    <label for="status">Status</label>
    <select id="status" name="status">
      ${option('', 'All statuses', !status)}
      ${ORDER_STATUSES.map((s) => option(s, statusLabel(s), s === status))}
    </select>
  </div>
  <div class="field">
    <label for="mode">Mode</label>
    <select id="mode" name="mode">${option('live', 'Live', mode === 'live')}${option('test', 'Test', mode === 'test')}</select>
  </div>
  <div class="filter-actions">
    <button type="submit" class="button button-primary">Apply</button>
    ${filtered ? html`<a class="button button-quiet" href="${modePath(mode, '/orders')}">Clear</a>` : ''}
  </div>
</form>
${results}`;
    return sendHtml(reply, dashboardPage(view, { title: 'Orders', section: 'orders', body }));
  });

  web.page('/orders/:id', async (request, reply, mode) => {
    const { id } = request.params as { id: string };
    const view = web.view(request, mode);
    const { accountId } = view.session;
    const order = await findOrder(ctx.db.kysely, id, { accountId, mode });
    if (!order) {
      // The same account's order of the other mode: show it where it lives.
      const other: Mode = mode === 'live' ? 'test' : 'live';
      if (await findOrder(ctx.db.kysely, id, { accountId, mode: other })) return redirect(reply, modePath(other, `/orders/${id}`));
      return sendHtml(reply, notFoundPage(view), 404);
    }
    const events = await listEvents(ctx.db.kysely, order.id);
    const final = order.status === 'delivered' || order.status === 'failed';
    const statusUrl = `${originOf(request, ctx.publicUrl)}/api/v1/orders/${order.id}`;
    const body = html`<nav class="breadcrumb" aria-label="Breadcrumb"><a href="${modePath(mode, '/orders')}">Orders</a> <span aria-hidden="true">/</span> <span class="mono" aria-current="page">${order.id}</span></nav>
<p id="status-announcer" class="visually-hidden" aria-live="polite"></p>
<div id="order-live" data-status="${order.status}" data-status-label="${statusLabel(order.status)}"${final ? '' : html` data-refresh="2000"`}>
<div class="page-head order-head">
  <h1>${productText(order.product, order.quantity)} for @${order.recipient}</h1>
  <span data-testid="order-status">${statusBadge(order.status)}</span>
</div>
${final ? '' : html`<p class="muted refresh-note">This page updates by itself until the order is delivered or failed.</p>`}
<div class="grid-2 order-grid">
  <section class="card" aria-labelledby="details-heading">
    <h2 id="details-heading">Details</h2>
    <dl class="details">
      <div><dt>Order ID</dt><dd>${copyField('order-id', order.id, 'order ID')}</dd></div>
      <div><dt>Amount</dt><dd>${ton(order.amount)}</dd></div>
      ${order.failureReason ? html`<div><dt>Failure reason</dt><dd><code>${order.failureReason}</code></dd></div>` : ''}
      <div><dt>Product</dt><dd>${order.product}</dd></div>
      <div><dt>Quantity</dt><dd>${order.quantity}</dd></div>
      <div><dt>Recipient</dt><dd>@${order.recipient}</dd></div>
      <div><dt>External ID</dt><dd>${order.externalId ? html`<code>${order.externalId}</code>` : html`<span class="muted">none</span>`}</dd></div>
      <div><dt>Mode</dt><dd>${modeLabel(order.mode)}</dd></div>
      <div><dt>Created</dt><dd>${time(order.createdAt, true)}</dd></div>
      <div><dt>Updated</dt><dd>${time(order.updatedAt, true)}</dd></div>
      <div><dt>API URL</dt><dd>${copyField('status-url', statusUrl, 'API URL', { className: 'wrap small' })}</dd></div>
    </dl>
  </section>
  <section class="card" aria-labelledby="timeline-heading">
    <h2 id="timeline-heading">Timeline</h2>
    <ol class="timeline">${events.map(eventItem)}</ol>
  </section>
</div>
</div>`;
    return sendHtml(reply, dashboardPage(view, { title: `Order ${order.id}`, section: 'orders', body }));
  });
}

function notFoundPage(view: View): Html {
  return dashboardPage(view, {
    title: 'Order not found',
    section: 'orders',
    body: html`<div class="page-head"><h1>Order not found</h1></div>
${emptyState('There is no such order in this account', 'Check the order id, or look in the other mode: live and test orders are kept apart.', {
  href: modePath(view.mode, '/orders'),
  label: 'Back to orders',
})}`,
  });
}

const amountOf = (event: OrderEvent) => (typeof event.data.amount === 'string' ? `${event.data.amount} TON` : undefined);
const textOf = (value: unknown) => (typeof value === 'string' ? value : undefined);

function eventItem(event: OrderEvent): Html {
  const amount = amountOf(event);
  let title: string;
  let detail: string | undefined;
  switch (event.type) {
    case 'order.created':
      title = 'Order created';
      detail = amount && `${amount} reserved on the balance`;
      break;
    case 'order.processing':
      title = 'Processing';
      detail = 'Fulfilment started';
      break;
    case 'order.attempt_failed':
      title = 'Attempt failed, retrying';
      detail = textOf(event.data.message) ?? textOf(event.data.reason);
      break;
    case 'order.payment_sent':
      title = 'Payment sent';
      detail = textOf(event.data.tx_hash) && `Transaction ${textOf(event.data.tx_hash)}`;
      break;
    case 'order.delivered':
      title = 'Delivered';
      detail = amount && `${amount} debited`;
      break;
    case 'order.failed':
      title = 'Failed';
      detail = [textOf(event.data.message) ?? textOf(event.data.reason), amount && `${amount} released`].filter(Boolean).join(' — ');
      break;
    default:
      title = event.type;
  }
  return html`<li class="timeline-item timeline-${event.status}">
  <span class="timeline-dot" aria-hidden="true"></span>
  <div>
    <p class="timeline-title"><strong>${title}</strong> <code class="muted">${event.type}</code></p>
    ${detail ? html`<p>${detail}</p>` : ''}
    <p class="muted small">${time(event.createdAt, true)}</p>
  </div>
</li>`;
}
