import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../../domain/api-error.js';
import { parseUsername } from '../../../../domain/username.js';
import { createOrder as placeOrder } from '../../../../orders/create-order.js';
import { orderBody } from '../../../../orders/wire-format.js';
import type { ApiContext } from '../../context.js';
import { IDEMPOTENCY_KEY_PARAMETER } from '../../openapi/components.js';
import type { OperationDoc } from '../../openapi/document.js';
import { FREE_TEXT_PATTERN, ProductName, QUANTITY_BY_PRODUCT, Quantity, Recipient } from '../shared.js';
import { Order, ORDER_CREATED_EXAMPLE, type OrderBody } from './order.js';

/**
 * POST /orders (docs/api.md "POST /orders"): the body schema, the OpenAPI text, the
 * Idempotency-Key check and the handler. The answer is the shared `Order` (./order.ts),
 * written by orders/wire-format.ts. Checks answer in docs/api.md's "Order of checks": the
 * Idempotency-Key header (route preValidation), then the body fields (the schema, through
 * validation.ts), then what createOrder decides.
 */

/** Quantity rules depend on the product, hence the if/then pairs (QUANTITY_BY_PRODUCT). */
export const CreateOrderBody = Type.Object(
  {
    product: ProductName({ description: 'What to buy.', examples: ['stars'] }),
    recipient: Recipient,
    quantity: Quantity,
    external_id: Type.Optional(
      Type.Unsafe<string | null>({
        type: ['string', 'null'],
        minLength: 1,
        maxLength: 128,
        pattern: FREE_TEXT_PATTERN,
        description: 'Your own order number (1–128 characters, no NUL, well-formed Unicode), echoed in every response.',
        examples: ['invoice-1042'],
      }),
    ),
    quote_id: Type.Optional(
      Type.Unsafe<string | null>({
        type: ['string', 'null'],
        pattern: '^quo_[0-9A-Za-z]{1,64}$',
        description:
          'The `id` of a GET /quote answer for the same product and quantity: the order is charged the quoted amount if the quote has not expired. ' +
          'A quote prices one order. Part of the idempotency fingerprint.',
        examples: ['quo_04gfIWW00046309g70Koe42BgLoZ7bk8AKC5pBFqeT9m7wGguHWZuBcF3AHTXaT'],
      }),
    ),
  },
  { additionalProperties: false, allOf: QUANTITY_BY_PRODUCT },
);

const CREATE_ORDER: OperationDoc = {
  operationId: 'createOrder',
  summary: 'Create an order',
  description:
    'Prices the order afresh, reserves the amount on the balance of the key’s mode and queues the order for fulfilment. ' +
    'With `quote_id` (from GET /quote, same product and quantity, not expired, not used by another order) the order is charged the quoted amount instead. ' +
    'Answers 201 with the order in `fulfillment_pending`. Retrying with the same `Idempotency-Key` and body answers 201 with the same order ' +
    '(in its current state) and `Idempotent-Replayed: true`. Then poll GET /orders/{id} every 5–15 s (test orders settle within about 2 s).',
  tag: 'Orders',
  requestBody: {
    name: 'CreateOrderRequest',
    description: '`quantity`: stars 50–10000, premium 3, 6 or 12 (months). `external_id` is optional: your own order number, echoed back.',
    examples: {
      stars: { summary: '50 Stars', value: { product: 'stars', recipient: '@durov', quantity: 50, external_id: 'invoice-1042' } },
      premium: { summary: '3 months of Premium', value: { product: 'premium', recipient: 'durov', quantity: 3 } },
    },
  },
  headers: [IDEMPOTENCY_KEY_PARAMETER],
  success: {
    status: 201,
    description: 'The order was created, or (with `Idempotent-Replayed: true`) an earlier request with this key created it.',
    schema: Order,
    headers: ['Idempotent-Replayed'],
    examples: { created: { summary: 'A new order', value: ORDER_CREATED_EXAMPLE } },
  },
  errors: [
    'idempotency_key_required',
    'idempotency_key_invalid',
    'invalid_product',
    'recipient_invalid',
    'invalid_quantity',
    'invalid_external_id',
    'invalid_request',
    'idempotency_conflict',
    'quote_mismatch',
    'quote_expired',
    'idempotency_key_in_use',
    'live_unavailable',
    'price_unavailable',
    'insufficient_balance',
  ],
};

const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** Idempotency-Key checks come after the body is parsed and before its fields (order of checks). */
function idempotencyKey(header: string | string[] | undefined): string {
  if (header === undefined) {
    throw new ApiError('idempotency_key_required');
  }
  const key = Array.isArray(header) ? header.join(', ') : header;
  const length = [...key].length;
  if (length === 0 || length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new ApiError('idempotency_key_invalid', `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`);
  }
  return key;
}

export function createOrder(app: FastifyInstance, ctx: ApiContext): void {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/orders',
    {
      schema: { body: CreateOrderBody },
      config: { openapi: CREATE_ORDER },
      preValidation: async (request) => {
        request.idempotencyKey = idempotencyKey(request.headers['idempotency-key']);
      },
    },
    async (request, reply) => {
      const { accountId, mode, planName } = request.caller;
      const body = request.body;
      const result = await placeOrder(ctx.orders, {
        accountId,
        mode,
        planName,
        idempotencyKey: request.idempotencyKey,
        product: body.product,
        username: parseUsername(body.recipient) as string,
        quantity: body.quantity,
        externalId: body.external_id ?? null,
        quoteId: body.quote_id ?? null,
      });
      if (result.replayed) reply.header('Idempotent-Replayed', 'true');
      const answer: OrderBody = { ok: true, ...orderBody(result.order, ctx.publicUrl(request)) };
      return reply.code(201).send(answer);
    },
  );
}
