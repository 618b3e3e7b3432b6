import type { Mode } from '../domain/api-key.js';
import type { EventType, FailureReason, OrderStatus } from '../domain/order-status.js';
import type { Product } from '../domain/products.js';
import type { OrderEventRow, OrderRow } from '../db/schema.js';

/** An order as the core sees it: domain types, no engine-specific representations. */
export interface Order {
  id: string;
  accountId: string;
  mode: Mode;
  idempotencyKey: string;
  fingerprint: string;
  product: Product;
  /** The username as supplied, without "@", case kept. */
  recipient: string;
  quantity: number;
  amount: bigint;
  externalId: string | null;
  status: OrderStatus;
  failureReason: FailureReason | null;
  createdAt: number;
  updatedAt: number;
  nextRunAt: number | null;
}

export interface OrderEvent {
  id: string;
  seq: number;
  type: EventType;
  status: OrderStatus;
  data: Record<string, unknown>;
  createdAt: number;
}

const optionalNumber = (value: bigint | null) => (value === null ? null : Number(value));

/**
 * The columns an Order is made of. Reads select these rather than every column: the lease
 * columns are the worker's, and on SQLite each column fetched costs a value built in V8 (about
 * a seventh of a microsecond apiece).
 */
export const ORDER_COLUMNS = [
  'id',
  'account_id',
  'mode',
  'idempotency_key',
  'fingerprint',
  'product',
  'recipient',
  'quantity',
  'amount',
  'external_id',
  'status',
  'failure_reason',
  'created_at',
  'updated_at',
  'next_run_at',
] as const satisfies ReadonlyArray<keyof OrderRow>;
export type OrderFields = Pick<OrderRow, (typeof ORDER_COLUMNS)[number]>;

export function orderFromRow(row: OrderFields): Order {
  return {
    id: row.id,
    accountId: row.account_id,
    mode: row.mode,
    idempotencyKey: row.idempotency_key,
    fingerprint: row.fingerprint,
    product: row.product,
    recipient: row.recipient,
    quantity: Number(row.quantity),
    amount: BigInt(row.amount),
    externalId: row.external_id,
    status: row.status,
    failureReason: row.failure_reason as FailureReason | null,
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
    nextRunAt: optionalNumber(row.next_run_at),
  };
}

/** What an event read selects: not the order's internal number. */
export const EVENT_COLUMNS = ['id', 'order_id', 'seq', 'type', 'status', 'data', 'created_at'] as const satisfies ReadonlyArray<keyof OrderEventRow>;
export type EventFields = Pick<OrderEventRow, (typeof EVENT_COLUMNS)[number]>;

export function eventFromRow(row: EventFields): OrderEvent {
  return {
    id: row.id,
    seq: Number(row.seq),
    type: row.type as EventType,
    status: row.status as OrderStatus,
    data: JSON.parse(row.data) as Record<string, unknown>,
    createdAt: Number(row.created_at),
  };
}

/**
 * What makes two creation requests "the same parameters" (docs/api.md "Idempotency"), plus the
 * `quote_id` extension. An order without a quote keeps the original four-element form, so the
 * fingerprints of orders created before quotes existed still match their replays.
 */
export function orderFingerprint(input: { product: Product; username: string; quantity: number; externalId: string | null; quoteId?: string | null }): string {
  const base: unknown[] = [input.product, input.username.toLowerCase(), input.quantity, input.externalId];
  if (input.quoteId) base.push(input.quoteId);
  return JSON.stringify(base);
}
