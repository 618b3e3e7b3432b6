import type { Mode } from '../../domain/api-key.js';
import type { Order } from '../../orders/order.js';
import { modePath, productText, statusBadge, ton, time } from '../html/format.js';
import { type Html, html, type Slot } from '../html/html.js';

/** Pieces several pages share. */

/** "Copy" (visible) + the thing copied (for screen readers); the script swaps the visible word for "Copied". */
export function copyButton(id: string, label: string, className = 'button-secondary'): Html {
  return html`<button type="button" class="button ${className} button-small copy-button" data-copy="${id}" hidden><span class="copy-label">Copy</span><span class="visually-hidden"> ${label}</span></button>`;
}

/**
 * A value with a copy button. The button is hidden until the script runs (no dead buttons
 * without JavaScript); the value is selectable text either way.
 */
export function copyField(id: string, value: string, label: string, options: { className?: string } = {}): Html {
  return html`<div class="copy-field ${options.className ?? ''}">
  <code id="${id}" class="copy-value">${value}</code>
  ${copyButton(id, label)}
</div>`;
}

export function copyBlock(id: string, text: string, label: string): Html {
  return html`<div class="code-block">
  <pre tabindex="0"><code id="${id}">${text}</code></pre>
  ${copyButton(id, label)}
</div>`;
}

export function emptyState(title: string, body: Slot, action?: { href: string; label: string }): Html {
  return html`<div class="empty-state">
  <p class="empty-title">${title}</p>
  <p>${body}</p>
  ${action ? html`<p><a class="button button-secondary" href="${action.href}">${action.label}</a></p>` : ''}
</div>`;
}

/** The orders table; wide content scrolls inside its own focusable region on a phone. */
export function ordersTable(orders: Order[], mode: Mode, caption: string): Html {
  const rows = orders.map(
    (o) => html`<tr>
  <td data-label="Order" class="wrap-any"><a class="mono" href="${modePath(mode, `/orders/${o.id}`)}">${o.id}</a></td>
  <td data-label="Status">${statusBadge(o.status)}</td>
  <td data-label="Product">${productText(o.product, o.quantity)}</td>
  <td data-label="Recipient" class="wrap-any">@${o.recipient}</td>
  <td data-label="Amount" class="num">${ton(o.amount)}</td>
  <td data-label="External ID" class="mono wrap-any">${o.externalId ?? html`<span class="muted">—</span>`}</td>
  <td data-label="Created" class="when">${time(o.createdAt)}</td>
</tr>`,
  );
  return html`<div class="table-wrap" role="region" aria-label="${caption}" tabindex="0">
<table class="table orders-table">
  <caption class="visually-hidden">${caption}</caption>
  <thead><tr><th scope="col">Order</th><th scope="col">Status</th><th scope="col">Product</th><th scope="col">Recipient</th><th scope="col" class="num">Amount</th><th scope="col">External ID</th><th scope="col">Created</th></tr></thead>
  <tbody>${rows}</tbody>
</table>
</div>`;
}
