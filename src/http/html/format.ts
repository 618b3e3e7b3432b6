import type { Mode } from '../../domain/api-key.js';
import { formatTon } from '../../domain/money.js';
import type { OrderStatus } from '../../domain/order-status.js';
import type { Product } from '../../domain/products.js';
import { formatTimestamp, readableTime } from '../../domain/time.js';
import { type Html, html } from './html.js';

/** Display helpers: money as the API writes it (decimal TON, never a float), times in UTC. */
export function ton(nanotons: bigint): string {
  return `${formatTon(nanotons)} TON`;
}

export function time(epochMs: number, seconds = false): Html {
  return html`<time datetime="${formatTimestamp(epochMs)}">${readableTime(epochMs, seconds)}</time>`;
}

const STATUS_LABELS: Record<OrderStatus, string> = {
  fulfillment_pending: 'Pending',
  processing: 'Processing',
  delivered: 'Delivered',
  failed: 'Failed',
};

export function statusLabel(status: OrderStatus): string {
  return STATUS_LABELS[status];
}

/** A status pill: colour plus the word (colour is never the only signal), and the API value for search. */
export function statusBadge(status: OrderStatus): Html {
  return html`<span class="badge badge-${status}" data-status="${status}">${STATUS_LABELS[status]}</span>`;
}

export function productText(product: Product, quantity: number): string {
  return product === 'stars' ? `${quantity.toLocaleString('en-US')} Stars` : `Premium, ${quantity} months`;
}

export function modeLabel(mode: Mode): string {
  return mode === 'live' ? 'Live' : 'Test';
}

/** Path of a dashboard page in a mode: test pages live under /test, like Stripe's. */
export function modePath(mode: Mode, path: string): string {
  if (mode === 'live') return path;
  return path === '/' ? '/test' : `/test${path}`;
}
