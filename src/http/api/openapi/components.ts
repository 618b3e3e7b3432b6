import { API_ERRORS, ERROR_CODES, type ErrorCode, type ErrorDefinition } from '../../../domain/api-error.js';
import { MODES } from '../../../domain/api-key.js';
import { EVENT_TYPES, type EventType, FAILURE_REASONS, ORDER_STATUSES, type OrderStatus } from '../../../domain/order-status.js';
import { PRODUCTS } from '../../../domain/products.js';
import { RECIPIENT_REFUSALS } from '../../../domain/recipient-refusal.js';
import { BALANCE_LOW_EVENT, WEBHOOK_EVENT_TYPES } from '../../../domain/webhook-events.js';

/**
 * The response side of the OpenAPI document: object schemas, response headers and the error
 * catalogue. Request schemas are not here: they are the route schemas Fastify validates with
 * (../schemas.ts), published as they are. Response schemas are exact (`additionalProperties:
 * false`, every field required that is always sent), so the conformance tests catch a field
 * that is added, dropped or changes type without the document following.
 *
 * These schemas document; they do not serialise. Responses are written with JSON.stringify as
 * before (no `schema.response` on the routes, so no fast-json-stringify).
 */

export type JsonSchema = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

// --- Wire formats (docs/api.md "Conventions") --------------------------------------------------

export const MONEY = {
  type: 'string',
  pattern: '^(0|[1-9][0-9]*)(\\.[0-9]{0,8}[1-9])?$',
  description: 'TON as a decimal string: at most 9 fractional digits, trailing zeros trimmed, no exponent.',
  examples: ['0.25'],
} as const;

/** A signed change of a balance (balance history). */
export const SIGNED_MONEY = {
  type: 'string',
  pattern: '^-?(0|[1-9][0-9]*)(\\.[0-9]{0,8}[1-9])?$',
  description: 'A signed TON amount as a decimal string ("-0.25", "12.5", "0").',
  examples: ['-0.25'],
} as const;

export const TIMESTAMP = {
  type: 'string',
  format: 'date-time',
  pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$',
  description: 'RFC 3339, UTC, millisecond precision, `Z` suffix.',
  examples: ['2026-11-25T21:30:00.123Z'],
} as const;

const id = (prefix: string, description: string) => ({
  type: 'string',
  pattern: `^${prefix}_[0-9A-Za-z]+$`,
  description,
});

const closed = (properties: Record<string, unknown>, required: string[] = Object.keys(properties), description?: string) => ({
  type: 'object',
  ...(description && { description }),
  additionalProperties: false,
  required,
  properties,
});

const okTrue = { type: 'boolean', const: true, description: 'Always `true` on success.' } as const;

// --- Objects -------------------------------------------------------------------------------------

const amount = closed(
  {
    value: MONEY,
    currency: { type: 'string', const: 'TON' },
  },
  ['value', 'currency'],
  'An amount of TON.',
);

const orderFields = {
  id: id('ord', 'Order id.'),
  external_id: {
    type: ['string', 'null'],
    maxLength: 128,
    description: 'Your own order number as you sent it, or `null`.',
  },
  product: { type: 'string', enum: [...PRODUCTS] },
  recipient: { type: 'string', pattern: '^@', description: '`@` and the username as supplied (its case kept).' },
  quantity: { type: 'integer', description: 'Stars, or months of Premium.' },
  amount: { ...ref('Amount'), description: 'The price reserved at creation; it never changes.' },
  status: {
    type: 'string',
    enum: [...ORDER_STATUSES],
    description: '`fulfillment_pending` → `processing` → `delivered` | `failed` (also `fulfillment_pending` → `failed`). `delivered` and `failed` are final.',
  },
  failure_reason: {
    type: ['string', 'null'],
    enum: [...FAILURE_REASONS, null],
    description:
      "`null` unless the order failed. A recipient the upstream refused fails with the refusal's reason (`not_found`, `not_a_user`, `already_premium`, `not_eligible`); " +
      "`recipient_invalid` is test mode's `@test_invalid` (and orders failed before the reasons existed).",
  },
  created_at: TIMESTAMP,
  updated_at: TIMESTAMP,
  status_url: { type: 'string', format: 'uri', description: 'Full URL of GET /orders/{id} for this order.' },
};

