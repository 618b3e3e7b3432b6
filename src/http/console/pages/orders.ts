import { accountUrl } from '../../../deposits/explorer.js';
import { isMode } from '../../../domain/api-key.js';
import { ORDER_STATUSES, type OrderStatus } from '../../../domain/order-status.js';
import { isProduct, PRODUCTS } from '../../../domain/products.js';
import { heldEvidence, listHeldOrders } from '../../../orders/admin.js';
import { decodeCursor, encodeCursor, listOrders, type OrderListQuery } from '../../../orders/list-orders.js';
import type { Order } from '../../../orders/order.js';
import { notice } from '../../html/document.js';
import { productText, statusBadge, statusLabel, time, ton } from '../../html/format.js';
import { type Html, html } from '../../html/html.js';
import { field, sendHtml } from '../../html/http.js';
import type { Console } from '../console.js';
import { consolePage } from '../layout.js';
import { orderPageRoutes } from './order.js';

const ORDERS_PER_PAGE = 50;
/** The held queue is short by nature (each one is a person's decision): one page. */
const HELD_MAX = 100;
const DAY_MS = 86_400_000;

const isStatus = (value: string): value is OrderStatus => (ORDER_STATUSES as readonly string[]).includes(value);

/** A UTC date (YYYY-MM-DD) as epoch ms at its midnight, or undefined when it is not one. */
function utcDate(text: string): number | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return undefined;
  const ms = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return new Date(ms).toISOString().startsWith(text) ? ms : undefined;
}

interface Filters {
  status: string;
  product: string;
  mode: string;
  from: string;
  to: string;
  q: string;
}

/** The filters of the page's URL as listOrders' query, or what is wrong with them. */
function parseFilters(f: Filters): { query: Omit<OrderListQuery, 'limit'> } | { error: string } {
  if (f.status && !isStatus(f.status)) return { error: `Status must be one of ${ORDER_STATUSES.join(', ')}.` };
  if (f.product && !isProduct(f.product)) return { error: `Product must be one of ${PRODUCTS.join(', ')}.` };
  if (f.mode && !isMode(f.mode)) return { error: 'Mode must be live or test.' };
  const from = f.from ? utcDate(f.from) : undefined;
  if (f.from && from === undefined) return { error: `From: "${f.from}" is not a date (YYYY-MM-DD, UTC).` };
  const to = f.to ? utcDate(f.to) : undefined;
  if (f.to && to === undefined) return { error: `To: "${f.to}" is not a date (YYYY-MM-DD, UTC).` };
  if (from !== undefined && to !== undefined && to < from) return { error: 'To must be on or after From.' };
  const q = f.q;
  const byAccount = q.startsWith('acct_');
  return {
    query: {
      accountId: byAccount ? q : null,
      mode: f.mode && isMode(f.mode) ? f.mode : null,
      ...(f.status && isStatus(f.status) && { status: f.status }),
      ...(f.product && isProduct(f.product) && { product: f.product }),
      ...(from !== undefined && { createdGte: from }),
      // To is inclusive: orders created before the next UTC midnight.
      ...(to !== undefined && { createdLt: to + DAY_MS }),
      ...(q && !byAccount && { idOrExternalId: q }),
    },
  };
}

function ordersTable(orders: Order[], caption: string, extra?: { head: string; cell: (o: Order) => Html | Promise<Html> }[]): Promise<Html> {
  return Promise.all(
    orders.map(async (o) => {
      const cells = extra ? await Promise.all(extra.map((e) => e.cell(o))) : [];
      return html`<tr><td data-label="Order" class="wrap-any"><a class="mono" href="/orders/${o.id}">${o.id}</a></td><td data-label="Account" class="wrap-any"><a class="mono" href="/accounts/${o.accountId}">${o.accountId}</a></td><td data-label="Mode">${o.mode}</td><td data-label="Status">${statusBadge(o.status)}${o.failureReason ? html` <span class="muted small">${o.failureReason}</span>` : ''}</td><td data-label="Product">${productText(o.product, o.quantity)}</td><td data-label="Recipient">@${o.recipient}</td><td data-label="Amount" class="num">${ton(o.amount)}</td><td data-label="Created" class="when">${time(o.createdAt)}</td>${cells.map((c, i) => html`<td data-label="${extra?.[i]?.head ?? ''}" class="wrap-any">${c}</td>`)}</tr>`;
    }),
  ).then(
    (rows) =>
      html`<div class="table-wrap"><table class="table" data-testid="orders"><caption class="visually-hidden">${caption}</caption><thead><tr><th scope="col">Order</th><th scope="col">Account</th><th scope="col">Mode</th><th scope="col">Status</th><th scope="col">Product</th><th scope="col">Recipient</th><th scope="col" class="num">Amount</th><th scope="col">Created</th>${(extra ?? []).map((e) => html`<th scope="col" class="wrap">${e.head}</th>`)}</tr></thead><tbody>${rows}</tbody></table></div>`,
  );
}

/**
 * Orders across accounts with the dashboard's filters (status, product, mode, dates, search by
 * order id, external_id or account id) through listOrders, newest first with cursor pages; and
 * the held-for-review queue (?held=1) with the evidence to decide on (Fragment request, wallet
 * message seqno and state, a held one's wallet on tonviewer; read for the whole queue at once),
 * each linked to its order page (./order.ts).
 */
