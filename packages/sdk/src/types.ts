/**
 * The objects of the Starport API, as the SDK returns them (the body of a success response
 * without its `ok`, which is always `true`). They mirror the OpenAPI document the service
 * serves at /api/v1/openapi.json; a test in the Starport repository compiles these types against
 * types generated from that document, so the two cannot drift apart.
 */

export type Product = 'stars' | 'premium';
export type Mode = 'live' | 'test';

/**
 * `fulfillment_pending` → `processing` → `delivered` | `failed` (also `fulfillment_pending` →
 * `failed`). `delivered` and `failed` are final.
 */
export type OrderStatus = 'fulfillment_pending' | 'processing' | 'delivered' | 'failed';
export type FinalOrderStatus = 'delivered' | 'failed';
export type FailureReason = 'recipient_invalid' | 'upstream_error' | 'upstream_unavailable' | 'price_moved' | 'operator_failed';

/** TON as a decimal string (`"0.25"`): at most 9 fractional digits. Never parse it into a float. */
export type Money = string;
/** RFC 3339, UTC, milliseconds: `2026-11-25T21:30:00.123Z`. */
export type Timestamp = string;

export interface Amount {
  value: Money;
  currency: 'TON';
}

/** An order, as POST /orders answers it. */
export interface Order {
  /** `ord_…` */
  id: string;
  /** Your own order number as you sent it, or null. */
  external_id: string | null;
  product: Product;
  /** `@` and the username as supplied. */
  recipient: string;
  /** Stars, or months of Premium. */
  quantity: number;
  /** The price reserved at creation; it never changes. */
  amount: Amount;
  status: OrderStatus;
  /** null unless the order failed. */
  failure_reason: FailureReason | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Full URL of GET /orders/{id} for this order. */
  status_url: string;
}

/** An order with its history, as GET /orders/{id} answers it. */
export interface OrderWithEvents extends Order {
  /** Oldest first. */
  events: OrderEvent[];
}

interface EventOf<Type extends string, Status extends OrderStatus, Data> {
  /** `evt_…` */
  id: string;
  type: Type;
  /** The order status after this event. */
  status: Status;
  created_at: Timestamp;
  data: Data;
}

export type OrderCreatedEvent = EventOf<'order.created', 'fulfillment_pending', { amount: Money }>;
export type OrderProcessingEvent = EventOf<'order.processing', 'processing', Record<string, never>>;
export type OrderAttemptFailedEvent = EventOf<'order.attempt_failed', 'processing', { reason: string; message: string }>;
export type OrderPaymentSentEvent = EventOf<'order.payment_sent', 'processing', { tx_hash: string }>;
export type OrderDeliveredEvent = EventOf<'order.delivered', 'delivered', { amount: Money }>;
export type OrderFailedEvent = EventOf<'order.failed', 'failed', { reason: FailureReason; message: string; amount: Money }>;

/** One step of an order's history; `type` tells which. */
export type OrderEvent =
  | OrderCreatedEvent
  | OrderProcessingEvent
  | OrderAttemptFailedEvent
  | OrderPaymentSentEvent
  | OrderDeliveredEvent
  | OrderFailedEvent;

export interface Quote {
  /** `quo_…`: pass it as `quote_id` to createOrder to be charged exactly `amount`. */
  id: string;
  product: Product;
  quantity: number;
  /** What would be debited now. */
  amount: Amount;
  /** An order with this quote_id is charged `amount` until then (one order per quote). */
  expires_at: Timestamp;
}

export interface RecipientValidation {
  recipient: {
    /** Without `@`. */
    username: string;
    display_name: string;
    /** Always true in a success (an ineligible recipient is a RecipientInvalidError). */
    eligible: boolean;
  };
}

export interface Balance {
  balance: {
    /** What can be spent now. */
    value: Money;
    /** The sum of orders not yet final. */
    reserved: Money;
    currency: 'TON';
  };
  /** The mode of the key used. */
  mode: Mode;
}

/** A TON transfer credited to the live balance (GET /deposits). */
export interface Deposit {
  /** dep_…: the `starting_after` cursor. */
  id: string;
  /** The TON that arrived, to the nanoton. */
  amount: Amount;
  status: 'credited';
  /** Transaction hash, hex. */
  tx_hash: string;
  /** The sending wallet, user-friendly form. */
  sender: string;
  /** Block time of the transfer. */
  created_at: string;
  credited_at: string;
  explorer_url: string;
}

/** Newest first; pass the last `id` as `starting_after` for the next page. */
export type DepositList = List<Deposit>;

export interface ListDepositsParams {
  /** 1–100, default 20. */
  limit?: number;
  starting_after?: string;
}

/** Where to send TON for a live top-up (GET /deposit_address). */
export interface DepositAddress {
  /** The service wallet, non-bounceable user-friendly form. */
  address: string;
  /** The comment every top-up must carry. */
  memo: string;
  network: 'mainnet' | 'testnet';
  /** ton://transfer/<address>?text=<memo> */
  transfer_link: string;
}

