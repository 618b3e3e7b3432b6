import { type Static, type TSchema, type TUnsafe, Type } from '@sinclair/typebox';
import { PREMIUM_MONTHS, type Product, PRODUCTS, STARS_MAX, STARS_MIN } from '../../../domain/products.js';

/**
 * The pieces the API operations share, as TypeBox schemas: Fastify validates requests with
 * them (the same Ajv and options as plain JSON schemas: no coercion, unknown fields refused
 * where a schema says so), the TypeBox type provider gives the handler its request types from
 * them, `Static<>` gives the handler's answer its type, and the OpenAPI document publishes
 * them as they are (docs/api.md "Conventions" for the wire formats).
 *
 * Enumerations and nullable fields are written as `Type.Unsafe` over the plain schema
 * (`enum`, `type: [..., 'null']`): TypeBox's own unions would publish `anyOf` lists, a
 * different document for the same rule.
 */

// --- Named shapes ------------------------------------------------------------------------------

const COMPONENT = Symbol('component');

/** A shape published once as `#/components/schemas/<name>` and referred to with {@link ref}. */
export interface Component<T extends TSchema = TSchema> {
  name: string;
  schema: T;
}

export const component = <T extends TSchema>(name: string, schema: T): Component<T> => ({ name, schema });

/**
 * A `$ref` to `target`, typed as its schema. The reference carries the component (under a
 * symbol, which JSON leaves out), so the document publishes every shape an operation refers
 * to without a list to keep (see {@link componentsIn}).
 */
export function ref<T extends TSchema>(target: Component<T>, options: { description?: string } = {}): TUnsafe<Static<T>> {
  return Object.assign(Type.Unsafe<Static<T>>({ $ref: `#/components/schemas/${target.name}`, ...options }), { [COMPONENT]: target });
}

/** Every component `schema` refers to, however deep (and those they refer to), by name. */
export function componentsIn(schema: unknown, found: Map<string, unknown> = new Map()): Map<string, unknown> {
  const pending: unknown[] = [schema];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    if (typeof node !== 'object' || node === null) continue;
    const target = (node as { [COMPONENT]?: Component })[COMPONENT];
    if (target) {
      const known = found.get(target.name);
      if (known !== undefined && known !== target.schema) throw new Error(`Two different schemas are published as ${target.name}.`);
      if (known === undefined) {
        found.set(target.name, target.schema);
        pending.push(target.schema);
      }
    }
    pending.push(...Object.values(node));
  }
  return found;
}

// --- Wire formats (docs/api.md "Conventions") --------------------------------------------------

/** TON as a decimal string, at most 9 fractional digits (a string: never a float). */
export const Money = (options: { description?: string } = {}) =>
  Type.Unsafe<string>({
    type: 'string',
    pattern: '^(0|[1-9][0-9]*)(\\.[0-9]{0,8}[1-9])?$',
    description: 'TON as a decimal string: at most 9 fractional digits, trailing zeros trimmed, no exponent.',
    examples: ['0.25'],
    ...options,
  });

/** A signed change of a balance (balance history). */
export const SignedMoney = (options: { description?: string } = {}) =>
  Type.Unsafe<string>({
    type: 'string',
    pattern: '^-?(0|[1-9][0-9]*)(\\.[0-9]{0,8}[1-9])?$',
    description: 'A signed TON amount as a decimal string ("-0.25", "12.5", "0").',
    examples: ['-0.25'],
    ...options,
  });

/** RFC 3339, UTC, milliseconds. */
export const Timestamp = (options: { description?: string } = {}) =>
  Type.Unsafe<string>({
    type: 'string',
    format: 'date-time',
    pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$',
    description: 'RFC 3339, UTC, millisecond precision, `Z` suffix.',
    examples: ['2026-11-25T21:30:00.123Z'],
    ...options,
  });

/** A timestamp, or `null` while the moment has not come. */
export const NullableTimestamp = (description: string) => Type.Unsafe<string | null>({ oneOf: [{ type: 'null' }, Timestamp()], description });

/** `"TON"`, the currency of every amount. */
export const Ton = Type.Literal('TON');

export const Amount = component('Amount', Type.Object({ value: Money(), currency: Ton }, { additionalProperties: false, description: 'An amount of TON.' }));

/** A balance: what can be spent now and what is reserved for orders not yet final. */
export const BalanceFields = (description?: string) =>
  Type.Object(
    {
      value: Money({ description: 'What can be spent now.' }),
      reserved: Money({ description: 'The sum of orders not yet final.' }),
      currency: Ton,
    },
    { additionalProperties: false, ...(description && { description }) },
  );

/** A plain string or `null`. */
export const NullableString = (options: Record<string, unknown>) => Type.Unsafe<string | null>({ type: ['string', 'null'], ...options });