/** What each event type moves the order to and carries in `data` (docs/api.md "Events"). */
const EVENT_SHAPES: Record<EventType, { status: OrderStatus; data: Record<string, unknown>; description: string }> = {
  'order.created': { status: 'fulfillment_pending', data: { amount: { ...MONEY, description: 'Amount reserved.' } }, description: 'The order was created and its price reserved.' },
  'order.processing': { status: 'processing', data: {}, description: 'A worker started buying it.' },
  'order.attempt_failed': {
    status: 'processing',
    data: { reason: { type: 'string' }, message: { type: 'string' } },
    description: 'A transient upstream error; the attempt will be retried.',
  },
  'order.payment_sent': { status: 'processing', data: { tx_hash: { type: 'string' } }, description: 'The payment was sent on chain (live only).' },
  'order.delivered': { status: 'delivered', data: { amount: { ...MONEY, description: 'Amount debited.' } }, description: 'Delivered; the reserve is debited.' },
  'order.failed': {
    status: 'failed',
    data: { reason: { type: 'string', enum: [...FAILURE_REASONS] }, message: { type: 'string' }, amount: { ...MONEY, description: 'Amount released.' } },
    description: 'Failed; the reserve is released.',
  },
};

export const eventSchemaName = (type: EventType) =>
  `OrderEvent${type
    .slice('order.'.length)
    .split('_')
    .map((word) => word[0]?.toUpperCase() + word.slice(1))
    .join('')}`;

const eventSchemas = Object.fromEntries(
  EVENT_TYPES.map((type) => {
    const shape = EVENT_SHAPES[type];
    return [
      eventSchemaName(type),
      closed(
        {
          id: id('evt', 'Event id.'),
          type: { type: 'string', const: type },
          status: { type: 'string', const: shape.status, description: 'The order status after this event.' },
          created_at: TIMESTAMP,
          data: closed(shape.data),
        },
        undefined,
        `\`${type}\`: ${shape.description}`,
      ),
    ];
  }),
);

// --- Webhooks (extension) ------------------------------------------------------------------------

const webhookEndpointFields = {
  id: id('we', 'Webhook endpoint id.'),
  url: { type: 'string', description: 'Where events are POSTed.' },
  events: {
    type: 'array',
    items: { type: 'string', enum: [...WEBHOOK_EVENT_TYPES, '*'] },
    description: 'The event types sent to this endpoint; `["*"]` = all.',
  },
  mode: { type: 'string', enum: [...MODES], description: 'Only events of this mode (its orders, its balance) are sent.' },
  status: {
    type: 'string',
    enum: ['enabled', 'disabled'],
    description: '`disabled` after persistent failure (or a 410 answer); re-enable it in the dashboard.',
  },
  disabled_reason: { type: ['string', 'null'], description: 'Why the endpoint was disabled, or `null`.' },
  created_at: TIMESTAMP,
};

const webhookSecret = {
  type: 'string',
  pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
  description: 'The signing secret (Standard Webhooks `whsec_<base64>`). Shown only in this response: store it now.',
};

