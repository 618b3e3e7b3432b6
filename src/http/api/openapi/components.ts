import { Type } from '@sinclair/typebox';
import { API_ERRORS, ERROR_CODES, type ErrorCode, type ErrorDefinition } from '../../../domain/api-error.js';
import { RECIPIENT_REFUSALS } from '../../../domain/recipient-refusal.js';
import { Closed, component, PublicId, ref } from '../operations/shared.js';

/**
 * What the OpenAPI document says beside the operations (each in its own file under
 * ../operations/): the error body and its catalogue, and the response headers. Error
 * statuses and messages are domain/api-error.ts'; only when each code answers is here.
 */

export type JsonSchema = Record<string, unknown>;

// --- The error body ------------------------------------------------------------------------------

/** `statement_not_found`'s reasons (src/statements/statement.ts). */
const STATEMENT_UNAVAILABLE = ['not_begun', 'before_account'] as const;

const ErrorCodeSchema = component('ErrorCode', Type.Unsafe<ErrorCode>({ type: 'string', enum: ERROR_CODES, description: 'See the error table in the API description.' }));

export const ErrorBody = component(
  'Error',
  Closed(
    {
      ok: Type.Literal(false),
      error: Type.Object(
        {
          code: ref(ErrorCodeSchema),
          message: Type.String({ minLength: 1, description: 'A human sentence; may change, do not match on it.' }),
          param: Type.Optional(Type.String({ description: 'The input field at fault, when there is one.' })),
          details: Type.Optional(
            Type.Object(
              {
                reason: Type.Optional(
                  Type.Unsafe({
                    type: 'string',
                    enum: [...RECIPIENT_REFUSALS, ...STATEMENT_UNAVAILABLE],
                    description:
                      '`recipient_invalid`: why the recipient cannot receive the product. `not_found`: no account has this username (a malformed one neither); ' +
                      '`not_a_user`: a bot, channel or group; `already_premium`: has Telegram Premium, cannot be gifted it now; `not_eligible`: cannot receive the product right now. ' +
                      '`statement_not_found`: `not_begun` (the month has not begun) or `before_account` (it ended before the account was created).',
                  }),
                ),
              },
              {
                additionalProperties: true,
                description: 'Where the code says so: `insufficient_balance`: `{available, required}`; `recipient_invalid` and `statement_not_found`: `{reason}`.',
              },
            ),
          ),
        },
        { additionalProperties: false },
      ),
      request_id: PublicId('req', 'Equals the Request-Id header.'),
    },
    'Every error answers with this body.',
  ),
);

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
  email_unverified: {
    when: 'A live key of an account none of whose owners has verified an e-mail address, while the operator requires it (`SIGNUP_VERIFY=required`); test keys are never refused for it.',
  },
  quote_expired: { when: 'POST /orders with a `quote_id` past its `expires_at` (extension).' },
  quote_mismatch: { when: 'A `quote_id` for another product, quantity or account, or already used (extension).' },
  order_not_found: { when: 'Unknown or malformed id, another account’s order, or an order of the other mode.' },
  not_found: { when: 'Unknown route.' },
  statement_not_found: {
    when: 'GET /statements/{month} for a month that has not begun (`details.reason`: `not_begun`) or ended before the account was created (`before_account`) (extension).',
  },
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
