import { EVENT_TYPES } from './order-status.js';

/**
 * The event types a webhook endpoint can subscribe to (docs/api.md "Webhooks"): every order event,
 * and the account's own events, which carry no order.
 */
export const BALANCE_LOW_EVENT = 'balance.low';
const ACCOUNT_EVENT_TYPES = [BALANCE_LOW_EVENT] as const;
export const WEBHOOK_EVENT_TYPES = [...EVENT_TYPES, ...ACCOUNT_EVENT_TYPES] as const;
