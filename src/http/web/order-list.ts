import type { Db } from '../../db/engine.js';
import type { Mode } from '../../domain/api-key.js';
import type { OrderStatus } from '../../domain/order-status.js';
import { type Order, orderFromRow } from '../../orders/order.js';

/**
 * The dashboard's order list: one query per page, newest first, keyset ("cursor") pagination on
 * (created_at, id) so pages stay stable while new orders arrive and cost the same at any depth.
 * A cursor is `<created_at>.<id>` of the boundary order.
 */
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

export interface OrderListQuery {
  accountId: string;
  mode: Mode;
  status?: OrderStatus;
  /** An order id or an external_id, matched exactly. */
  search?: string;
  /** Orders older than this cursor (the next page). */
  after?: Cursor;
  /** Orders newer than this cursor (the previous page). */
  before?: Cursor;
  limit: number;
}

export interface OrderPage {
  orders: Order[];
  /** Cursor for the previous (newer) page, when there is one. */
  newer?: string;
  /** Cursor for the next (older) page, when there is one. */
  older?: string;
}

export async function listOrders(db: Db, query: OrderListQuery): Promise<OrderPage> {
  let select = db.kysely.selectFrom('orders').selectAll().where('account_id', '=', query.accountId).where('mode', '=', query.mode);
  if (query.status) select = select.where('status', '=', query.status);
  if (query.search) {
    const search = query.search;
    select = select.where((eb) => eb.or([eb('id', '=', search), eb('external_id', '=', search)]));
  }
  const backwards = !!query.before && !query.after;
  const cursor = query.after ?? query.before;
  if (cursor) {
    const at = BigInt(cursor.createdAt);
    const op = backwards ? '>' : '<';
    select = select.where((eb) => eb.or([eb('created_at', op, at), eb.and([eb('created_at', '=', at), eb('id', op, cursor.id)])]));
  }
  const direction = backwards ? 'asc' : 'desc';
  const rows = await select.orderBy('created_at', direction).orderBy('id', direction).limit(query.limit + 1).execute();
  const more = rows.length > query.limit;
  const orders = rows.slice(0, query.limit).map(orderFromRow);
  if (backwards) orders.reverse();
  const first = orders[0];
  const last = orders[orders.length - 1];
  const page: OrderPage = { orders };
  if (backwards) {
    if (more && first) page.newer = encodeCursor(first);
    if (last) page.older = encodeCursor(last);
  } else {
    if (cursor && first) page.newer = encodeCursor(first);
    if (more && last) page.older = encodeCursor(last);
  }
  return page;
}
