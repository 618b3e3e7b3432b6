import type { ErrorCode, OrderWithEvents, RecipientRefusalReason } from './types.js';

export interface StarportErrorInit {
  code: string;
  message: string;
  status?: number | undefined;
  param?: string | undefined;
  details?: Record<string, unknown> | undefined;
  requestId?: string | undefined;
  headers?: Headers | undefined;
  body?: unknown;
  cause?: unknown;
}

/**
 * Every error the SDK throws. API errors carry the contract's `code` (match on it, or on the
 * subclass), the HTTP `status`, `param` when one input is at fault, `details` where the code
 * has them, and the `requestId` to quote to support.
 */
export class StarportError extends Error {
  /** An API error code, or one of the SDK's own: `connection_error`, `timeout`, `invalid_response`, `wait_timeout`, `webhook_invalid`. */
  readonly code: string;
  /** The HTTP status; undefined when no response arrived. */
  readonly status: number | undefined;
  readonly param: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  readonly requestId: string | undefined;
  readonly headers: Headers | undefined;
  /** The parsed response body, when there was one. */
  readonly body: unknown;

  constructor(init: StarportErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.code = init.code;
    this.status = init.status;
    this.param = init.param;
    this.details = init.details;
    this.requestId = init.requestId;
    this.headers = init.headers;
    this.body = init.body;
  }
}

/** 400, 413, 415: the request is wrong; fix it before sending it again. */
export class InvalidRequestError extends StarportError {}
/** 400 `recipient_invalid`: the username is malformed, unknown or cannot receive the product. */
export class RecipientInvalidError extends InvalidRequestError {
  /**
   * Why: `not_found` (also for a malformed username), `not_a_user` (a bot, channel or group),
   * `already_premium` (cannot be gifted Premium now) or `not_eligible`. Undefined from a service
   * that does not say.
   */
  get reason(): RecipientRefusalReason | undefined {
    const reason = this.details?.reason;
    return typeof reason === 'string' && (RECIPIENT_REFUSAL_REASONS as readonly string[]).includes(reason) ? (reason as RecipientRefusalReason) : undefined;
  }
}

/** Every `details.reason` of a `recipient_invalid`. */
export const RECIPIENT_REFUSAL_REASONS: readonly RecipientRefusalReason[] = ['not_found', 'not_a_user', 'already_premium', 'not_eligible'];
/** 401: the key is missing, malformed, unknown or revoked, or the account is disabled. */
export class AuthenticationError extends StarportError {}
/** 403: the endpoint needs the other kind of key. */
export class PermissionError extends StarportError {}
/** 402 `insufficient_balance`: no order was created and nothing reserved. */
export class InsufficientBalanceError extends StarportError {
  /** What could be spent (TON decimal string). */
  get available(): string | undefined {
    return typeof this.details?.available === 'string' ? this.details.available : undefined;
  }
  /** What the order would have cost (TON decimal string). */
  get required(): string | undefined {
    return typeof this.details?.required === 'string' ? this.details.required : undefined;
  }
}
/** 404: `order_not_found` (unknown id, another account's or the other mode's order), `statement_not_found`, `webhook_endpoint_not_found` or `not_found`. */
export class NotFoundError extends StarportError {}
/** 409. */
export class ConflictError extends StarportError {}
/** 409 `idempotency_conflict`: this Idempotency-Key created an order with other parameters. */
export class IdempotencyConflictError extends ConflictError {}
/** 409 `idempotency_key_in_use`: the first request with this key is still running (retried automatically). */
export class IdempotencyKeyInUseError extends ConflictError {}
/** 409 `quote_expired`. */
export class QuoteExpiredError extends ConflictError {}
/** 429 `rate_limited` (retried automatically after Retry-After). */
export class RateLimitError extends StarportError {
  /** Seconds the service asked to wait, from Retry-After. */
  get retryAfter(): number | undefined {
    const value = this.headers?.get('retry-after');
    return value === null || value === undefined || !/^\d+$/.test(value) ? undefined : Number(value);
  }
}
/** 5xx. */
export class ServerError extends StarportError {}
/** 500 `internal_error`. */
export class InternalServerError extends ServerError {}
/** 503: the service cannot do this right now; nothing was reserved or charged. */
export class ServiceUnavailableError extends ServerError {}
/** 503 `live_unavailable`: live fulfilment or live recipient checks are not available. */
export class LiveUnavailableError extends ServiceUnavailableError {}
/** 503 `price_unavailable`: no fresh price. */
export class PriceUnavailableError extends ServiceUnavailableError {}
/** 503 `service_unavailable`: the service cannot reach its database right now (retried automatically after Retry-After). */
export class DatabaseUnavailableError extends ServiceUnavailableError {}
/** 408 `request_timeout`: the request did not reach the service in time (retried like a network error). */
export class RequestTimeoutError extends StarportError {}
/** No response: the connection failed or was reset. */
export class ConnectionError extends StarportError {}
/** No response within the request timeout. */
export class TimeoutError extends ConnectionError {}
/** waitForOrder: the order was not final in time. `order` is its last known state. */
export class WaitTimeoutError extends StarportError {
  constructor(
    message: string,
    readonly order: OrderWithEvents | undefined,
  ) {
    super({ code: 'wait_timeout', message });
  }
}
/** verifyWebhook: missing headers, a stale timestamp or no matching signature. */
export class WebhookVerificationError extends StarportError {
  constructor(message: string) {
    super({ code: 'webhook_invalid', message });
  }
}

