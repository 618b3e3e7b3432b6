import { RECIPIENT_REFUSALS } from './recipient-refusal.js';

/**
 * The order state machine (docs/api.md "Orders and statuses"): fulfillment_pending → processing →
 * delivered | failed, and fulfillment_pending → failed. delivered and failed are final.
 */
export const ORDER_STATUSES = ['fulfillment_pending', 'processing', 'delivered', 'failed'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/**
 * Why an order failed (docs/api.md "Orders and statuses"). A recipient the upstream refused
 * fails with the refusal's own word (RECIPIENT_REFUSALS: not_found, not_a_user,
 * already_premium, not_eligible); `recipient_invalid` remains for test mode's `@test_invalid`
 * and for orders that failed before the refusals had reasons.
 */
export const FAILURE_REASONS = ['recipient_invalid', ...RECIPIENT_REFUSALS, 'upstream_error', 'upstream_unavailable', 'price_moved', 'operator_failed'] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

const TRANSITIONS: Record<OrderStatus, readonly OrderStatus[]> = {
  fulfillment_pending: ['processing', 'failed'],
  processing: ['delivered', 'failed'],
  delivered: [],
  failed: [],
};

export function canTransition(from: OrderStatus, to: OrderStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

export function isFinal(status: OrderStatus): boolean {
  return TRANSITIONS[status].length === 0;
}

/** Statuses whose amount is still reserved on the balance. */
export const OPEN_STATUSES: readonly OrderStatus[] = ORDER_STATUSES.filter((s) => !isFinal(s));

export const EVENT_TYPES = ['order.created', 'order.processing', 'order.attempt_failed', 'order.payment_sent', 'order.delivered', 'order.failed'] as const;
export type EventType = (typeof EVENT_TYPES)[number];
