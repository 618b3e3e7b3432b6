import { formatTon, tonAmount } from '../../domain/money.js';
import type { JournalEntry } from '../../ledger/ledger.js';
import { formatTimestamp } from '../../domain/time.js';
import type { Order, OrderEvent } from '../../orders/order.js';

/** The order object of the wire format (spec 2.2 plus CONTRACT's failure_reason). */
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

export function eventBody(event: OrderEvent) {
  return {
    id: event.id,
    type: event.type,
    status: event.status,
    created_at: formatTimestamp(event.createdAt),
    data: event.data,
  };
}

/**
 * A balance history entry (issue 6). `amount` is the signed change of `balance.value` (what can
 * be spent) and `reserved_change` that of `balance.reserved`, so the amounts of all entries sum
 * to the current balance.value and the reserved changes to balance.reserved.
 */
export function entryBody(entry: JournalEntry) {
  return {
    id: entry.id,
    type: entry.kind,
    amount: formatTon(entry.availableDelta),
    reserved_change: formatTon(entry.reservedDelta),
    balance_after: { value: formatTon(entry.after.available), reserved: formatTon(entry.after.reserved), currency: 'TON' as const },
    order_id: entry.orderId,
    // The reason of a deposit is its reference (a chain transaction, or the request id of a
    // test funding). Operator adjustments' reasons are internal notes and are not shown.
    deposit: entry.kind === 'deposit' ? { reference: entry.reason } : null,
    created_at: formatTimestamp(entry.createdAt),
  };
}
