import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError } from '../../../../domain/api-error.js';
import { findOrderWithEvents, inScope, orderWithKeyReader, type readOrderOfKey } from '../../../../orders/order-store.js';
import { eventBody, orderBody } from '../../../../orders/wire-format.js';
import { prefetched } from '../../auth.js';
import type { ApiContext } from '../../context.js';
import type { OperationDoc } from '../../openapi/document.js';
import { ORDER_DELIVERED_EXAMPLE, ORDER_EVENTS_EXAMPLE, OrderWithEvents } from './order.js';

/** GET /orders/{id} (docs/api.md "GET /orders/{id}"): the order with its history. */

export const OrderIdParams = Type.Object({ id: Type.String({ description: 'Order id, ord_…' }) });

type Answer = Static<typeof OrderWithEvents.schema>;

const DELIVERED: Answer = {
  ok: true,
  ...ORDER_DELIVERED_EXAMPLE,
  events: [
    ...ORDER_EVENTS_EXAMPLE,
    { id: 'evt_2cL5mR1uS4yG7tV0aW3kQr', type: 'order.delivered', status: 'delivered', created_at: '2026-11-25T21:30:03.207Z', data: { amount: '0.25' } },
  ],
};

const FAILED: Answer = {
  ...DELIVERED,
  recipient: '@test_failed',
  status: 'failed',
  failure_reason: 'upstream_error',
  events: [
    ...ORDER_EVENTS_EXAMPLE,
    {
      id: 'evt_2cL5mR1uS4yG7tV0aW3kQr',
      type: 'order.failed',
      status: 'failed',
      created_at: '2026-11-25T21:30:03.207Z',
      data: { reason: 'upstream_error', message: 'The upstream marketplace rejected the purchase (test mode simulation).', amount: '0.25' },
    },
  ],
};

const GET_ORDER: OperationDoc = {
  operationId: 'getOrder',
  summary: 'Retrieve an order',
  description:
    'The order in its current state with its `events`, oldest first. Poll it until `status` is `delivered` or `failed` (both final): ' +
    'every 5–15 s for live orders; test orders settle within about 2 s.',
  tag: 'Orders',
  success: {
    status: 200,
    description: 'The order and its history.',
    schema: OrderWithEvents,
    examples: {
      delivered: { summary: 'A delivered order', value: DELIVERED },
      failed: { summary: 'A failed order (test recipient @test_failed)', value: FAILED },
    },
  },
  errors: ['order_not_found'],
};

export function getOrder(app: FastifyInstance, ctx: ApiContext): void {
  // The key's verdict and the order in one read, where the store offers it (auth.ts Prefetch).
  const withKey = orderWithKeyReader(ctx.db.kysely);
  const prefetch = withKey && ((request: FastifyRequest, keyHash: string) => withKey(keyHash, (request.params as { id: string }).id));
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .get('/orders/:id', { schema: { params: OrderIdParams }, config: { openapi: GET_ORDER, prefetch } }, async (request): Promise<Answer> => {
      const { caller } = request;
      const early = prefetched<Awaited<ReturnType<typeof readOrderOfKey>>['data']>(request);
      const found = early ? inScope(await early, caller) : await findOrderWithEvents(ctx.db.kysely, request.params.id, caller);
      if (!found) throw new ApiError('order_not_found', `No order ${request.params.id} in ${caller.mode} mode for this account.`, 'id');
      return { ok: true, ...orderBody(found.order, ctx.publicUrl(request)), events: found.events.map(eventBody) };
    });
}
