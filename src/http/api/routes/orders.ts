import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../../domain/api-error.js';
import type { OrderStatus } from '../../../domain/order-status.js';
import { listOrders } from '../../../orders/list-orders.js';
import { findOrder, findOrderWithEvents, inScope, orderWithKeyReader, type readOrderOfKey } from '../../../orders/order-store.js';
import { prefetched } from '../auth.js';
import type { ApiContext } from '../context.js';
import { GET_ORDER, LIST_ORDERS } from '../openapi/operations.js';
import { checkOneCursor, type PageQuery, parseLimit, parseTimeParam, unknownCursor } from '../pagination.js';
import { listOrdersQuery, orderIdParams } from '../schemas.js';
import { eventBody, orderBody } from '../../../orders/wire-format.js';

interface ListOrdersQuery extends PageQuery {
  status?: OrderStatus;
  external_id?: string;
  'created[gte]'?: string;
  'created[lt]'?: string;
}

export function orderRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.get<{ Querystring: ListOrdersQuery }>('/orders', { schema: { querystring: listOrdersQuery }, config: { openapi: LIST_ORDERS } }, async (request) => {
    const { query, caller } = request;
    const limit = parseLimit(query.limit);
    const createdGte = parseTimeParam('created[gte]', query['created[gte]']);
    const createdLt = parseTimeParam('created[lt]', query['created[lt]']);
    checkOneCursor(query);
    const cursor = async (param: 'starting_after' | 'ending_before') => {
      const id = query[param];
      if (id === undefined) return undefined;
      const order = await findOrder(ctx.db.kysely, id, caller);
      if (!order) throw unknownCursor(param, id, `an order of this account in ${caller.mode} mode`);
      return order;
    };
    const page = await listOrders(ctx.db.kysely, {
      accountId: caller.accountId,
      mode: caller.mode,
      limit,
      ...(query.status !== undefined && { status: query.status }),
      ...(query.external_id !== undefined && { externalId: query.external_id }),
      ...(createdGte !== undefined && { createdGte }),
      ...(createdLt !== undefined && { createdLt }),
      ...(query.starting_after !== undefined && { startingAfter: await cursor('starting_after') }),
      ...(query.ending_before !== undefined && { endingBefore: await cursor('ending_before') }),
    });
    const publicUrl = ctx.publicUrl(request);
    return { ok: true, object: 'list', data: page.orders.map((order) => orderBody(order, publicUrl)), has_more: page.hasMore };
  });

  // The key's verdict and the order in one read, where the store offers it (auth.ts Prefetch).
  const withKey = orderWithKeyReader(ctx.db.kysely);
  const prefetch = withKey && ((request: FastifyRequest, keyHash: string) => withKey(keyHash, (request.params as { id: string }).id));
  app.get<{ Params: { id: string } }>('/orders/:id', { schema: { params: orderIdParams }, config: { openapi: GET_ORDER, prefetch } }, async (request) => {
    const { caller } = request;
    const early = prefetched<Awaited<ReturnType<typeof readOrderOfKey>>['data']>(request);
    const found = early ? inScope(await early, caller) : await findOrderWithEvents(ctx.db.kysely, request.params.id, caller);
    if (!found) throw new ApiError('order_not_found', `No order ${request.params.id} in ${request.caller.mode} mode for this account.`, 'id');
    return { ok: true, ...orderBody(found.order, ctx.publicUrl(request)), events: found.events.map(eventBody) };
  });
}
