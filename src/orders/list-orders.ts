import type { Kysely } from 'kysely';
import type { Mode } from '../domain/api-key.js';
import type { OrderStatus } from '../domain/order-status.js';
import type { Database } from '../db/schema.js';
import type { Product } from '../domain/products.js';
import { ORDER_COLUMNS, type Order, orderFromRow } from './order.js';

/**
 * The one list of orders, for its three callers: GET /orders (src/http/api), the dashboard's
 * order list and overview (src/http/web/order-list.ts) and the operator's `order list`
 * (src/cli/commands/orders.ts). Newest first on (created_at, id), with cursor pagination: a
 * cursor is an order of the same list; the next page holds orders strictly older than it, so
 * orders created meanwhile (all newer) never shift a page: a walk sees every order that existed
 * when it began exactly once. For one account and mode every filter is served by an index of
 * migration 0004 (account, mode, [status | external_id,] created_at, id); the operator's list
 * across accounts walks orders newest first.
 */
export interface OrderListQuery {
  /** One account's orders; null = every account's (the operator only). */
  accountId: string | null;
  /** One mode's orders; null = both (the operator only). */
  mode: Mode | null;
  limit: number;
  status?: OrderStatus;
  /** One product's orders (the operator console's filter). */
  product?: Product;
  externalId?: string;
  /** An order id or an external_id, matched exactly (the dashboard's search box). */
  idOrExternalId?: string;
  /** Epoch ms, inclusive. */
  createdGte?: number;
  /** Epoch ms, exclusive. */
  createdLt?: number;
  /** Orders older than this one (next page). */
  startingAfter?: Pick<Order, 'createdAt' | 'id'>;
  /** Orders newer than this one (previous page). */
  endingBefore?: Pick<Order, 'createdAt' | 'id'>;
}

export interface OrderList {
  orders: Order[];
  hasMore: boolean;
}

export async function listOrders(db: Kysely<Database>, query: OrderListQuery): Promise<OrderList> {
  const rows = await orderPageQuery(db, query).execute();
  const orders = rows.slice(0, query.limit).map(orderFromRow);
  // Backwards, the page was read oldest first from the cursor: the list is always newest first.
  if (query.endingBefore !== undefined) orders.reverse();
  return { orders, hasMore: rows.length > query.limit };
}

/** The one statement behind a page (one row more than `limit`, to know whether more follow). */
export function orderPageQuery(db: Kysely<Database>, query: OrderListQuery) {
  let select = db.selectFrom('orders').select(ORDER_COLUMNS);
  if (query.accountId !== null) select = select.where('account_id', '=', query.accountId);
  if (query.mode !== null) select = select.where('mode', '=', query.mode);
  if (query.status !== undefined) select = select.where('status', '=', query.status);
  if (query.product !== undefined) select = select.where('product', '=', query.product);
  if (query.externalId !== undefined) select = select.where('external_id', '=', query.externalId);
  const search = query.idOrExternalId;
  if (search !== undefined) select = select.where((eb) => eb.or([eb('id', '=', search), eb('external_id', '=', search)]));
  if (query.createdGte !== undefined) select = select.where('created_at', '>=', BigInt(query.createdGte));
  if (query.createdLt !== undefined) select = select.where('created_at', '<', BigInt(query.createdLt));
  const backwards = query.endingBefore !== undefined;
  const cursor = query.endingBefore ?? query.startingAfter;
  if (cursor) {
    const at = BigInt(cursor.createdAt);
    const op = backwards ? '>' : '<';
    // The redundant `created_at <=/>= at` bound makes the cursor an index range bound on both
    // engines (an OR alone is only a filter over the index, walked from the top at every depth).
    select = select.where('created_at', backwards ? '>=' : '<=', at).where((eb) => eb.or([eb('created_at', op, at), eb.and([eb('created_at', '=', at), eb('id', op, cursor.id)])]));
  }
  const direction = backwards ? 'asc' : 'desc';
  return select
    .orderBy('created_at', direction)
    .orderBy('id', direction)
    .limit(query.limit + 1);
}

/** A page boundary in a URL (the dashboard's and the console's order lists): `<created_at>.<id>` of the boundary order. */
export interface Cursor {
  createdAt: number;
  id: string;
}

export function encodeCursor(order: Pick<Order, 'createdAt' | 'id'>): string {
  return `${order.createdAt}.${order.id}`;
}

export function decodeCursor(text: string): Cursor | undefined {
  const match = /^(\d{1,16})\.(ord_[0-9A-Za-z]{1,40})$/.exec(text);
  return match ? { createdAt: Number(match[1]), id: match[2] as string } : undefined;
}
