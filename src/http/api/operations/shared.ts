import { type TSchema, Type } from '@sinclair/typebox';
import { PREMIUM_MONTHS, type Product, PRODUCTS, STARS_MAX, STARS_MIN } from '../../../domain/products.js';
import { MONEY, TIMESTAMP } from '../openapi/components.js';

/**
 * The pieces the API operations share, as TypeBox schemas: Fastify validates requests with
 * them (the same Ajv and options as plain JSON schemas: no coercion, unknown fields refused
 * where a schema says so), the TypeBox type provider gives the handler its request types from
 * them, `Static<>` gives the handler's answer its type, and the OpenAPI document publishes
 * them as they are (docs/api.md "Conventions" for the wire formats).
 *
 * Enumerations are written as `Type.Unsafe` over the plain `enum` schema: TypeBox's own unions
 * would publish `anyOf` lists of constants, a different document for the same rule.
 */

/** A `#/components/schemas/…` reference typed as T: for a shape published once in components.ts. */
export const componentRef = <T>(name: string, options: { description?: string } = {}) => Type.Unsafe<T>({ $ref: `#/components/schemas/${name}`, ...options });

/** `product` on the wire. */
export const ProductName = (options: { description?: string; examples?: unknown[] } = {}) => Type.Unsafe<Product>({ type: 'string', enum: [...PRODUCTS], ...options });

/** TON as a decimal string, at most 9 fractional digits (a string: never a float). */
export const Money = Type.Unsafe<string>({ ...MONEY });
export interface Amount {
  value: string;
  currency: 'TON';
}

/** RFC 3339, UTC, milliseconds. */
export const Timestamp = (options: { description?: string } = {}) => Type.Unsafe<string>({ ...TIMESTAMP, ...options });

/** A public id with its prefix (`ord_…`, `quo_…`). */
export const PublicId = (prefix: string, description: string) => Type.String({ pattern: `^${prefix}_[0-9A-Za-z]+$`, description });

/** Digits only: a number in a query string (the query is never coerced). */
export const Digits = (description: string, example: string) => Type.String({ pattern: '^[0-9]+$', description, examples: [example] });

/** `ok: true`, first field of every success body. */
export const OkTrue = Type.Literal(true, { description: 'Always `true` on success.' });

/**
 * A success body: exact (`additionalProperties: false`, every field required that is always
 * sent), so the conformance tests catch a field added, dropped or changing type.
 */
export const SuccessBody = <P extends Record<string, TSchema>>(properties: P, description: string) =>
  Type.Object({ ok: OkTrue, ...properties }, { additionalProperties: false, description });

/** A Telegram username as a request field: 5–32 characters, with or without one leading "@". */
export const USERNAME_PATTERN = '^@?[A-Za-z][A-Za-z0-9_]{2,30}[A-Za-z0-9]$';

/**
 * Free text (an external_id): no U+0000, which PostgreSQL cannot store (refusing it keeps both
 * engines identical), and no lone surrogate, which is not Unicode and would be stored as U+FFFD,
 * so the order could no longer be found by what was sent. Schema patterns are Unicode-aware
 * (Ajv's unicodeRegExp): a surrogate pair is one character and matches.
 */
export const FREE_TEXT_PATTERN = '^[^\\u0000\\uD800-\\uDFFF]*$';

export const Recipient = Type.Unsafe<string>({
  type: 'string',
  pattern: USERNAME_PATTERN,
  description: 'Public username of the recipient, with or without a leading "@".',
  examples: ['@durov'],
});

/** Any integer here: its range depends on the product (QUANTITY_BY_PRODUCT). */
export const Quantity = Type.Unsafe<number>({
  type: 'integer',
  description: `stars: ${STARS_MIN}–${STARS_MAX}; premium: ${PREMIUM_MONTHS.join(', ')} (months).`,
  examples: [100],
});

/** The quantity rule of each product, as if/then pairs for a body's `allOf`. */
export const QUANTITY_BY_PRODUCT = [
  {
    if: { properties: { product: { const: 'stars' } }, required: ['product'] },
    then: { properties: { quantity: { type: 'integer', minimum: STARS_MIN, maximum: STARS_MAX } } },
  },
  {
    if: { properties: { product: { const: 'premium' } }, required: ['product'] },
    then: { properties: { quantity: { enum: [...PREMIUM_MONTHS] } } },
  },
];
