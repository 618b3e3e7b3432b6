import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorCode } from '../domain/api-error.js';
import type { Engine } from '../db/engine.js';
import { errorSummary } from '../db/outage.js';
import { validationError } from './api/validation.js';

/**
 * The one error handler: whatever went wrong — a contract error thrown by our code, a schema
 * validation failure, or a framework error (FST_ERR_*) — leaves as a contract error body.
 */
const FRAMEWORK_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_INVALID_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_EMPTY_TYPE: 'unsupported_media_type',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request',
  FST_ERR_BAD_URL: 'invalid_request',
};

const FRAMEWORK_MESSAGES: Partial<Record<ErrorCode, string>> = {
  payload_too_large: 'The request body is larger than 16 KiB.',
  unsupported_media_type: 'Send the request body as JSON with "Content-Type: application/json".',
  invalid_json: 'The request body is not valid JSON.',
  invalid_request: 'The request could not be read (a malformed URL, percent-escape or header).',
};

/**
 * Retry-After of a 503 service_unavailable, in seconds: the service resumes within 2 s of the
 * database answering again (docs/operations.md "When the database goes away").
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

export function serviceUnavailable(): ApiError {
  return new ApiError(
    'service_unavailable',
    'The service cannot reach its database right now. Retry after the number of seconds in Retry-After; a retry with the same Idempotency-Key is safe.',
  );
}

/** `engine`: its isUnavailable errors (a lost database) answer 503 service_unavailable. */
export function toApiError(error: FastifyError | Error, engine?: Pick<Engine, 'isUnavailable'>): ApiError {
  if (error instanceof ApiError) return error;
  if (engine?.isUnavailable(error)) return serviceUnavailable();
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) return validationError(fastifyError.validation, fastifyError.validationContext ?? 'body');
  const mapped = fastifyError.code ? FRAMEWORK_CODES[fastifyError.code] : undefined;
  if (mapped) return new ApiError(mapped, FRAMEWORK_MESSAGES[mapped] ?? error.message);
  if (fastifyError.statusCode === 413) return new ApiError('payload_too_large', FRAMEWORK_MESSAGES.payload_too_large as string);
  if (error instanceof SyntaxError) return new ApiError('invalid_json', FRAMEWORK_MESSAGES.invalid_json as string);
  if (fastifyError.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new ApiError('invalid_request', FRAMEWORK_MESSAGES.invalid_request as string);
  }
  return new ApiError('internal_error', 'Something went wrong on our side. Retry later; if it persists, contact support with the request_id.');
}

export function errorBody(error: ApiError, requestId: string) {
  return {
    ok: false as const,
    error: {
      code: error.code,
      message: error.message,
      ...(error.param !== undefined && { param: error.param }),
      ...(error.details !== undefined && { details: error.details }),
    },
    request_id: requestId,
  };
}

/** The error handler for an app on `engine`'s database. */
export function errorHandler(engine?: Pick<Engine, 'isUnavailable'>) {
  return async (error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(error, engine);
    if (apiError.code === 'internal_error') request.log.error({ err: error }, 'unhandled error');
    else if (apiError.status >= 500) request.log.warn({ code: apiError.code, ...(apiError !== error && { cause: errorSummary(error) }) }, apiError.message);
    if (apiError.code === 'service_unavailable' && !reply.hasHeader('retry-after')) reply.header('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
    return reply.code(apiError.status).send(errorBody(apiError, request.id));
  };
}

/** The error handler without a database's errors (those answer 500). */
export const handleError = errorHandler();

export async function handleNotFound(request: FastifyRequest, reply: FastifyReply) {
  const error = new ApiError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`);
  return reply.code(404).send(errorBody(error, request.id));
}