const WEBHOOK_SCHEMAS: Record<string, JsonSchema> = {
  BalanceLowEvent: closed(
    {
      id: id('evt', 'Event id.'),
      type: { type: 'string', const: BALANCE_LOW_EVENT },
      created_at: TIMESTAMP,
      data: closed({
        mode: { type: 'string', enum: [...MODES], description: 'The balance that went low.' },
        available: { ...ref('Amount'), description: 'The available balance right after the movement that took it below the threshold.' },
        threshold: { ...ref('Amount'), description: 'The low-balance threshold set in the dashboard.' },
      }),
    },
    undefined,
    '`balance.low` (webhooks only): a movement (an order, an operator debit) took the available balance of `mode` below its low-balance threshold. Sent once per crossing: again only after the balance has been back to or above the threshold (docs/api.md "Low-balance alert").',
  ),
  WebhookEndpoint: closed(webhookEndpointFields, undefined, 'A webhook endpoint (never with its secret).'),
  WebhookEndpointWithSecret: closed(
    { ok: okTrue, ...webhookEndpointFields, secret: webhookSecret },
    undefined,
    'A webhook endpoint with its signing secret, as creation and rotation answer it (the only times the secret is shown).',
  ),
  WebhookEndpointList: closed(
    {
      ok: okTrue,
      object: { type: 'string', const: 'list' },
      data: { type: 'array', items: ref('WebhookEndpoint'), description: 'Oldest first; at most 16.' },
      has_more: { type: 'boolean', const: false, description: 'Always `false`: a mode has at most 16 endpoints, so the list is always complete (no paging).' },
    },
    undefined,
    'All the webhook endpoints of the key’s mode.',
  ),
  WebhookEndpointDeleted: closed(
    { ok: okTrue, id: id('we', 'The deleted endpoint.'), deleted: { type: 'boolean', const: true } },
    undefined,
    'The endpoint, its pending messages and its delivery log are gone.',
  ),
};

export const errorCodeSchema = { type: 'string', enum: ERROR_CODES };

