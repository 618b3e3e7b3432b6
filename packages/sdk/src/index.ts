export { Starport } from './client.js';
export type { CreateOrderOptions, LowLevelRequest, RequestOptions, StarportOptions, WaitForOrderOptions } from './client.js';
export {
  AuthenticationError,
  ConflictError,
  ConnectionError,
  DatabaseUnavailableError,
  ERROR_CLASSES,
  ERROR_CODES,
  IdempotencyConflictError,
  IdempotencyKeyInUseError,
  InsufficientBalanceError,
  InternalServerError,
  InvalidRequestError,
  LiveUnavailableError,
  NotFoundError,
  RequestTimeoutError,
  PermissionError,
  PriceUnavailableError,
  QuoteExpiredError,
  RateLimitError,
  RecipientInvalidError,
  RECIPIENT_REFUSAL_REASONS,
  ServerError,
  ServiceUnavailableError,
  StarportError,
  TimeoutError,
  WaitTimeoutError,
  WebhookVerificationError,
} from './errors.js';
export type { StarportErrorInit } from './errors.js';
export { signWebhook, verifyWebhook } from './webhooks.js';
export type { VerifyWebhookOptions, WebhookHeaders } from './webhooks.js';
export { VERSION } from './version.js';
export type * from './types.js';
