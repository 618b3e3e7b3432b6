import type { Db } from '../../db/engine.js';
import type { Mode } from '../../domain/api-key.js';
import type { OrderStatus } from '../../domain/order-status.js';
import { type Cursor, encodeCursor, listOrders } from '../../orders/list-orders.js';
import type { Order } from '../../orders/order.js';

/**
 * The dashboard's order list: one query per page (src/orders/list-orders.ts), newest first, keyset
 * ("cursor") pagination on (created_at, id) so pages stay stable while new orders arrive and cost
 * the same at any depth. A cursor in the page's URL is `<created_at>.<id>` of the boundary order
 * (encodeCursor, src/orders/list-orders.ts).
 */
export interface OrderPageQuery {
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

/** A page of the account's orders in one mode, with the cursors of the pages around it. */
export async function orderPage(db: Db, query: OrderPageQuery): Promise<OrderPage> {
  const backwards = !!query.before && !query.after;
  const cursor = query.after ?? query.before;
  const { orders, hasMore } = await listOrders(db.kysely, {
    accountId: query.accountId,
    mode: query.mode,
    limit: query.limit,
    ...(query.status && { status: query.status }),
    ...(query.search && { idOrExternalId: query.search }),
    ...(cursor && (backwards ? { endingBefore: cursor } : { startingAfter: cursor })),
  });
  const first = orders[0];
  const last = orders[orders.length - 1];
  const page: OrderPage = { orders };
  if (backwards) {
    if (hasMore && first) page.newer = encodeCursor(first);
    if (last) page.older = encodeCursor(last);
  } else {
    if (cursor && first) page.newer = encodeCursor(first);
    if (hasMore && last) page.older = encodeCursor(last);
  }
  return page;
}

export { decodeCursor, encodeCursor } from '../../orders/list-orders.js';