/** One of `values` on the wire. */
export const OneOf = <const V extends readonly string[]>(values: V, options: { description?: string; examples?: unknown[] } = {}) =>
  Type.Unsafe<V[number]>({ type: 'string', enum: [...values], ...options });

/** `product` on the wire. */
export const ProductName = (options: { description?: string; examples?: unknown[] } = {}) => Type.Unsafe<Product>({ type: 'string', enum: [...PRODUCTS], ...options });

/** A public id with its prefix (`ord_…`, `quo_…`). */
export const PublicId = (prefix: string, description: string) => Type.String({ pattern: `^${prefix}_[0-9A-Za-z]+$`, description });

/** Digits only: a number in a query string (the query is never coerced). */
export const Digits = (description: string, example: string) => Type.String({ pattern: '^[0-9]+$', description, examples: [example] });

// --- Bodies ------------------------------------------------------------------------------------

/** `ok: true`, first field of every success body. */
export const OkTrue = Type.Literal(true, { description: 'Always `true` on success.' });

/** An exact object: `additionalProperties: false`, every field required that is always sent. */
export const Closed = <P extends Record<string, TSchema>>(properties: P, description?: string) =>
  Type.Object(properties, { additionalProperties: false, ...(description && { description }) });

/**
 * A success body: exact, so the conformance tests catch a field added, dropped or changing
 * type.
 */
export const SuccessBody = <P extends Record<string, TSchema>>(properties: P, description: string) => Closed({ ok: OkTrue, ...properties }, description);

/** POST bodies are always JSON objects (docs/api.md "Conventions"); an operation without fields takes `{}`. */
export const EmptyBody = Type.Object({}, { additionalProperties: false });

// --- Lists (docs/api.md "Conventions", Lists) ----------------------------------------------------

/**
 * The list envelope `{ok, object: "list", data, has_more}` of `item`s. `data` says their
 * order; `hasMore` replaces the usual `has_more` where a list is never paged.
 */
export const listOf = <T extends TSchema, H extends TSchema = ReturnType<typeof Type.Boolean>>(
  item: Component<T>,
  description: string,
  options: { data?: string; hasMore?: H } = {},
) =>
  SuccessBody(
    {
      object: Type.Literal('list'),
      data: Type.Array(ref(item), { description: options.data ?? 'Newest first.' }),
      has_more: (options.hasMore ?? Type.Boolean({ description: 'More items follow beyond this page (in the direction you are paging).' })) as H,
    },
    description,
  );

const cursors = {
  limit: Type.Optional(Digits('How many items to return, 1–100 (default 20). Digits only.', '20')),
  starting_after: Type.Optional(Type.String({ description: 'A cursor: the `id` of the last item of the previous page. Returns items older than it.' })),
  ending_before: Type.Optional(
    Type.String({
      description: 'A cursor: the `id` of the first item of the current page. Returns the items just newer than it (the page before). Not with `starting_after`.',
    }),
  ),
};

/** The query of a list: `limit` and both cursors, with the list's own filters. */
export const ListQuery = <P extends Record<string, TSchema> = Record<never, never>>(filters?: P) => Type.Object({ ...cursors, ...(filters as P) });

/** The same, for a list paged forwards only (`starting_after`). */
export const ForwardListQuery = () => Type.Object({ limit: cursors.limit, starting_after: cursors.starting_after });

/** What the description of every paged list says about paging. */
export const PAGINATION =
  'Cursor pagination: `limit` 1–100 (default 20, digits only); `starting_after=<id of the last item>` gives the next (older) page, `ending_before=<id of the first item>` the previous (newer) one; ' +
  '`has_more` says whether more items follow in that direction. An id that is not an item of this list is 400 `invalid_request` (`param` names the cursor). ';

// --- Request fields ----------------------------------------------------------------------------

/** A Telegram username as a request field: 5–32 characters, with or without one leading "@". */
const USERNAME_PATTERN = '^@?[A-Za-z][A-Za-z0-9_]{2,30}[A-Za-z0-9]$';

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

/**
 * The quantity rule of each product, as if/then pairs for a body's `allOf`. The branches say
 * `additionalProperties: true`: the body's own `additionalProperties: false` refuses unknown
 * fields, and a branch without it is read by Redocly's linter as closed to every field it does
 * not name (ajv, like JSON Schema, does not; both agree with it said).
 */
export const QUANTITY_BY_PRODUCT = [
  {
    if: { properties: { product: { const: 'stars' } }, required: ['product'] },
    then: { additionalProperties: true, properties: { quantity: { type: 'integer', minimum: STARS_MIN, maximum: STARS_MAX } } },
  },
  {
    if: { properties: { product: { const: 'premium' } }, required: ['product'] },
    then: { additionalProperties: true, properties: { quantity: { enum: [...PREMIUM_MONTHS] } } },
  },
];
