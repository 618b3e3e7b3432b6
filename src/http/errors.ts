import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorCode } from '../domain/api-error.js';
import type { Engine } from '../db/engine.js';
import { Outage } from '../db/outage.js';
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

/** A framework error's message: the code's own (domain/api-error.ts), but a more specific one for invalid_request. */
const FRAMEWORK_MESSAGES: Partial<Record<ErrorCode, string>> = {
  invalid_request: 'The request could not be read (a malformed URL, percent-escape or header).',
};

/** `request`: the one that failed, whose body or query a validation error's message may quote. */
export function toApiError(error: FastifyError | Error, request?: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const context = fastifyError.validationContext ?? 'body';
    return validationError(fastifyError.validation, context, context === 'querystring' ? request?.query : request?.body);
  }
  const mapped = fastifyError.code ? FRAMEWORK_CODES[fastifyError.code] : undefined;
  if (mapped) return new ApiError(mapped, FRAMEWORK_MESSAGES[mapped]);
  if (fastifyError.statusCode === 413) return new ApiError('payload_too_large');
  if (error instanceof SyntaxError) return new ApiError('invalid_json');
  if (fastifyError.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new ApiError('invalid_request', FRAMEWORK_MESSAGES.invalid_request as string);
  }
  return new ApiError('internal_error');
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

/** Requests failed by an unavailable database: logged once as the outage begins, not once per request. */
const outage = new Outage('API');

/** Seconds a client is asked to wait (Retry-After) before retrying after a 503 service_unavailable. */
export const UNAVAILABLE_RETRY_AFTER_S = 1;

/**
 * The database cannot do the work right now (Engine.isUnavailable: a full or read-only disk,
 * an unreachable server). Nothing half-done was kept, so the same request, with the same
 * Idempotency-Key, may be sent again (docs/api.md "Errors").
 */
export function unavailableError(): ApiError {
  return new ApiError('service_unavailable');
}

/** Answers a request failed by an unavailable database: asks for a retry, logs the outage once. */
export function replyUnavailable(request: FastifyRequest, reply: FastifyReply, error: unknown): void {
  reply.header('Retry-After', String(UNAVAILABLE_RETRY_AFTER_S));
  outage.failed(request.log, error);
}

/**
 * `engine`: the database's, to tell its unavailable answers (a 503 with Retry-After) from
 * other failures (a 500).
 */
export async function handleError(error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply, engine?: Pick<Engine, 'isUnavailable'>) {
  const apiError = engine?.isUnavailable(error) ? unavailableError() : toApiError(error, request);
  if (apiError.code === 'service_unavailable') replyUnavailable(request, reply, error);
  else if (apiError.code === 'internal_error') request.log.error({ err: error }, 'unhandled error');
  else if (apiError.status >= 500) request.log.warn({ code: apiError.code }, apiError.message);
  return reply.code(apiError.status).send(errorBody(apiError, request.id));
}

/** `message`: the route the client meant, when there is one (route-hints.ts); else `No route GET /x.` */
export async function handleNotFound(request: FastifyRequest, reply: FastifyReply, message?: string) {
  const error = new ApiError('not_found', message ?? `No route ${request.method} ${request.url.split('?')[0]}.`);
  return reply.code(404).send(errorBody(error, request.id));
}
