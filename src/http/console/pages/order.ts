import { accountUrl, transactionUrl } from '../../../deposits/explorer.js';
import { operatorResolve } from '../../../operator/order-resolve.js';
import { verifyOperatorCode } from '../../../operator/operator-two-factor.js';
import { orderDetails, type Outcome, ResolveError } from '../../../orders/admin.js';
import { csrfField, notice } from '../../html/document.js';
import { productText, statusBadge, time, ton } from '../../html/format.js';
import { type Html, html, type Slot } from '../../html/html.js';
import { field, redirect, sendHtml } from '../../html/http.js';
import type { Console } from '../console.js';
import { consolePage } from '../layout.js';

type Request = Parameters<Parameters<Console['get']>[2]>[0];

interface WalletMessage {
  hash: string;
  wallet: string;
  seqno: number;
  state: string;
  outcome: string;
  tx_hash: string | null;
  signed_at: string;
  valid_until: string;
}

/** orderDetails gives the CLI's ISO times; the console writes them as the dashboard does. */
const isoTime = (value: unknown): Html | string => {
  const ms = typeof value === 'string' ? Date.parse(value) : Number.NaN;
  return Number.isNaN(ms) ? String(value) : time(ms, true);
};

const NOTICES: Record<string, Slot> = {
  resolved: notice('success', 'The order was resolved and the action recorded in the audit log.'),
};

/**
 * One order across accounts, with what `starport order show` prints (orderDetails): the
 * Fragment request, the paying wallet's messages (seqno, state, the transaction with an explorer
 * link, or for a held one the wallet's page to check around its seqno), the timeline of events, the journal and the worker; and, for an admin, the resolution
 * of an order held for review as delivered or failed, with a reason and the two-factor code asked
 * again, through `starport order resolve`'s own operation (src/operator/order-resolve.ts).
 */
