import type { KeyInfo } from '../../../accounts/admin.js';
import { transactionUrl } from '../../../deposits/explorer.js';
import type { Deposit } from '../../../deposits/store.js';
import { MODES } from '../../../domain/api-key.js';
import type { JournalEntry } from '../../../ledger/ledger.js';
import type { Order } from '../../../orders/order.js';
import type { WebhookEndpoint } from '../../../webhooks/endpoints.js';
import { csrfField } from '../../html/document.js';
import { productText, statusBadge, time, ton } from '../../html/format.js';
import { type Html, html, type Slot } from '../../html/html.js';
import { amountOf } from './deposits.js';

/**
 * The account page's read-only sections (keys, orders, deposits, balance history, webhook
 * endpoints) and the admin's key forms. Each table's cells carry data-label: on a phone a row
 * becomes a card of "label: value" lines (the dashboard's table classes).
 */

/** How many rows of each list the page shows: the newest. */
export const SHOWN = 20;

const REASON_MAX = 1000;

/** A section with its heading; `empty` in place of the table when there are no rows. */
function section(id: string, title: string, rows: Slot[], table: (rows: Slot[]) => Html, empty: string, extra: Slot = ''): Html {
  return html`<section class="section" aria-labelledby="${id}-heading" data-testid="${id}"><h2 id="${id}-heading">${title}</h2>
${rows.length === 0 ? html`<p class="muted" data-testid="${id}-none">${empty}</p>` : table(rows)}
${extra}
</section>`;
}

const tableOf = (caption: string, heads: string[]) => (rows: Slot[]) =>
  html`<div class="table-wrap"><table class="table"><caption class="visually-hidden">${caption}</caption><thead><tr>${heads.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead><tbody>${rows}</tbody></table></div>`;

/** Keys: never the secret, only the prefix a client recognises it by. Admins get revoke and reissue (the code asked again: it hands out a secret). */
export function keysSection(accountId: string, keys: KeyInfo[], admin: { csrf: string } | undefined): Html {
  const rows = keys.map(
    (k) =>
      html`<tr data-testid="key"><td data-label="Mode">${k.mode}</td><td data-label="Prefix" class="mono">${k.prefix}…</td><td data-label="Created" class="when">${time(k.createdAt)}</td><td data-label="State">${k.revokedAt === null ? 'active' : html`revoked ${time(k.revokedAt)}`}</td></tr>`,
  );
  const modeSelect = (id: string) => html`<select id="${id}" name="mode">${MODES.map((m) => html`<option value="${m}">${m}</option>`)}</select>`;
  const forms = admin
    ? html`<form method="post" action="/accounts/${accountId}/keys/revoke" class="stack card" data-testid="key-revoke-form">
  ${csrfField(admin.csrf)}
  <h3>Revoke a key</h3>
  <p class="muted">The active key of the mode answers 401 api_key_revoked from the next request; the account has no key of that mode until one is reissued.</p>
  <div class="field"><label for="revoke-mode">Mode</label>${modeSelect('revoke-mode')}</div>
  <div class="field"><label for="revoke-reason">Reason (in the audit log)</label><input id="revoke-reason" name="reason" required maxlength="${REASON_MAX}"></div>
  <button type="submit" class="button button-danger">Revoke the key</button>
</form>
<form method="post" action="/accounts/${accountId}/keys/reissue" class="stack card" data-testid="key-reissue-form">
  ${csrfField(admin.csrf)}
  <h3>Reissue a key</h3>
  <p class="muted">A new key of the mode, shown to you once to hand over; the previous one stops working at once.</p>
  <div class="field"><label for="reissue-mode">Mode</label>${modeSelect('reissue-mode')}</div>
  <div class="field"><label for="reissue-reason">Reason (in the audit log)</label><input id="reissue-reason" name="reason" required maxlength="${REASON_MAX}"></div>
  <div class="field"><label for="reissue-code">Two-factor code (asked again: it hands out a secret)</label><input id="reissue-code" name="code" inputmode="numeric" autocomplete="one-time-code" required></div>
  <button type="submit" class="button button-primary">Reissue the key</button>
</form>`
    : '';
  return section('keys', 'API keys', rows, tableOf("The account's API keys, newest first", ['Mode', 'Prefix', 'Created', 'State']), 'No key.', forms);
}