export const COMPONENT_SCHEMAS: Record<string, JsonSchema> = {
  Amount: amount,
  Order: closed({ ok: okTrue, ...orderFields }, undefined, 'An order, as POST /orders answers it (no `events`).'),
  OrderWithEvents: closed(
    { ok: okTrue, ...orderFields, events: { type: 'array', items: ref('OrderEvent'), description: 'The order history, oldest first.' } },
    undefined,
    'An order with its history, as GET /orders/{id} answers it.',
  ),
  OrderEvent: {
    description: 'One step of an order history.',
    oneOf: EVENT_TYPES.map((type) => ref(eventSchemaName(type))),
    discriminator: {
      propertyName: 'type',
      mapping: Object.fromEntries(EVENT_TYPES.map((type) => [type, `#/components/schemas/${eventSchemaName(type)}`])),
    },
  },
  ...eventSchemas,
  RecipientValidation: closed(
    {
      ok: okTrue,
      recipient: closed({
        username: { type: 'string', description: 'Without `@`.' },
        display_name: { type: 'string' },
        eligible: { type: 'boolean', description: 'Always `true` in a 200 (an ineligible recipient is a 400 `recipient_invalid`).' },
      }),
    },
    undefined,
    'The recipient exists and can receive the product.',
  ),
  Balance: closed(
    {
      ok: okTrue,
      balance: closed({
        value: { ...MONEY, description: 'What can be spent now.' },
        reserved: { ...MONEY, description: 'The sum of orders not yet final.' },
        currency: { type: 'string', const: 'TON' },
      }),
      mode: { type: 'string', enum: [...MODES], description: 'The mode of the key used.' },
    },
    undefined,
    'The balance of the key’s mode.',
  ),
  Deposit: closed(
    {
      id: id('dep', 'Deposit id: the `starting_after` cursor.'),
      asset: { type: 'string', enum: ['TON', 'USDT'], description: 'What was sent: TON, or USDT (the TON jetton), converted to TON when credited.' },
      amount: {
        oneOf: [{ type: 'null' }, ref('Amount')],
        description: 'The TON credited, to the nanoton: for TON what arrived, for USDT the converted amount. `null` while `awaiting_rate`.',
      },
      usdt: {
        oneOf: [
          { type: 'null' },
          closed(
            {
              amount: { type: 'string', pattern: '^(0|[1-9][0-9]*)(\\.[0-9]{0,5}[1-9])?$', description: 'The USDT that arrived (6 decimals at most).' },
              rate: {
                type: ['string', 'null'],
                pattern: '^[0-9]+(\\.[0-9]+)?$',
                description: 'USD per TON it was converted at (USDT taken at 1 USD), before the spread; `null` while `awaiting_rate`.',
              },
              rate_at: { oneOf: [{ type: 'null' }, TIMESTAMP], description: 'When the rate feed had that rate; `null` while `awaiting_rate`.' },
            },
            undefined,
            'A USDT deposit: the amount and the conversion.',
          ),
        ],
        description: 'For a USDT deposit the USDT amount and its rate; `null` for TON.',
      },
      status: {
        type: 'string',
        enum: ['credited', 'awaiting_rate'],
        description: '`credited`: added to your live balance. `awaiting_rate`: a USDT deposit for you that is credited as soon as a fresh TON/USD rate exists, at that rate.',
      },
      tx_hash: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'The transaction hash (hex), as explorers show it.' },
      sender: { type: 'string', description: 'The sending wallet, user-friendly form.' },
      created_at: { ...TIMESTAMP, description: 'Block time of the transfer.' },
      credited_at: { oneOf: [{ type: 'null' }, TIMESTAMP], description: 'When your balance was credited; `null` while `awaiting_rate`.' },
      explorer_url: { type: 'string', format: 'uri', description: 'The transaction on tonviewer.' },
    },
    undefined,
    'A TON or USDT transfer to your live balance.',
  ),
  DepositList: closed(
    {
      ok: okTrue,
      object: { type: 'string', const: 'list' },
      data: { type: 'array', items: ref('Deposit'), description: 'Newest first.' },
      has_more: { type: 'boolean', description: 'Whether another page follows (pass the last `id` as `starting_after`).' },
    },
    undefined,
    'A page of deposits.',
  ),
  DepositAddress: closed(
    {
      ok: okTrue,
      address: { type: 'string', description: 'The service’s deposit wallet, user-friendly non-bounceable form (`UQ…`; `0Q…` on testnet).' },
      memo: {
        type: 'string',
        pattern: '^[A-HJ-NP-Z2-9]{11}$',
        description: 'Your personal comment: 10 characters and a check character. Case and surrounding spaces do not matter.',
      },
      network: { type: 'string', enum: ['mainnet', 'testnet'] },
      transfer_link: { type: 'string', pattern: '^ton://transfer/', description: '`ton://transfer/<address>?text=<memo>`.' },
    },
    undefined,
    'Where and how to send TON for a live top-up.',
  ),
  ...WEBHOOK_SCHEMAS,
  OrderListItem: closed(orderFields, undefined, 'An order in a list (no `events`; GET /orders/{id} has them).'),
  OrderList: closed(
    {
      ok: okTrue,
      object: { type: 'string', const: 'list' },
      data: { type: 'array', items: ref('OrderListItem'), description: 'Newest first.' },
      has_more: { type: 'boolean', description: 'More orders follow beyond this page (in the direction you are paging).' },
    },
    undefined,
    'A page of orders, newest first.',
  ),
  BalanceEntry: closed(
    {
      id: id('jrn', 'Entry id (a cursor for `starting_after` / `ending_before`).'),
      type: {
        type: 'string',
        enum: ['deposit', 'reserve', 'debit', 'release', 'adjustment'],
        description:
          '`deposit`: money in (a top-up, or test funding); `reserve`: an order was created (value → reserved); `debit`: an order was delivered (reserved spent); `release`: an order failed (reserved → value); `adjustment`: an operator correction.',
      },
      amount: { ...SIGNED_MONEY, description: 'The signed change of `balance.value`. All amounts sum to the current `balance.value`.' },
      reserved_change: { ...SIGNED_MONEY, description: 'The signed change of `balance.reserved`. All of them sum to the current `balance.reserved`.' },
      balance_after: closed({ value: MONEY, reserved: MONEY, currency: { type: 'string', const: 'TON' } }, undefined, 'The balance right after this entry.'),
      order_id: { type: ['string', 'null'], description: 'The order of a `reserve`, `debit` or `release`; otherwise `null`.' },
      deposit: {
        oneOf: [
          { type: 'null' },
          closed({
            reference: {
              type: ['string', 'null'],
              description:
                'The transaction hash of a top-up (for USDT with the amount, the rate and the spread it was converted at), or the request id (`req_…`) of a test funding.',
            },
          }),
        ],
        description: 'For a `deposit`: its reference; otherwise `null`.',
      },
      created_at: TIMESTAMP,
    },
    undefined,
    'One movement of the balance.',
  ),
  BalanceHistory: closed(
    {
      ok: okTrue,
      object: { type: 'string', const: 'list' },
      data: { type: 'array', items: ref('BalanceEntry'), description: 'Newest first.' },
      has_more: { type: 'boolean', description: 'More entries follow beyond this page (in the direction you are paging).' },
    },
    undefined,
    'A page of the balance history of the key’s mode, newest first.',
  ),
  TestFunding: closed(
    {
      ok: okTrue,
      entry: { ...ref('BalanceEntry'), description: 'The `deposit` entry written.' },
      balance: closed({
        value: { ...MONEY, description: 'What can be spent now.' },
        reserved: { ...MONEY, description: 'The sum of orders not yet final.' },
        currency: { type: 'string', const: 'TON' },
      }),
    },
    undefined,
    'The test balance after the funding.',
  ),
  ErrorCode: { ...errorCodeSchema, description: 'See the error table in the API description.' },
  Error: closed(
    {
      ok: { type: 'boolean', const: false },
      error: closed(
        {
          code: ref('ErrorCode'),
          message: { type: 'string', minLength: 1, description: 'A human sentence; may change, do not match on it.' },
          param: { type: 'string', description: 'The input field at fault, when there is one.' },
          details: {
            type: 'object',
            properties: {
              reason: {
                type: 'string',
                enum: [...RECIPIENT_REFUSALS],
                description:
                  '`recipient_invalid` only: why the recipient cannot receive the product. `not_found`: no account has this username (a malformed one neither); ' +
                  '`not_a_user`: a bot, channel or group; `already_premium`: has Telegram Premium, cannot be gifted it now; `not_eligible`: cannot receive the product right now.',
              },
            },
            additionalProperties: true,
            description: 'Where the code says so: `insufficient_balance`: `{available, required}`; `recipient_invalid`: `{reason}`.',
          },
        },
        ['code', 'message'],
      ),
      request_id: { ...id('req', 'Equals the Request-Id header.') },
    },
    undefined,
    'Every error answers with this body.',
  ),
};

