import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import { API_ERRORS, ApiError, type ErrorCode } from '../../domain/api-error.js';
import { USERNAME_RULES, usernameProblem } from '../../domain/username.js';

/**
 * Turns JSON-schema validation errors (ajv with allErrors) into the one contract error that
 * answers first (docs/api.md "Order of checks"): any missing required field, then any malformed
 * field, each in the order product, recipient, quantity, external_id, quote_id; then unknown fields.
 * (`amount` is POST /test_helpers/fund's only field; `url` and `events` are POST
 * /webhook_endpoints' fields: a malformed `events`, a string say, is invalid_events like any
 * other bad events list; a `url` that is not a string is a plain invalid_request.)
 */
const FIELD_ORDER = ['product', 'recipient', 'quantity', 'external_id', 'quote_id', 'amount', 'url', 'events'] as const;
type Field = (typeof FIELD_ORDER)[number];

const ownError = (code: 'invalid_product' | 'invalid_quantity' | 'invalid_external_id' | 'invalid_events') => ({ code, message: API_ERRORS[code].message });

/** The fields whose malformed value has an error of its own (the others: invalid_request naming the field). */
const MALFORMED: Partial<Record<Field, { code: ErrorCode; message: string; details?: Record<string, unknown> }>> = {
  product: ownError('invalid_product'),
  recipient: {
    code: 'recipient_invalid',
    // validationError names the rule broken when it has the value; this is for when it has not.
    message: `recipient is not a username: ${USERNAME_RULES}.`,
    // No account can have a malformed username (docs/api.md "Recipient refusals").
    details: { reason: 'not_found' },
  },
  quantity: ownError('invalid_quantity'),
  external_id: ownError('invalid_external_id'),
  quote_id: { code: 'invalid_request', message: 'quote_id must be null or the id (quo_…) of a GET /quote answer.' },
  amount: { code: 'invalid_request', message: 'amount must be a TON amount as a decimal string with at most 9 fractional digits, e.g. "100" or "0.5".' },
  events: ownError('invalid_events'),
};

export function malformedField(field: 'product' | 'recipient' | 'quantity' | 'external_id' | 'quote_id' | 'amount' | 'events'): ApiError {
  const own = MALFORMED[field] as { code: ErrorCode; message: string; details?: Record<string, unknown> };
  return new ApiError(own.code, own.message, field, own.details);
}

function missingField(field: string, where: 'body' | 'query'): ApiError {
  const what = where === 'body' ? 'body field' : 'query parameter';
  return new ApiError('invalid_request', `Missing required ${what} "${field}".`, field);
}

const rank = (field: string) => {
  const index = FIELD_ORDER.indexOf(field as Field);
  return index === -1 ? FIELD_ORDER.length : index;
};
const byFieldOrder = (a: string, b: string) => rank(a) - rank(b);

/** `data`: the body or query that failed, so that a malformed username's message names the rule it broke. */
export function validationError(errors: FastifySchemaValidationError[], context: string, data?: unknown): ApiError {
  const where = context === 'querystring' ? 'query' : 'body';
  const missing: string[] = [];
  const malformed: string[] = [];
  const unknown: string[] = [];
  for (const error of errors) {
    const params = error.params as Record<string, unknown>;
    if (error.keyword === 'required') missing.push(String(params.missingProperty));
    else if (error.keyword === 'additionalProperties') unknown.push(String(params.additionalProperty));
    else if (error.keyword === 'if') continue;
    else if (error.instancePath === '') return new ApiError('invalid_json', 'The request body must be a JSON object.');
    else malformed.push(error.instancePath.split('/')[1] ?? '');
  }
  const firstMissing = missing.sort(byFieldOrder)[0];
  if (firstMissing !== undefined) return missingField(firstMissing, where);
  const firstMalformed = malformed.sort(byFieldOrder)[0];
  // In a query string only GET /quote's product and quantity have codes of their own; a list's
  // malformed `external_id` filter is a plain invalid_request.
  const ownCode = where === 'body' || firstMalformed === 'product' || firstMalformed === 'quantity';
  if (firstMalformed === 'recipient' && where === 'body') {
    const problem = usernameProblem((data as { recipient?: unknown } | undefined)?.recipient);
    if (problem) return new ApiError('recipient_invalid', `recipient ${problem}: ${USERNAME_RULES}.`, 'recipient', { reason: 'not_found' });
  }
  if (firstMalformed !== undefined && MALFORMED[firstMalformed as Field] !== undefined && ownCode) return malformedField(firstMalformed as Exclude<Field, 'url'>);
  const firstUnknown = unknown[0];
  if (firstUnknown !== undefined) {
    return new ApiError('invalid_request', `Unknown body field "${firstUnknown}".`, firstUnknown);
  }
  if (firstMalformed !== undefined) {
    const what = where === 'body' ? 'body field' : 'query parameter';
    const detail = errors.find((e) => e.instancePath.split('/')[1] === firstMalformed)?.message;
    return new ApiError('invalid_request', `Invalid ${what} "${firstMalformed}"${detail ? `: ${detail}` : ''}.`, firstMalformed);
  }
  return new ApiError('invalid_request', `Invalid ${where}.`);
}
