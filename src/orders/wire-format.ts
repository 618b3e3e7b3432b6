import { tonAmount } from '../domain/money.js';
import { formatTimestamp } from '../domain/time.js';
import type { Order, OrderEvent } from './order.js';

/**
 * The order object of the wire format (docs/api.md "Orders and statuses"), as API answers and
 * webhook payloads both show it.
 */
export function orderBody(order: Order, publicUrl: string) {
  return {
    id: order.id,
    external_id: order.externalId,
    product: order.product,
    recipient: `@${order.recipient}`,
    quantity: order.quantity,
    amount: tonAmount(order.amount),
    status: order.status,
    failure_reason: order.failureReason,
    created_at: formatTimestamp(order.createdAt),
    updated_at: formatTimestamp(order.updatedAt),
    status_url: `${publicUrl}/api/v1/orders/${order.id}`,
  };
}

/** An event of an order (docs/api.md "Events"). */
export function eventBody(event: OrderEvent) {
  return {
    id: event.id,
    type: event.type,
    status: event.status,
    created_at: formatTimestamp(event.createdAt),
    data: event.data,
  };
}
