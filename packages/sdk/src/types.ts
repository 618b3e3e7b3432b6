/**
 * The objects of the Starport API, as the SDK returns them (the body of a success response
 * without its `ok`, which is always `true`). Each is an alias of a type generated from the
 * OpenAPI document the service serves at /api/v1/openapi.json (./generated/openapi.ts, made by
 * `npm run sdk:types` in the Starport repository), so there is no second copy to drift. Only
 * what the SDK adds is written here: call parameters in JavaScript types (numbers, Dates),
 * the list envelope as a generic, and the response details.
 */
import type { components } from './generated/openapi.js';

type Schemas = components['schemas'];
/** A success body without its `ok`. */
type Body<T> = Omit<T, 'ok'>;

export type Product = Schemas['Order']['product'];
export type Mode = Schemas['Balance']['mode'];

/**
 * `fulfillment_pending` → `processing` → `delivered` | `failed` (also `fulfillment_pending` →
 * `failed`). `delivered` and `failed` are final.
 */
export type OrderStatus = Schemas['Order']['status'];
export type FinalOrderStatus = Extract<OrderStatus, 'delivered' | 'failed'>;
export type FailureReason = NonNullable<Schemas['Order']['failure_reason']>;
/**
 * Why a recipient cannot receive a product: `details.reason` of a 400 `recipient_invalid`, and
 * the `failure_reason` of an order the upstream refused for that recipient. `not_found`: no
 * account has the username (a malformed one neither); `not_a_user`: a bot, channel or group;
 * `already_premium`: has Telegram Premium, cannot be gifted it now; `not_eligible`: cannot
 * receive the product right now.
 */
export type RecipientRefusalReason = 'not_found' | 'not_a_user' | 'already_premium' | 'not_eligible';

/** TON as a decimal string (`"0.25"`): at most 9 fractional digits. Never parse it into a float. */
export type Money = string;
/** RFC 3339, UTC, milliseconds: `2026-11-25T21:30:00.123Z`. */
export type Timestamp = string;

export type Amount = Schemas['Amount'];

/** An order, as POST /orders answers it. */
export type Order = Body<Schemas['Order']>;

/** An order with its history (events oldest first), as GET /orders/{id} answers it. */
export type OrderWithEvents = Body<Schemas['OrderWithEvents']>;

export type OrderCreatedEvent = Schemas['OrderEventCreated'];
export type OrderProcessingEvent = Schemas['OrderEventProcessing'];
export type OrderAttemptFailedEvent = Schemas['OrderEventAttemptFailed'];
export type OrderPaymentSentEvent = Schemas['OrderEventPaymentSent'];
export type OrderDeliveredEvent = Schemas['OrderEventDelivered'];
export type OrderFailedEvent = Schemas['OrderEventFailed'];

/** One step of an order's history; `type` tells which. */
export type OrderEvent = Schemas['OrderEvent'];

/** `id` (quo_…) is what to pass as `quote_id` to createOrder to be charged exactly `amount` until `expires_at`. */
export type Quote = Body<Schemas['Quote']>;

/**
 * GET /prices: the account's price list in the key's mode (its price plan's, else the service's
 * markup), the volume tier it is in and what the next tier needs. For display: an order is
 * charged GET /quote's amount.
 */
export type Prices = Body<Schemas['Prices']>;

/** One product and quantity rule of GET /prices, with its unit price (one star; a Premium period). */
export type PriceLine = Schemas['PriceLine'];

export type RecipientValidation = Body<Schemas['RecipientValidation']>;

export type Balance = Body<Schemas['Balance']>;

/** A TON or USDT transfer to the live balance (GET /deposits). */
export type Deposit = Schemas['Deposit'];

/** Newest first; pass the last `id` as `starting_after` for the next page. */
export type DepositList = Body<Schemas['DepositList']>;

export interface ListDepositsParams {
  /** 1–100, default 20. */
  limit?: number;
  starting_after?: string;
}

/** Where to send TON for a live top-up (GET /deposit_address). */
export type DepositAddress = Body<Schemas['DepositAddress']>;

/** POST /orders' body. */
export type CreateOrderParams = Schemas['CreateOrderRequest'];