export function orderPageRoutes(web: Console): void {
  const orderPage = async (request: Request, id: string, status?: Slot, code = 200) => {
    const session = web.session(request);
    const view = { session, csrf: web.token(request) };
    const details = await orderDetails(web.ctx.db.kysely, id, { feeAllowance: web.ctx.feeAllowance });
    if (!details) return { code: 404, page: consolePage(view, { title: 'No such order', section: 'orders', body: html`<h1>No such order</h1><p class="mono">${id}</p>` }) };
    const { order, events, journal, worker, upstream } = details;
    const messages = (upstream?.wallet_messages ?? []) as WalletMessage[];
    // A held message has no transaction of its own: the evidence is the wallet's history around its seqno.
    const txLink = (m: WalletMessage) =>
      m.tx_hash
        ? html`<a class="mono wrap-any" href="${transactionUrl(m.tx_hash, web.ctx.tonNetwork)}" rel="noopener noreferrer" target="_blank">${m.tx_hash}</a>`
        : m.state === 'held'
          ? html`<span class="muted">none seen on chain</span>: <a href="${accountUrl(m.wallet, web.ctx.tonNetwork)}" rel="noopener noreferrer" target="_blank" data-testid="wallet-explorer">the wallet around seqno ${m.seqno}</a>`
          : html`<span class="muted">none seen on chain</span>`;
    const evidence = upstream
      ? html`<dl class="details">
  <div><dt>Fragment request</dt><dd class="mono" data-testid="fragment-req-id">${String(upstream.fragment_req_id)}</dd></div>
  <div><dt>Requested</dt><dd>${isoTime(upstream.requested_at)} · ${String(upstream.amount)} TON to <span class="mono wrap-any">${String(upstream.destination)}</span></dd></div>
  <div><dt>Margin</dt><dd>${String(upstream.margin)} TON (after a ${String(upstream.fee_allowance)} TON fee allowance)</dd></div>
</dl>
<div class="table-wrap"><table class="table" data-testid="wallet-messages"><caption>The paying wallet's messages</caption><thead><tr><th scope="col">Seqno</th><th scope="col">State</th><th scope="col">For this order</th><th scope="col">Transaction</th><th scope="col">Signed</th><th scope="col">Valid until</th></tr></thead>
<tbody>${messages.map((m) => html`<tr><td data-label="Seqno" class="num">${m.seqno}</td><td data-label="State">${m.state}</td><td data-label="For this order">${m.outcome}</td><td data-label="Transaction">${txLink(m)}</td><td data-label="Signed" class="when">${isoTime(m.signed_at)}</td><td data-label="Valid until" class="when">${isoTime(m.valid_until)}</td></tr>`)}</tbody></table></div>`
      : html`<p class="muted">No upstream request recorded (a test order, or a live order not yet sent to Fragment).</p>`;
    const timeline = events.map(
      (e) =>
        html`<tr><td data-label="When" class="when">${time(e.createdAt, true)}</td><td data-label="Event">${e.type}</td><td data-label="Status">${e.status}</td><td data-label="Data" class="mono small wrap-any">${JSON.stringify(e.data)}</td></tr>`,
    );
    const journalRows = journal.map(
      (j) =>
        html`<tr><td data-label="When" class="when">${time(j.createdAt, true)}</td><td data-label="Kind">${j.kind}</td><td data-label="Available" class="num">${ton(j.availableDelta)}</td><td data-label="Reserved" class="num">${ton(j.reservedDelta)}</td></tr>`,
    );
    let resolve: Html | string = '';
    if (order.status === 'processing') {
      resolve =
        session.role === 'admin'
          ? html`<section class="section" aria-labelledby="resolve-heading"><h2 id="resolve-heading">Resolve</h2>
<p>Delivered debits the reserved ${ton(order.amount)}; failed releases it to the account's available balance (the client sees <code>operator_failed</code>; your reason stays in the audit log).</p>
<form method="post" action="/orders/${order.id}/resolve" class="stack card">
  ${csrfField(view.csrf)}
  <fieldset class="field"><legend class="label">Outcome</legend>
    <div class="checks"><label class="check"><input type="radio" name="outcome" value="delivered" required> Delivered: the recipient got it</label>
    <label class="check"><input type="radio" name="outcome" value="failed"> Failed: it will not be delivered</label></div>
  </fieldset>
  <div class="field"><label for="reason">Reason (in the audit log)</label><input id="reason" name="reason" required maxlength="1000"></div>
  <div class="field"><label for="code">Two-factor code (asked again to move money)</label><input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" required></div>
  <button type="submit" class="button button-primary">Resolve the order</button>
</form></section>`
          : html`<p class="notice notice-info" role="status">Only an admin can resolve this order.</p>`;
    }
    const body = html`<h1>${productText(order.product, order.quantity)} for @${order.recipient}</h1>
<p class="muted"><span class="mono">${order.id}</span> · ${statusBadge(order.status)}${order.failureReason ? ` ${order.failureReason}` : ''} · ${order.mode} · ${ton(order.amount)}</p>
<dl class="details">
  <div><dt>Account</dt><dd><a class="mono" href="/accounts/${order.accountId}">${order.accountId}</a></dd></div>
  <div><dt>Created</dt><dd>${time(order.createdAt)}</dd></div>
  <div><dt>External id</dt><dd class="mono">${order.externalId ?? '–'}</dd></div>
  <div><dt>Worker</dt><dd>${worker.attempts} attempt(s)${worker.leaseOwner ? ` · leased by ${worker.leaseOwner}` : ''}</dd></div>
</dl>
${resolve}
<section class="section" aria-labelledby="evidence-heading"><h2 id="evidence-heading">Upstream evidence</h2>${evidence}</section>
<section class="section" aria-labelledby="timeline-heading"><h2 id="timeline-heading">Timeline</h2>
<div class="table-wrap"><table class="table" data-testid="timeline"><caption class="visually-hidden">The order's events</caption><thead><tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Data</th></tr></thead><tbody>${timeline}</tbody></table></div></section>
<section class="section" aria-labelledby="journal-heading"><h2 id="journal-heading">Ledger journal</h2>
<div class="table-wrap"><table class="table"><caption class="visually-hidden">The order's journal entries</caption><thead><tr><th scope="col">When</th><th scope="col">Kind</th><th scope="col" class="num">Available</th><th scope="col" class="num">Reserved</th></tr></thead><tbody>${journalRows}</tbody></table></div></section>`;
    return { code, page: consolePage(view, { title: order.id, section: 'orders', body, notice: status }) };
  };

  web.get('/orders/:id', 'support', async (request, reply) => {
    const { id } = request.params as { id: string };
    const { code, page } = await orderPage(request, id, NOTICES[field(request.query, 'notice')]);
    return sendHtml(reply, page, code);
  });

  web.post('/orders/:id/resolve', 'admin', async (request, reply) => {
    const session = web.session(request);
    const { id } = request.params as { id: string };
    const refuse = async (message: string, status: number) => {
      const { code, page } = await orderPage(request, id, notice('error', message), status);
      return sendHtml(reply, page, code === 404 ? 404 : status);
    };
    const outcome = field(request.body, 'outcome');
    if (outcome !== 'delivered' && outcome !== 'failed') return refuse('Choose delivered or failed.', 400);
    const reason = field(request.body, 'reason').trim();
    if (reason === '' || [...reason].length > 1000) return refuse('Give a reason (at most 1000 characters): it goes to the audit log.', 400);
    if (!(await verifyOperatorCode(web.ctx.db, session.operatorId, field(request.body, 'code'))))
      return refuse('That two-factor code is not right, or was already used. Nothing was changed.', 401);
    try {
      const result = await operatorResolve(web.ctx.db.kysely, {
        orderId: id,
        outcome: outcome as Outcome,
        reason,
        actor: session.email,
        console: { operatorId: session.operatorId, ip: request.ip },
      });
      // A concurrent resolution (another operator, the CLI) got there first with this outcome.
      if (!result.changed) return refuse(`This order was already resolved as ${result.order.status} by someone else. Nothing was changed.`, 409);
    } catch (error) {
      if (error instanceof ResolveError)
        return refuse(`${error.message.replace(/pass --force/g, 'use `starport order resolve --force`')}. Nothing was changed.`, error.message.startsWith('no order') ? 404 : 409);
      throw error;
    }
    return redirect(reply, `/orders/${id}?notice=resolved`);
  });
}