// --- Headers -------------------------------------------------------------------------------------

export const COMPONENT_HEADERS = {
  'Request-Id': {
    description: 'The id of this request (`req_…`); error bodies repeat it as `request_id`. Quote it to support.',
    required: true,
    schema: { type: 'string', pattern: '^req_[0-9A-Za-z]+$' },
    example: 'req_4Xb0Yw3kq9T2mZlF8sV1aC',
  },
  'Idempotent-Replayed': {
    description: '`true` when this 201 replays the order an earlier request with the same Idempotency-Key created; absent on the first response.',
    schema: { type: 'string', const: 'true' },
  },
  'RateLimit-Policy': {
    description: 'The per-key quota (draft-ietf-httpapi-ratelimit-headers): `q` requests per window of `w` seconds. Absent when rate limiting is off.',
    schema: { type: 'string' },
    example: '"default";q=200;w=2',
  },
  RateLimit: {
    description: 'What is left: `r` requests, full again in `t` seconds. Absent when rate limiting is off.',
    schema: { type: 'string' },
    example: '"default";r=150;t=1',
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    required: true,
    schema: { type: 'string', pattern: '^[0-9]+$' },
    example: '1',
  },
} as const;

export type HeaderName = keyof typeof COMPONENT_HEADERS;

export const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: true,
  description:
    'A unique string per new order (a UUID is ideal), 1–255 characters, compared exactly. Send the same key again to retry safely: ' +
    'you get the same order back (201 with `Idempotent-Replayed: true`), never a second one. The same key with other parameters is 409 `idempotency_conflict`. ' +
    'Only a request that created an order binds its key.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
  example: '9b2f6c1e-3f43-4f1e-8d5a-5b7f0d6c2a10',
} as const;

// --- Errors --------------------------------------------------------------------------------------