export interface CreateOrderParams {
  product: Product;
  /** A username, with or without a leading `@`. */
  recipient: string;
  /** stars: 50–10000; premium: 3, 6 or 12 (months). */
  quantity: number;
  /** Your own order number (1–128 characters), echoed in every response. */
  external_id?: string | null;
  /**
   * A quote's `id` (getQuote) for the same product and quantity: the order is charged the
   * quoted amount if the quote has not expired (QuoteExpiredError otherwise). One order per quote.
   */
  quote_id?: string | null;
}

export interface ValidateRecipientParams {
  product: Product;
  recipient: string;
  quantity: number;
}

export interface QuoteParams {
  product: Product;
  quantity: number;
}

/** The order event types a webhook endpoint can subscribe to. */
export type OrderEventType = OrderEvent['type'];

/** A webhook endpoint (never with its secret). */
export interface WebhookEndpoint {
  id: string;
  url: string;
  /** The event types sent to it; `['*']` = all. */
  events: (WebhookEventType | '*')[];
  mode: Mode;
  /** `disabled` after persistent failure (or a 410 answer); re-enable it in the dashboard. */
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
  created_at: Timestamp;
}

/** Creation and rotation answers: the endpoint with its signing secret, shown only then. */
export interface WebhookEndpointWithSecret extends WebhookEndpoint {
  /** `whsec_…`: pass it to verifyWebhook. */
  secret: string;
}

/** All the endpoints of the key's mode, oldest first: at most 16, so `has_more` is always `false`. */
export interface WebhookEndpointList {
  object: 'list';
  data: WebhookEndpoint[];
  has_more: false;
}

export interface WebhookEndpointDeleted {
  id: string;
  deleted: true;
}

export interface CreateWebhookEndpointParams {
  /** https:// (plain http:// only in test mode), a public address. */
  url: string;
  /** Event types, or `['*']` (the default) for all. */
  events?: string[];
}

/** The event types an endpoint can subscribe to: the order events and `balance.low`. */
export type WebhookEventType = OrderEventType | 'balance.low';

/**
 * `balance.low`: a movement took the available balance of `mode` below the low-balance threshold
 * set in the dashboard. Once per crossing: again only after the balance was back to or above it.
 */
export interface BalanceLowEvent {
  id: string;
  type: 'balance.low';
  created_at: Timestamp;
  data: {
    mode: Mode;
    /** The available balance right after the movement that crossed the threshold. */
    available: Amount;
    threshold: Amount;
  };
}

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

export type OrderList = List<Order>;

export type BalanceEntryType = 'deposit' | 'reserve' | 'debit' | 'release' | 'adjustment';

/** One movement of the balance (GET /balance/history). */
export interface BalanceEntry {
  /** `jrn_…`: a cursor for `starting_after` / `ending_before`. */
  id: string;
  type: BalanceEntryType;
  /** The signed change of `balance.value`; all amounts sum to the current value. */
  amount: Money;
  /** The signed change of `balance.reserved`. */
  reserved_change: Money;
  /** The balance right after this entry. */
  balance_after: { value: Money; reserved: Money; currency: 'TON' };
  /** The order of a reserve, debit or release; otherwise null. */
  order_id: string | null;
  /** For a deposit: its reference (a transaction hash, or a test funding's request id); otherwise null. */
  deposit: { reference: string | null } | null;
  created_at: Timestamp;
}

export type BalanceHistory = List<BalanceEntry>;

/** The answer of fundTestBalance. */
export interface TestFunding {
  /** The deposit entry written. */
  entry: BalanceEntry;
  /** The test balance after it. */
  balance: { value: Money; reserved: Money; currency: 'TON' };
}

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

export interface FundTestBalanceParams {
  /** TON as a decimal string, more than 0, at most "1000000". */
  amount: Money;
}

/** Every error code of the API (see the error table of the API reference). */
export type ErrorCode =
  | 'insufficient_balance'
  | 'idempotency_conflict'
  | 'idempotency_key_in_use'
  | 'recipient_invalid'
  | 'idempotency_key_required'
  | 'idempotency_key_invalid'
  | 'invalid_json'
  | 'invalid_request'
  | 'invalid_product'
  | 'invalid_quantity'
  | 'invalid_external_id'
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'api_key_revoked'
  | 'account_disabled'
  | 'live_key_required'
  | 'test_key_required'
  | 'quote_expired'
  | 'quote_mismatch'
  | 'order_not_found'
  | 'not_found'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'rate_limited'
  | 'live_unavailable'
  | 'price_unavailable'
  | 'service_unavailable'
  | 'request_timeout'
  | 'internal_error'
  | 'invalid_url'
  | 'invalid_events'
  | 'webhook_endpoint_not_found'
  | 'webhook_endpoint_limit';

/** The body of every error response. */
export interface ErrorBody {
  ok: false;
  error: {
    code: ErrorCode;
    message: string;
    param?: string;
    details?: { [key: string]: unknown };
  };
  request_id: string;
}

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
