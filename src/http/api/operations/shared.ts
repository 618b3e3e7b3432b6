import { type TSchema, Type } from '@sinclair/typebox';
import type { Product } from '../../../domain/products.js';
import { PRODUCTS } from '../../../domain/products.js';
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
export const componentRef = <T>(name: string, options: { description?: string } = {}) =>
  Type.Unsafe<T>({ $ref: `#/components/schemas/${name}`, ...options });

/** `product` on the wire. */
export const ProductName = (options: { description?: string; examples?: unknown[] } = {}) =>
  Type.Unsafe<Product>({ type: 'string', enum: [...PRODUCTS], ...options });

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