/** POST /recipients/validate's body. */
export type ValidateRecipientParams = Schemas['ValidateRecipientRequest'];

export interface QuoteParams {
  product: Product;
  quantity: number;
}

/** The order event types a webhook endpoint can subscribe to. */
export type OrderEventType = OrderEvent['type'];

/** A webhook endpoint (never with its secret). */
export type WebhookEndpoint = Schemas['WebhookEndpoint'];

/** Creation and rotation answers: the endpoint with its signing secret (`whsec_…`), shown only then. */
export type WebhookEndpointWithSecret = Body<Schemas['WebhookEndpointWithSecret']>;

/** All the endpoints of the key's mode, oldest first: at most 16, so `has_more` is always `false`. */
export type WebhookEndpointList = Body<Schemas['WebhookEndpointList']>;

export type WebhookEndpointDeleted = Body<Schemas['WebhookEndpointDeleted']>;

/** POST /webhook_endpoints' body. */
export type CreateWebhookEndpointParams = Schemas['CreateWebhookEndpointRequest'];

/** The event types an endpoint can subscribe to: the order events and `balance.low`. */
export type WebhookEventType = OrderEventType | 'balance.low';

/**
 * `balance.low`: a movement took the available balance of `mode` below the low-balance threshold
 * set in the dashboard. Once per crossing: again only after the balance was back to or above it.
 */
export type BalanceLowEvent = Schemas['BalanceLowEvent'];

/**
 * The body of a webhook delivery (verifyWebhook's result): an order event with the order as it
 * stood right after it, a `balance.low` event (no order), or a `webhook.test` event (dashboard
 * "send test event"), which carries only `data.endpoint_id`.
 */
export type WebhookEvent =
  | { id: string; type: OrderEventType; created_at: Timestamp; data: { order: Order } & Record<string, unknown> }
  | BalanceLowEvent
  | { id: string; type: 'webhook.test'; created_at: Timestamp; data: { endpoint_id: string } };

/** A page of a list endpoint, newest first. */
export interface List<T> {
  object: 'list';
  data: T[];
  /** More items follow beyond this page, in the direction you are paging. */
  has_more: boolean;
}

export type OrderList = Body<Schemas['OrderList']>;

/** One movement of the balance (GET /balance/history). */
export type BalanceEntry = Schemas['BalanceEntry'];

export type BalanceEntryType = BalanceEntry['type'];

export type BalanceHistory = Body<Schemas['BalanceHistory']>;

/** A monthly statement of the key's balance (GET /statements/{month}). */
export type Statement = Body<Schemas['Statement']>;

/** The answer of fundTestBalance. */
export type TestFunding = Body<Schemas['TestFunding']>;

/** Cursor parameters of every list (1–100 items per page, default 20). */
export interface PageParams {
  limit?: number;
  /** The id of the last item of the previous page: items older than it. */
  starting_after?: string;
  /** The id of the first item of the current page: the items just newer than it. */
  ending_before?: string;
}

export interface ListOrdersParams extends PageParams {
  status?: OrderStatus;
  /** Exact match. */
  external_id?: string;
  /** Creation time bounds: a Date, an RFC 3339 string, or Unix seconds (number). `gte` inclusive, `lt` exclusive. */
  created?: { gte?: Date | string | number; lt?: Date | string | number };
}

export type FundTestBalanceParams = Schemas['FundTestBalanceRequest'];

/** Every error code of the API (see the error table of the API reference). */
export type ErrorCode = Schemas['ErrorCode'];

/** The body of every error response. */
export type ErrorBody = Schemas['Error'];

/** What the SDK saw of the HTTP exchange behind a result. */
export interface ResponseInfo {
  status: number;
  /** The Request-Id header: quote it to support. */
  requestId: string | undefined;
  headers: Headers;
  /** The Idempotency-Key sent (POST /orders), generated by the SDK when you gave none. */
  idempotencyKey: string | undefined;
  /** True when the service answered with `Idempotent-Replayed: true`. */
  replayed: boolean;
  /** How many HTTP attempts it took (1 without retries). */
  attempts: number;
}

/** A result with the HTTP details attached as a non-enumerable `lastResponse`. */
export type WithResponse<T> = T & { readonly lastResponse: ResponseInfo };
