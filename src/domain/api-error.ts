/**
 * The contract's error codes (docs/api.md "Errors"), defined once: the HTTP status of each and
 * its message. Where the code always sends the same sentence, `message` is that sentence and
 * `new ApiError(code)` sends it; where the sentence names the request's values (an id, a
 * username), `message` is an example of it. The OpenAPI document's examples and docs/api.md's
 * error table show these messages, and a test (test/openapi/error-table.test.ts) keeps all
 * three equal. Services throw ApiError with a code; the HTTP edge turns it into the error body,
 * never anything else.
 */
export interface ErrorDefinition {
  readonly status: number;
  readonly message: string;
  /** The `param` the error names, when it names one; with `details`, what the examples show. */
  readonly param?: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

export const API_ERRORS = {
  insufficient_balance: {
    status: 402,
    message: 'The available balance does not cover this order; nothing was reserved.',
    param: 'quantity',
    details: { available: '0.1', required: '0.25' },
  },
  idempotency_conflict: {
    status: 409,
    message: 'This Idempotency-Key was already used for an order with different parameters; use a new key for a new order.',
  },
  idempotency_key_in_use: {
    status: 409,
    message: 'A request with this Idempotency-Key is still being processed; retry shortly with the same key.',
  },
  recipient_invalid: { status: 400, message: 'No Telegram account @nosuchuser exists. Check the spelling of the username.', param: 'recipient', details: { reason: 'not_found' } },
  idempotency_key_required: {
    status: 400,
    message: 'POST /orders needs an Idempotency-Key header: a unique string per new order, such as a UUID.',
  },
  idempotency_key_invalid: { status: 400, message: 'Idempotency-Key must be 1 to 255 characters.' },
  invalid_json: { status: 400, message: 'The request body is not valid JSON.' },
  invalid_request: { status: 400, message: 'Missing required body field "quantity".', param: 'quantity' },
  invalid_product: { status: 400, message: 'product must be "stars" or "premium".', param: 'product' },
  invalid_quantity: {
    status: 400,
    message: 'quantity must be an integer from 50 to 10000 for stars, or 3, 6 or 12 for premium.',
    param: 'quantity',
  },
  invalid_external_id: { status: 400, message: 'external_id must be null or a string of 1 to 128 characters.', param: 'external_id' },
  missing_api_key: { status: 401, message: 'Send your API key as "Authorization: Bearer sk_live_…" or "Bearer sk_test_…".' },
  invalid_api_key: { status: 401, message: 'The API key is not valid. Check that it was copied whole, e.g. sk_test_… (46 characters).' },
  api_key_revoked: { status: 401, message: 'This API key was revoked (it was reissued). Use the current key from the dashboard.' },
  account_disabled: { status: 401, message: 'This account is disabled. Contact support.' },
  live_key_required: { status: 403, message: 'Deposits are live-only: call this endpoint with a live key (sk_live_…).' },
  test_key_required: { status: 403, message: 'Test helpers need a test key (sk_test_…); they never touch the live balance.' },
  email_unverified: {
    status: 403,
    message:
      'This account’s live key works once an owner has verified their e-mail address: open the link we sent, or ask for a new one on the dashboard’s account page. Test keys work meanwhile.',
  },
  quote_expired: {
    status: 409,
    message: 'Quote quo_04gfIWW00046309g70Koe42BgLoZ7bk8 expired at 2026-11-25T21:35:00.000Z; ask GET /quote for a new one.',
    param: 'quote_id',
  },
  quote_mismatch: {
    status: 400,
    message: 'Quote quo_04gfIWW00046309g70Koe42BgLoZ7bk8 is for 100 stars, not 50 stars. Ask GET /quote for a new quote, or send the order without quote_id.',
    param: 'quote_id',
  },
  order_not_found: { status: 404, message: 'No order ord_7hQ2mZ0bV4nC8xK1pL5sWd in test mode for this account.', param: 'id' },
  not_found: { status: 404, message: 'No route GET /api/v1/order.' },
  statement_not_found: {
    status: 404,
    message: 'No statement for 2027-01: that month has not begun (statements cover 2026-03 to 2026-11).',
    param: 'month',
    details: { reason: 'not_begun' },
  },
  payload_too_large: { status: 413, message: 'The request body is larger than 16 KiB.' },
  unsupported_media_type: { status: 415, message: 'Send the request body as JSON with "Content-Type: application/json".' },
  rate_limited: { status: 429, message: 'Too many requests for this API key; retry after the number of seconds in Retry-After.' },
  live_unavailable: { status: 503, message: 'Live orders cannot be fulfilled right now; nothing was reserved. Retry later.' },
  price_unavailable: { status: 503, message: 'No fresh price is available right now; nothing was charged. Retry later.' },
  service_unavailable: {
    status: 503,
    message: 'The service cannot reach its database right now. Retry after the number of seconds in Retry-After; a retry with the same Idempotency-Key is safe.',
  },
  request_timeout: { status: 408, message: 'The request was not received in time; the connection is closed.' },
  internal_error: { status: 500, message: 'Something went wrong on our side. Retry later; if it persists, contact support with the request_id.' },
  // Webhooks (extension).
  invalid_url: {
    status: 400,
    message: 'url cannot be used: 10.0.0.5 is a private address; webhooks are only sent to public internet addresses.',
    param: 'url',
  },
  invalid_events: { status: 400, message: 'events must be a non-empty array of event types, or ["*"] for all.', param: 'events' },
  webhook_endpoint_not_found: { status: 404, message: 'No webhook endpoint we_3kP9sQ2wE5rT8yU1iOpZxC in test mode for this account.', param: 'id' },
  webhook_endpoint_limit: { status: 409, message: 'An account can have at most 16 webhook endpoints per mode; delete one first.' },
} as const satisfies Record<string, ErrorDefinition>;

export type ErrorCode = keyof typeof API_ERRORS;

export const ERROR_CODES = Object.keys(API_ERRORS) as ErrorCode[];

/** Each code's HTTP status. */
export const ERROR_STATUS = Object.fromEntries(ERROR_CODES.map((code) => [code, API_ERRORS[code].status])) as {
  readonly [C in ErrorCode]: (typeof API_ERRORS)[C]['status'];
};

export class ApiError extends Error {
  /** `message` defaults to the code's message in API_ERRORS: give one where it names the request's values. */
  constructor(
    readonly code: ErrorCode,
    message: string = API_ERRORS[code].message,
    readonly param?: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  get status(): number {
    return API_ERRORS[this.code].status;
  }
}
