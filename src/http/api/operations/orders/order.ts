import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { EVENT_TYPES, type EventType, FAILURE_REASONS, ORDER_STATUSES, type OrderStatus } from '../../../../domain/order-status.js';
import type { FailureReason } from '../../../../domain/order-status.js';
import { Amount, Closed, component, Money, NullableString, OkTrue, OneOf, ProductName, PublicId, ref, Timestamp } from '../shared.js';

/**
 * The order as the API shows it (docs/api.md "Orders and statuses"): POST /orders answers
 * `Order`, GET /orders/{id} `OrderWithEvents`, GET /orders a list of `OrderListItem`.
 * orders/wire-format.ts writes these bodies.
 */

const orderFields = {
  id: PublicId('ord', 'Order id.'),
  external_id: NullableString({ maxLength: 128, description: 'Your own order number as you sent it, or `null`.' }),
  product: ProductName(),
  recipient: Type.String({ pattern: '^@', description: '`@` and the username as supplied (its case kept).' }),
  quantity: Type.Integer({ description: 'Stars, or months of Premium.' }),
  amount: ref(Amount, { description: 'The price reserved at creation; it never changes.' }),
  status: OneOf(ORDER_STATUSES, {
    description: '`fulfillment_pending` → `processing` → `delivered` | `failed` (also `fulfillment_pending` → `failed`). `delivered` and `failed` are final.',
  }),
  failure_reason: Type.Unsafe<FailureReason | null>({
    type: ['string', 'null'],
    enum: [...FAILURE_REASONS, null],
    description:
      "`null` unless the order failed. A recipient the upstream refused fails with the refusal's reason (`not_found`, `not_a_user`, `already_premium`, `not_eligible`); " +
      "`recipient_invalid` is test mode's `@test_invalid` (and orders failed before the reasons existed).",
  }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
  status_url: Type.String({ format: 'uri', description: 'Full URL of GET /orders/{id} for this order.' }),
};

export const Order = component('Order', Closed({ ok: OkTrue, ...orderFields }, 'An order, as POST /orders answers it (no `events`).'));

export const OrderListItem = component('OrderListItem', Closed(orderFields, 'An order in a list (no `events`; GET /orders/{id} has them).'));

/** What each event type moves the order to and carries in `data` (docs/api.md "Events"). */
const EVENT_SHAPES: Record<EventType, { status: OrderStatus; data: Record<string, TSchema>; description: string }> = {
  'order.created': { status: 'fulfillment_pending', data: { amount: Money({ description: 'Amount reserved.' }) }, description: 'The order was created and its price reserved.' },
  'order.processing': { status: 'processing', data: {}, description: 'A worker started buying it.' },
  'order.attempt_failed': {
    status: 'processing',
    data: { reason: Type.String(), message: Type.String() },
    description: 'A transient upstream error; the attempt will be retried.',
  },
  'order.payment_sent': { status: 'processing', data: { tx_hash: Type.String() }, description: 'The payment was sent on chain (live only).' },
  'order.delivered': { status: 'delivered', data: { amount: Money({ description: 'Amount debited.' }) }, description: 'Delivered; the reserve is debited.' },
  'order.failed': {
    status: 'failed',
    data: { reason: OneOf(FAILURE_REASONS), message: Type.String(), amount: Money({ description: 'Amount released.' }) },
    description: 'Failed; the reserve is released.',
  },
};

const eventSchemaName = (type: EventType) =>
  `OrderEvent${type
    .slice('order.'.length)
    .split('_')
    .map((word) => word[0]?.toUpperCase() + word.slice(1))
    .join('')}`;

const eventComponent = (type: EventType) => {
  const shape = EVENT_SHAPES[type];
  return component(
    eventSchemaName(type),
    Closed(
      {
        id: PublicId('evt', 'Event id.'),
        type: Type.Literal(type),
        status: Type.Literal(shape.status, { description: 'The order status after this event.' }),
        created_at: Timestamp(),
        data: Closed(shape.data),
      },
      `\`${type}\`: ${shape.description}`,
    ),
  );
};

/** One step of an order's history; `data` depends on `type` (docs/api.md "Events"). */
interface OrderEventWire {
  id: string;
  type: EventType;
  status: OrderStatus;
  created_at: string;
  data: Record<string, unknown>;
}

const events = EVENT_TYPES.map(eventComponent);

const OrderEvent = component(
  'OrderEvent',
  Type.Unsafe<OrderEventWire>({
    description: 'One step of an order history.',
    oneOf: events.map((event) => ref(event)),
    discriminator: { propertyName: 'type', mapping: Object.fromEntries(EVENT_TYPES.map((type) => [type, `#/components/schemas/${eventSchemaName(type)}`])) },
  }),
);

export const OrderWithEvents = component(
  'OrderWithEvents',
  Closed(
    { ok: OkTrue, ...orderFields, events: Type.Array(ref(OrderEvent), { description: 'The order history, oldest first.' }) },
    'An order with its history, as GET /orders/{id} answers it.',
  ),
);

export type OrderBody = Static<typeof Order.schema>;

// --- Examples ------------------------------------------------------------------------------------

const EXAMPLE_ORDER = {
  id: 'ord_7hQ2mZ0bV4nC8xK1pL5sWd',
  external_id: 'invoice-1042',
  product: 'stars',
  recipient: '@durov',
  quantity: 50,
  amount: { value: '0.25', currency: 'TON' },
  failure_reason: null,
  created_at: '2026-11-25T21:30:00.123Z',
  status_url: 'https://api.example.com/api/v1/orders/ord_7hQ2mZ0bV4nC8xK1pL5sWd',
} as const;

export const ORDER_CREATED_EXAMPLE: OrderBody = { ok: true, ...EXAMPLE_ORDER, status: 'fulfillment_pending', updated_at: '2026-11-25T21:30:00.123Z' };

export const ORDER_DELIVERED_EXAMPLE = { ...EXAMPLE_ORDER, status: 'delivered', updated_at: '2026-11-25T21:30:03.207Z' } as const;

export const ORDER_EVENTS_EXAMPLE = [
  { id: 'evt_0aJ3kP9sQ2wE5rT8yU1iOp', type: 'order.created', status: 'fulfillment_pending', created_at: '2026-11-25T21:30:00.123Z', data: { amount: '0.25' } },
  { id: 'evt_1bK4lQ0tR3xF6sU9zV2jPq', type: 'order.processing', status: 'processing', created_at: '2026-11-25T21:30:01.045Z', data: {} },
] as const;
