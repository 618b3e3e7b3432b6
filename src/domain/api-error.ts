/**
 * The contract's error codes (docs/api.md "Errors") with their HTTP statuses. Services throw
 * ApiError with a code; the HTTP edge turns it into the error body, never anything else.
 */
export const ERROR_STATUS = {
  insufficient_balance: 402,
  idempotency_conflict: 409,
  idempotency_key_in_use: 409,
  recipient_invalid: 400,
  idempotency_key_required: 400,
  idempotency_key_invalid: 400,
  invalid_json: 400,
  invalid_request: 400,
  invalid_product: 400,
  invalid_quantity: 400,
  invalid_external_id: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  api_key_revoked: 401,
  account_disabled: 401,
  live_key_required: 403,
  test_key_required: 403,
  quote_expired: 409,
  quote_mismatch: 400,
  order_not_found: 404,
  not_found: 404,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  live_unavailable: 503,
  price_unavailable: 503,
  service_unavailable: 503,
  request_timeout: 408,
  internal_error: 500,
  // Webhooks (extension).
  invalid_url: 400,
  invalid_events: 400,
  webhook_endpoint_not_found: 404,
  webhook_endpoint_limit: 409,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param?: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}
