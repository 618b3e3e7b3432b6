import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ORDER_STATUSES } from '../../../../domain/order-status.js';
import { listOrders as listOrdersOfAccount } from '../../../../orders/list-orders.js';
import { findOrder } from '../../../../orders/order-store.js';
import { orderBody } from '../../../../orders/wire-format.js';
import type { ApiContext } from '../../context.js';
import type { OperationDoc } from '../../openapi/document.js';
import { checkOneCursor, parseLimit, parseTimeParam, unknownCursor } from '../../pagination.js';
import { component, FREE_TEXT_PATTERN, listOf, OneOf, PAGINATION, ListQuery } from '../shared.js';
import { ORDER_DELIVERED_EXAMPLE, OrderListItem } from './order.js';

/** GET /orders (docs/api.md "GET /orders"): the account's orders of the key's mode, newest first, with filters. */

const createdBound = (description: string) =>
  Type.Optional(
    Type.String({
      description: `${description} An RFC 3339 timestamp (\`2026-11-25T21:30:00Z\`, \`2026-11-25T21:30:00.123+02:00\`) or Unix seconds (digits only).`,
      examples: ['2026-11-25T00:00:00Z'],
    }),
  );

const ListOrdersQuery = ListQuery({
  status: Type.Optional(OneOf(ORDER_STATUSES, { description: 'Only orders in this status.' })),
  external_id: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 128,
      // Like the order's own external_id.
      pattern: FREE_TEXT_PATTERN,
      description: 'Only orders with this `external_id` (exact match; 1–128 characters, no NUL).',
    }),
  ),
  'created[gte]': createdBound('Only orders created at or after this time.'),
  'created[lt]': createdBound('Only orders created before this time.'),
});

const OrderList = component('OrderList', listOf(OrderListItem, 'A page of orders, newest first.'));

const EXAMPLE: Static<typeof OrderList.schema> = { ok: true, object: 'list', data: [ORDER_DELIVERED_EXAMPLE], has_more: false };

const LIST_ORDERS: OperationDoc = {
  operationId: 'listOrders',
  summary: 'List orders',
  description:
    'The orders of the key’s account and mode, newest first (ties broken by id), without `events`. ' +
    PAGINATION +
    'Paging with `starting_after` never skips or repeats an order, even while new orders are created. ' +
    'Filters combine: `status`, `external_id` (exact), `created[gte]` (inclusive) and `created[lt]` (exclusive), each an RFC 3339 timestamp or Unix seconds.',
  tag: 'Orders',
  success: { status: 200, description: 'A page of orders.', schema: OrderList, examples: { page: { value: EXAMPLE } } },
  errors: [],
};

export function listOrders(app: FastifyInstance, ctx: ApiContext): void {
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .get('/orders', { schema: { querystring: ListOrdersQuery }, config: { openapi: LIST_ORDERS } }, async (request): Promise<Static<typeof OrderList.schema>> => {
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
      const page = await listOrdersOfAccount(ctx.db.kysely, {
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
}