export function orderRoutes(web: Console): void {
  web.get('/orders', 'support', async (request, reply) => {
    const session = web.session(request);
    const view = { session, csrf: web.token(request) };
    const query = request.query;
    if (field(query, 'held') === '1') {
      const held = await listHeldOrders(web.ctx.db.kysely, HELD_MAX);
      const found = await heldEvidence(
        web.ctx.db.kysely,
        held.map((o) => o.id),
      );
      const evidence = (o: Order) => {
        const e = found.get(o.id);
        const messages = e?.walletMessages ?? [];
        const message = (m: (typeof messages)[number], i: number) =>
          html`${i > 0 ? ', ' : ''}seqno ${m.seqno} ${m.state}${
            m.state === 'held'
              ? html` (<a href="${accountUrl(m.wallet, web.ctx.tonNetwork)}" rel="noopener noreferrer" target="_blank" data-testid="wallet-explorer">the wallet on tonviewer</a>)`
              : ''
          }`;
        return html`<span class="mono small" data-testid="fragment-req-id">${e?.fragmentReqId ?? '–'}</span> · ${messages.length ? messages.map(message) : 'no wallet message'}`;
      };
      const body = html`<h1>Orders held for review</h1>
<p>Live orders whose payment could not be confirmed: the wallet's seqno moved but our message is nowhere. Check the chain and Fragment, then open the order to resolve it as delivered or failed. <a href="/orders">All orders</a></p>
${
  held.length === 0
    ? html`<p class="notice notice-success" role="status" data-testid="held-none">No order is held for review.</p>`
    : await ordersTable(held, 'Orders held for review, oldest first', [{ head: 'Fragment request · wallet message', cell: evidence }])
}`;
      return sendHtml(reply, consolePage(view, { title: 'Held orders', section: 'orders', body }));
    }

    const filters: Filters = {
      status: field(query, 'status'),
      product: field(query, 'product'),
      mode: field(query, 'mode'),
      from: field(query, 'from').trim(),
      to: field(query, 'to').trim(),
      q: field(query, 'q').trim().slice(0, 200),
    };
    const parsed = parseFilters(filters);
    const after = decodeCursor(field(query, 'after'));
    const before = after ? undefined : decodeCursor(field(query, 'before'));
    const list =
      'query' in parsed
        ? await listOrders(web.ctx.db.kysely, { ...parsed.query, limit: ORDERS_PER_PAGE, ...(after && { startingAfter: after }), ...(before && { endingBefore: before }) })
        : undefined;
    const kept = Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== ''));
    const pageLink = (param: 'after' | 'before', o: Order) => `/orders?${new URLSearchParams({ ...kept, [param]: encodeCursor(o) }).toString()}`;
    const first = list?.orders[0];
    const last = list?.orders.at(-1);
    const hasMore = list?.hasMore === true;
    const newer = first !== undefined && (before ? hasMore : after !== undefined);
    const older = last !== undefined && (before !== undefined || hasMore);
    const option = (value: string, label: string, selected: string) => html`<option value="${value}"${value === selected ? html` selected` : ''}>${label}</option>`;
    const results = !list
      ? ''
      : list.orders.length === 0
        ? html`<p class="notice notice-info" role="status" data-testid="no-orders">No orders match these filters.</p>`
        : html`${await ordersTable(list.orders, 'Orders, newest first')}
<nav class="pagination" aria-label="Pages of orders">
  ${newer && first ? html`<a class="button button-secondary" href="${pageLink('before', first)}" rel="prev">← Newer</a>` : html`<span></span>`}
  ${older && last ? html`<a class="button button-secondary" href="${pageLink('after', last)}" rel="next">Older →</a>` : ''}
</nav>`;
    const body = html`<div class="page-head"><h1>Orders</h1><a class="button button-secondary" href="/orders?held=1">Held for review</a></div>
<form method="get" action="/orders" class="filters" role="search" aria-label="Filter orders">
  <div class="field field-grow"><label for="q">Search</label>
  <input id="q" name="q" type="search" value="${filters.q}" placeholder="ord_…, external_id or acct_…" autocomplete="off" spellcheck="false"></div>
  <div class="field"><label for="status">Status</label><select id="status" name="status">${option('', 'All statuses', filters.status)}${ORDER_STATUSES.map((s) => option(s, statusLabel(s), filters.status))}</select></div>
  <div class="field"><label for="product">Product</label><select id="product" name="product">${option('', 'All products', filters.product)}${option('stars', 'Stars', filters.product)}${option('premium', 'Premium', filters.product)}</select></div>
  <div class="field"><label for="mode">Mode</label><select id="mode" name="mode">${option('', 'Both', filters.mode)}${option('live', 'Live', filters.mode)}${option('test', 'Test', filters.mode)}</select></div>
  <div class="field"><label for="from">From (UTC)</label><input id="from" name="from" type="date" value="${filters.from}"></div>
  <div class="field"><label for="to">To (UTC)</label><input id="to" name="to" type="date" value="${filters.to}"></div>
  <div class="filter-actions"><button type="submit" class="button button-primary">Apply</button>
  ${Object.keys(kept).length ? html`<a class="button button-quiet" href="/orders">Clear</a>` : ''}</div>
</form>
${results}`;
    const error = 'error' in parsed ? notice('error', parsed.error) : undefined;
    return sendHtml(reply, consolePage(view, { title: 'Orders', section: 'orders', body, notice: error }), error ? 400 : 200);
  });

  orderPageRoutes(web);
}