/** When each contract error code answers, for the OpenAPI document (its statuses and messages: domain/api-error.ts). */
export const ERROR_DOCS = {
  insufficient_balance: {
    when: 'POST /orders: the available balance is less than the fresh price. No order, nothing reserved. `details` = `{available, required}`.',
  },
  idempotency_conflict: { when: 'An Idempotency-Key that created an order, sent again with different parameters.' },
  idempotency_key_in_use: { when: 'The first request with this Idempotency-Key is still running after 10 s of waiting. Retry with the same key.' },
  recipient_invalid: {
    when:
      'The username is malformed (any non-string too), does not exist or cannot receive the product (validate); a malformed username (POST /orders). ' +
      '`details.reason` says why: `not_found` (also for a malformed username), `not_a_user`, `already_premium` or `not_eligible`.',
  },
  idempotency_key_required: { when: 'POST /orders without an `Idempotency-Key` header.' },
  idempotency_key_invalid: { when: 'The key is empty or longer than 255 characters.' },
  invalid_json: { when: 'The body is not valid JSON, or not a JSON object.' },
  invalid_request: {
    when: 'A required field or query parameter is missing, a body field is unknown, or a query parameter is repeated or malformed (lists: `limit`, a filter or a cursor; `quote_id`; test funding `amount`); `param` names it.',
  },
  invalid_product: { when: '`product` is present but not `"stars"` or `"premium"`.' },
  invalid_quantity: { when: '`quantity` is present but not an integer 50–10000 (stars) or 3, 6, 12 (premium).' },
  invalid_external_id: { when: '`external_id` is present, not `null`, and not a string of 1–128 characters.' },
  missing_api_key: { when: 'No `Authorization` header, another scheme than `Bearer`, or `Bearer` with nothing after it.' },
  invalid_api_key: { when: 'A malformed key (prefix, length, alphabet or checksum) or an unknown key.' },
  api_key_revoked: { when: 'A key that was reissued or revoked.' },
  account_disabled: { when: 'The key’s account was disabled by the operator.' },
  live_key_required: { when: 'A live-only endpoint (deposits) called with a test key.' },
  test_key_required: { when: 'A test-only endpoint (test helpers) called with a live key.' },
  quote_expired: { when: 'POST /orders with a `quote_id` past its `expires_at` (extension).' },
  quote_mismatch: { when: 'A `quote_id` for another product, quantity or account, or already used (extension).' },
  order_not_found: { when: 'Unknown or malformed id, another account’s order, or an order of the other mode.' },
  not_found: { when: 'Unknown route.' },
  payload_too_large: { when: 'The body is over 16 KiB.' },
  unsupported_media_type: { when: 'A POST body that is not `application/json`.' },
  rate_limited: { when: 'Over the per-key rate; wait the `Retry-After` seconds.' },
  live_unavailable: { when: 'A live-mode operation needs an upstream that is not configured or is paused; nothing is reserved. Retry later.' },
  price_unavailable: { when: 'No fresh exchange rate or upstream price; nothing is charged. Retry later.' },
  service_unavailable: {
    when: 'The database (or another dependency the request needs) cannot be reached right now; `Retry-After` is set. May replace any other answer of a request that needs it. Nothing half-done is kept: a retry with the same Idempotency-Key is safe.',
  },
  request_timeout: { when: 'The request’s headers or body did not arrive within the server’s time limits; the connection is closed.' },
  internal_error: { when: 'A bug on our side; never leaks a stack trace. Retry later; if it persists, contact support with the request_id.' },
  invalid_url: {
    when: 'POST /webhook_endpoints: `url` is not an absolute http(s) URL, is not https:// in live mode, carries credentials or a fragment, or points to a private, loopback, link-local or otherwise non-public address (extension).',
  },
  invalid_events: { when: 'POST /webhook_endpoints: `events` is not a non-empty array of webhook event types (order events, `balance.low`), or `["*"]` (extension).' },
  webhook_endpoint_not_found: { when: 'Unknown or malformed webhook endpoint id, another account’s endpoint, or one of the other mode (extension).' },
  webhook_endpoint_limit: { when: 'POST /webhook_endpoints when the account already has 16 endpoints in this mode (extension).' },
} satisfies Record<ErrorCode, { when: string }>;

