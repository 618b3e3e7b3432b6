import { describe, expect, it } from 'vitest';
import { canTransition, EVENT_TYPES, FAILURE_REASONS, isFinal, OPEN_STATUSES, ORDER_STATUSES, type OrderStatus } from '../../src/domain/order-status.js';

const ALLOWED: Array<[OrderStatus, OrderStatus]> = [
  ['fulfillment_pending', 'processing'],
  ['fulfillment_pending', 'failed'],
  ['processing', 'delivered'],
  ['processing', 'failed'],
];

describe('ORDER_STATUSES', () => {
  it('is the closed list of the contract', () => {
    expect([...ORDER_STATUSES]).toEqual(['fulfillment_pending', 'processing', 'delivered', 'failed']);
  });
});

describe('canTransition', () => {
  it.each(ALLOWED)('allows %s → %s', (from, to) => {
    expect(canTransition(from, to)).toBe(true);
  });

  const forbidden = ORDER_STATUSES.flatMap((from) =>
    ORDER_STATUSES.filter((to) => !ALLOWED.some(([f, t]) => f === from && t === to)).map((to) => [from, to] as [OrderStatus, OrderStatus]),
  );

  it('forbids exactly the other 12 pairs', () => {
    expect(forbidden).toHaveLength(12);
  });

  it.each(forbidden)('forbids %s → %s', (from, to) => {
    expect(canTransition(from, to)).toBe(false);
  });
});

describe('isFinal', () => {
  it('treats delivered and failed as final', () => {
    expect(isFinal('delivered')).toBe(true);
    expect(isFinal('failed')).toBe(true);
  });

  it('treats fulfillment_pending and processing as open', () => {
    expect(isFinal('fulfillment_pending')).toBe(false);
    expect(isFinal('processing')).toBe(false);
  });
});

describe('OPEN_STATUSES', () => {
  it('are the statuses whose amount is still reserved', () => {
    expect([...OPEN_STATUSES].sort()).toEqual(['fulfillment_pending', 'processing']);
  });
});

describe('FAILURE_REASONS and EVENT_TYPES', () => {
  it('list the contract values', () => {
    expect([...FAILURE_REASONS].sort()).toEqual(
      ['already_premium', 'not_a_user', 'not_eligible', 'not_found', 'operator_failed', 'price_moved', 'recipient_invalid', 'upstream_error', 'upstream_unavailable'].sort(),
    );
    expect([...EVENT_TYPES].sort()).toEqual(['order.attempt_failed', 'order.created', 'order.delivered', 'order.failed', 'order.payment_sent', 'order.processing'].sort());
  });
});