export function ordersSection(accountId: string, orders: Order[], hasMore: boolean): Html {
  const rows = orders.map(
    (o) =>
      html`<tr data-testid="order"><td data-label="Order"><a class="mono" href="/orders/${o.id}">${o.id}</a></td><td data-label="Mode">${o.mode}</td><td data-label="Status">${statusBadge(o.status)}</td><td data-label="Product">${productText(o.product, o.quantity)}</td><td data-label="Recipient" class="wrap-any">@${o.recipient}</td><td data-label="Amount" class="num">${ton(o.amount)}</td><td data-label="Created" class="when">${time(o.createdAt)}</td></tr>`,
  );
  const all = html`<p>${hasMore ? `More than ${SHOWN}: ` : ''}<a href="/orders?q=${accountId}" data-testid="all-orders">all orders of this account</a>, with the list's filters (status, product, mode, dates).</p>`;
  return section(
    'orders',
    `Orders (newest ${SHOWN})`,
    rows,
    tableOf("The account's newest orders", ['Order', 'Mode', 'Status', 'Product', 'Recipient', 'Amount', 'Created']),
    'No order.',
    all,
  );
}

export function depositsSection(deposits: Deposit[], network: 'mainnet' | 'testnet'): Html {
  const rows = deposits.map(
    (d) =>
      html`<tr data-testid="deposit"><td data-label="Chain time" class="when">${time(d.chainTime)}</td><td data-label="Asset">${d.asset}</td><td data-label="Amount" class="num">${amountOf(d)}</td><td data-label="Status">${d.status}</td><td data-label="Transaction" class="mono"><a href="${transactionUrl(d.txHash, network)}" rel="noopener noreferrer">${d.txHash.slice(0, 12)}…</a></td><td data-label="Deposit"><a href="/deposits/${d.id}">Details<span class="visually-hidden"> of deposit ${d.txHash}</span></a></td></tr>`,
  );
  return section(
    'deposits',
    `Deposits (newest ${SHOWN})`,
    rows,
    tableOf("The account's newest deposits", ['Chain time', 'Asset', 'Amount', 'Status', 'Transaction', 'Deposit']),
    'No deposit.',
  );
}

/** A signed amount: "+1.5 TON", "-2 TON"; nothing when zero. */
const delta = (n: bigint) => (n === 0n ? '' : n > 0n ? `+${ton(n)}` : `-${ton(-n)}`);

export function journalSection(history: Record<string, JournalEntry[]>): Html {
  const rows = Object.values(history)
    .flat()
    .map(
      (e) =>
        html`<tr data-testid="journal-entry"><td data-label="When" class="when">${time(e.createdAt)}</td><td data-label="Mode">${e.mode}</td><td data-label="Kind">${e.kind}</td><td data-label="Available" class="num">${delta(e.availableDelta)}</td><td data-label="Reserved" class="num">${delta(e.reservedDelta)}</td><td data-label="Available after" class="num">${ton(e.after.available)}</td><td data-label="Order or reason" class="wrap-any">${e.orderId ? html`<a class="mono" href="/orders/${e.orderId}">${e.orderId}</a>` : (e.reason ?? '')}</td></tr>`,
    );
  return section(
    'journal',
    `Balance history (newest ${SHOWN} per mode)`,
    rows,
    tableOf("The account's balance movements, live then test, newest first", ['When', 'Mode', 'Kind', 'Available', 'Reserved', 'Available after', 'Order or reason']),
    'No balance movement.',
  );
}

/** Endpoints: URL, events and state; never their signing secret. */
export function webhooksSection(endpoints: WebhookEndpoint[]): Html {
  const rows = endpoints.map(
    (w) =>
      html`<tr data-testid="webhook"><td data-label="Mode">${w.mode}</td><td data-label="URL" class="wrap-any">${w.url}</td><td data-label="Events" class="wrap-any">${w.events.join(', ')}</td><td data-label="Status">${w.status}${w.disabledReason ? html` <span class="muted small">${w.disabledReason}</span>` : ''}</td><td data-label="Created" class="when">${time(w.createdAt)}</td></tr>`,
  );
  return section('webhooks', 'Webhook endpoints', rows, tableOf("The account's webhook endpoints", ['Mode', 'URL', 'Events', 'Status', 'Created']), 'No webhook endpoint.');
}