export { ERROR_CODES };

export const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** An example error body for `code`. */
export function errorExample(code: ErrorCode) {
  const doc: ErrorDefinition = API_ERRORS[code];
  return {
    ok: false,
    error: {
      code,
      message: doc.message,
      ...(doc.param !== undefined && { param: doc.param }),
      ...(doc.details !== undefined && { details: doc.details }),
    },
    request_id: 'req_4Xb0Yw3kq9T2mZlF8sV1aC',
  };
}

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
} as const;

export const EXAMPLES = {
  orderCreated: {
    ok: true,
    ...EXAMPLE_ORDER,
    status: 'fulfillment_pending',
    updated_at: '2026-11-25T21:30:00.123Z',
    status_url: 'https://api.example.com/api/v1/orders/ord_7hQ2mZ0bV4nC8xK1pL5sWd',
  },
  orderDelivered: {
    ok: true,
    ...EXAMPLE_ORDER,
    status: 'delivered',
    updated_at: '2026-11-25T21:30:03.207Z',
    status_url: 'https://api.example.com/api/v1/orders/ord_7hQ2mZ0bV4nC8xK1pL5sWd',
    events: [
      { id: 'evt_0aJ3kP9sQ2wE5rT8yU1iOp', type: 'order.created', status: 'fulfillment_pending', created_at: '2026-11-25T21:30:00.123Z', data: { amount: '0.25' } },
      { id: 'evt_1bK4lQ0tR3xF6sU9zV2jPq', type: 'order.processing', status: 'processing', created_at: '2026-11-25T21:30:01.045Z', data: {} },
      { id: 'evt_2cL5mR1uS4yG7tV0aW3kQr', type: 'order.delivered', status: 'delivered', created_at: '2026-11-25T21:30:03.207Z', data: { amount: '0.25' } },
    ],
  },
  orderFailed: {
    ok: true,
    ...EXAMPLE_ORDER,
    recipient: '@test_failed',
    status: 'failed',
    failure_reason: 'upstream_error',
    updated_at: '2026-11-25T21:30:03.207Z',
    status_url: 'https://api.example.com/api/v1/orders/ord_7hQ2mZ0bV4nC8xK1pL5sWd',
    events: [
      { id: 'evt_0aJ3kP9sQ2wE5rT8yU1iOp', type: 'order.created', status: 'fulfillment_pending', created_at: '2026-11-25T21:30:00.123Z', data: { amount: '0.25' } },
      { id: 'evt_1bK4lQ0tR3xF6sU9zV2jPq', type: 'order.processing', status: 'processing', created_at: '2026-11-25T21:30:01.045Z', data: {} },
      {
        id: 'evt_2cL5mR1uS4yG7tV0aW3kQr',
        type: 'order.failed',
        status: 'failed',
        created_at: '2026-11-25T21:30:03.207Z',
        data: { reason: 'upstream_error', message: 'The upstream marketplace rejected the purchase (test mode simulation).', amount: '0.25' },
      },
    ],
  },
  recipient: { ok: true, recipient: { username: 'durov', display_name: 'Pavel Durov', eligible: true } },
  balance: { ok: true, balance: { value: '12.5', reserved: '0.25', currency: 'TON' }, mode: 'test' },
  depositList: {
    ok: true,
    object: 'list',
    data: [
      {
        id: 'dep_4Lw8Rt2nQ6xZ0cV3bM9kPs',
        asset: 'USDT',
        amount: { value: '9.9', currency: 'TON' },
        usdt: { amount: '25', rate: '2.5', rate_at: '2026-11-25T21:31:02.118Z' },
        status: 'credited',
        tx_hash: '5f0c2e9a7d41b8c3e6f5a9d2c1b0e4f7a8d3c6b9e2f1a0d5c4b7e8f9a6d3c2b1',
        sender: 'EQCzQJJBAQ-FrEFcvxO5sNxhV9CaOdK9CCfq2yCBnwZ4aJ9R',
        created_at: '2026-11-25T21:31:00.000Z',
        credited_at: '2026-11-25T21:31:02.120Z',
        explorer_url: 'https://tonviewer.com/transaction/5f0c2e9a7d41b8c3e6f5a9d2c1b0e4f7a8d3c6b9e2f1a0d5c4b7e8f9a6d3c2b1',
      },
      {
        id: 'dep_9fK2mQ7xV1bN4cL8sR3tYw',
        asset: 'TON',
        amount: { value: '25', currency: 'TON' },
        usdt: null,
        status: 'credited',
        tx_hash: 'aee8d185a0c8f73c787bf1872ee9659ac53ce11a90b16b384856a7821eff8c29',
        sender: 'EQCzQJJBAQ-FrEFcvxO5sNxhV9CaOdK9CCfq2yCBnwZ4aJ9R',
        created_at: '2026-11-25T21:29:51.000Z',
        credited_at: '2026-11-25T21:29:56.412Z',
        explorer_url: 'https://tonviewer.com/transaction/aee8d185a0c8f73c787bf1872ee9659ac53ce11a90b16b384856a7821eff8c29',
      },
    ],
    has_more: false,
  },
  depositAddress: {
    ok: true,
    address: 'UQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi41-E',
    memo: 'K7QM3ZP8WD9',
    network: 'mainnet',
    transfer_link: 'ton://transfer/UQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi41-E?text=K7QM3ZP8WD9',
  },
  createOrderRequest: { product: 'stars', recipient: '@durov', quantity: 50, external_id: 'invoice-1042' },
  orderList: {
    ok: true,
    object: 'list',
    data: [
      {
        ...EXAMPLE_ORDER,
        status: 'delivered',
        updated_at: '2026-11-25T21:30:03.207Z',
        status_url: 'https://api.example.com/api/v1/orders/ord_7hQ2mZ0bV4nC8xK1pL5sWd',
      },
    ],
    has_more: false,
  },
  balanceHistory: {
    ok: true,
    object: 'list',
    data: [
      {
        id: 'jrn_3dM6nS2vT5zH8uW1bX4lRs3',
        type: 'debit',
        amount: '0',
        reserved_change: '-0.25',
        balance_after: { value: '12.25', reserved: '0', currency: 'TON' },
        order_id: 'ord_7hQ2mZ0bV4nC8xK1pL5sWd',
        deposit: null,
        created_at: '2026-11-25T21:30:03.207Z',
      },
      {
        id: 'jrn_2cL5mR1uS4yG7tV0aW3kQr2',
        type: 'reserve',
        amount: '-0.25',
        reserved_change: '0.25',
        balance_after: { value: '12.25', reserved: '0.25', currency: 'TON' },
        order_id: 'ord_7hQ2mZ0bV4nC8xK1pL5sWd',
        deposit: null,
        created_at: '2026-11-25T21:30:00.123Z',
      },
      {
        id: 'jrn_1bK4lQ0tR3xF6sU9zV2jPq1',
        type: 'deposit',
        amount: '12.5',
        reserved_change: '0',
        balance_after: { value: '12.5', reserved: '0', currency: 'TON' },
        order_id: null,
        deposit: { reference: 'req_4Xb0Yw3kq9T2mZlF8sV1aC' },
        created_at: '2026-11-25T21:29:00.000Z',
      },
    ],
    has_more: false,
  },
  testFunding: {
    ok: true,
    entry: {
      id: 'jrn_1bK4lQ0tR3xF6sU9zV2jPq1',
      type: 'deposit',
      amount: '100',
      reserved_change: '0',
      balance_after: { value: '100', reserved: '0', currency: 'TON' },
      order_id: null,
      deposit: { reference: 'req_4Xb0Yw3kq9T2mZlF8sV1aC' },
      created_at: '2026-11-25T21:29:00.000Z',
    },
    balance: { value: '100', reserved: '0', currency: 'TON' },
  },
  fundRequest: { amount: '100' },
  createPremiumRequest: { product: 'premium', recipient: 'durov', quantity: 3 },
  validateRequest: { product: 'stars', recipient: '@durov', quantity: 50 },
} as const;