type ErrorClass = new (init: StarportErrorInit) => StarportError;

/** The error class for each contract code. */
export const ERROR_CLASSES: Record<ErrorCode, ErrorClass> = {
  insufficient_balance: InsufficientBalanceError,
  idempotency_conflict: IdempotencyConflictError,
  idempotency_key_in_use: IdempotencyKeyInUseError,
  recipient_invalid: RecipientInvalidError,
  idempotency_key_required: InvalidRequestError,
  idempotency_key_invalid: InvalidRequestError,
  invalid_json: InvalidRequestError,
  invalid_request: InvalidRequestError,
  invalid_product: InvalidRequestError,
  invalid_quantity: InvalidRequestError,
  invalid_external_id: InvalidRequestError,
  missing_api_key: AuthenticationError,
  invalid_api_key: AuthenticationError,
  api_key_revoked: AuthenticationError,
  account_disabled: AuthenticationError,
  live_key_required: PermissionError,
  test_key_required: PermissionError,
  email_unverified: PermissionError,
  quote_expired: QuoteExpiredError,
  quote_mismatch: InvalidRequestError,
  order_not_found: NotFoundError,
  statement_not_found: NotFoundError,
  not_found: NotFoundError,
  payload_too_large: InvalidRequestError,
  unsupported_media_type: InvalidRequestError,
  rate_limited: RateLimitError,
  live_unavailable: LiveUnavailableError,
  price_unavailable: PriceUnavailableError,
  service_unavailable: DatabaseUnavailableError,
  request_timeout: RequestTimeoutError,
  internal_error: InternalServerError,
  invalid_url: InvalidRequestError,
  invalid_events: InvalidRequestError,
  webhook_endpoint_not_found: NotFoundError,
  webhook_endpoint_limit: ConflictError,
};

/** Every error code the SDK knows. */
export const ERROR_CODES = Object.keys(ERROR_CLASSES) as ErrorCode[];

function classForStatus(status: number): ErrorClass {
  if (status === 401) return AuthenticationError;
  if (status === 402) return InsufficientBalanceError;
  if (status === 403) return PermissionError;
  if (status === 404) return NotFoundError;
  if (status === 409) return ConflictError;
  if (status === 429) return RateLimitError;
  if (status === 503) return ServiceUnavailableError;
  if (status >= 500) return ServerError;
  return InvalidRequestError;
}

/** The error for an API error response (by code; by status for a code this SDK does not know). */
export function errorFromResponse(status: number, body: unknown, headers: Headers): StarportError {
  const requestId = headers.get('request-id') ?? undefined;
  const error = (body as { error?: Record<string, unknown> } | undefined)?.error;
  const code = typeof error?.code === 'string' ? error.code : 'invalid_response';
  const message = typeof error?.message === 'string' ? error.message : `The service answered HTTP ${status}.`;
  const Class = (ERROR_CLASSES as Record<string, ErrorClass>)[code] ?? classForStatus(status);
  return new Class({
    code,
    message,
    status,
    param: typeof error?.param === 'string' ? error.param : undefined,
    details: typeof error?.details === 'object' && error.details !== null ? (error.details as Record<string, unknown>) : undefined,
    requestId: typeof (body as { request_id?: unknown })?.request_id === 'string' ? (body as { request_id: string }).request_id : requestId,
    headers,
    body,
  });
}
