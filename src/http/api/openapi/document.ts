import type { FastifyInstance, RouteOptions } from 'fastify';
import { type Brand, DEFAULT_BRAND } from '../../../domain/brand.js';
import { API_ERRORS, ERROR_STATUS, type ErrorCode } from '../../../domain/api-error.js';
import { type ReferenceDocument, renderReferencePage } from './page.js';
import { type Component, componentsIn, ref } from '../operations/shared.js';
import { COMPONENT_HEADERS, ERROR_CODES, ERROR_DOCS, ErrorBody, errorExample, type HeaderName, type JsonSchema, STATUS_TEXT } from './components.js';

/**
 * The OpenAPI 3.1 document of /api/v1, generated from the routes themselves.
 *
 * An `onRoute` hook in the /api/v1 scope records every route as Fastify registers it: its
 * method, its URL and the very schema objects Fastify validates requests with (`body`,
 * `querystring`, `params`). Those become the operation's parameters and request body, so what
 * is documented is what is enforced. What a request schema cannot say — summaries, the
 * responses, the Idempotency-Key header that our own code checks — comes from the route's
 * `config.openapi` ({@link OperationDoc}). A route registered without it is still published
 * (marked `x-undocumented`), and a test fails on it: the document always lists exactly the
 * routes that exist.
 */

interface Example {
  summary?: string;
  value: unknown;
}

export interface OperationDoc {
  operationId: string;
  summary: string;
  description: string;
  tag: string;
  /** Publishes the route's body schema as `components.schemas[name]`. */
  requestBody?: { name: string; description: string; examples: Record<string, Example> };
  /** Request headers that our code (not the route schema) checks, as OpenAPI parameters. */
  headers?: readonly Record<string, unknown>[];
  success: {
    status: 200 | 201;
    description: string;
    /** The answer's shape, published under its name with every shape it refers to. */
    schema: Component;
    headers?: readonly HeaderName[];
    examples: Record<string, Example>;
  };
  /** The error codes of this operation beyond those every authenticated route can answer. */
  errors: readonly ErrorCode[];
  /** Shapes no answer refers to that the document publishes with this operation (webhook payloads). */
  publishes?: readonly Component[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Documentation of an /api/v1 route (see openapi/document.ts). */
    openapi?: OperationDoc;
    /** Needs no API key: the OpenAPI document and the reference page (docs/api.md "Authentication"). */
    public?: boolean;
  }
}

/** Every authenticated route can answer these. */
const COMMON_ERRORS: readonly ErrorCode[] = [
  'invalid_request', // a repeated query parameter, or a request that cannot be read (bad URL encoding…)
  'missing_api_key',
  'invalid_api_key',
  'api_key_revoked',
  'account_disabled',
  // A live key while no owner has verified an address and SIGNUP_VERIFY=required.
  'email_unverified',
  'rate_limited',
  // The database unavailable (a full disk, an unreachable server): may replace any answer.
  'service_unavailable',
  'internal_error',
];
/** A body is only read on POST (docs/api.md "Conventions"). */
const BODY_ERRORS: readonly ErrorCode[] = ['payload_too_large', 'unsupported_media_type', 'invalid_json'];
/** A DELETE body is ignored, but the server still refuses to receive one over the size limit. */
const DELETE_BODY_ERRORS: readonly ErrorCode[] = ['payload_too_large'];

const API_PREFIX = '/api/v1';

interface CollectedRoute {
  method: string;
  /** OpenAPI form, below the prefix: /orders/{id}. */
  path: string;
  schema: RouteOptions['schema'];
  doc: OperationDoc | undefined;
}

type Document = Record<string, unknown> & { paths: Record<string, Record<string, Record<string, unknown>>> };

export class ApiReference {
  private readonly routes: CollectedRoute[] = [];
  private built: Document | undefined;
  private renderedPage: { origin: string; html: string } | undefined;

  constructor(
    private readonly publicUrl: () => string,
    private readonly brand: Brand = DEFAULT_BRAND,
  ) {}

  /** Registers the hook that records the routes of `scope`; call it before adding routes. */
  collect(scope: FastifyInstance): void {
    scope.addHook('onRoute', (route) => {
      if (route.config?.public) return;
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      for (const method of methods) {
        // HEAD routes are Fastify's automatic mirrors of the GET routes.
        if (method === 'HEAD') continue;
        this.routes.push({ method: method.toLowerCase(), path: openApiPath(route.url), schema: route.schema, doc: route.config?.openapi });
      }
      this.built = undefined;
      this.renderedPage = undefined;
    });
  }

  /** The document, with `servers` (and links) for the address the service answers on now. */
  document(): Record<string, unknown> {
    this.built ??= this.build();
    const origin = this.publicUrl();
    return {
      ...this.built,
      servers: [{ url: `${origin}${API_PREFIX}`, description: `This ${this.brand.name} service` }],
      externalDocs: { description: 'API reference with a first-order walkthrough', url: `${origin}/docs` },
    };
  }

  /** The HTML reference page (see page.ts), rendered once per origin. */
  page(): string {
    const origin = this.publicUrl();
    if (this.renderedPage?.origin !== origin) {
      this.renderedPage = { origin, html: renderReferencePage(this.document() as ReferenceDocument, this.brand) };
    }
    return this.renderedPage.html;
  }

  private build(): Document {
    const paths: Document['paths'] = {};
    const requestSchemas: Record<string, JsonSchema> = {};
    const responseSchemas = new Map<string, unknown>();
    for (const route of this.routes) {
      for (const shape of [route.doc?.success.schema, ...(route.doc?.publishes ?? [])]) if (shape) componentsIn(ref(shape), responseSchemas);
      componentsIn(route.schema, responseSchemas);
      const operation = route.doc ? documentedOperation(route, route.doc, requestSchemas) : undocumentedOperation(route);
      (paths[route.path] ??= {})[route.method] = operation;
    }
    const tags = [...new Set(this.routes.map((route) => route.doc?.tag).filter((tag): tag is string => tag !== undefined))];
    const webhooks = Object.fromEntries(this.routes.flatMap((route) => (route.doc?.publishes ?? []).map(webhookOf)));
    return {
      openapi: '3.1.0',
      info: {
        title: `${this.brand.name} API`,
        version: '1.0.0',
        summary: 'Telegram Stars and Premium for your bot, shop or service, paid from a prepaid TON balance.',
        description: `${this.brand.name} ${API_DESCRIPTION}`,
        // The API is the operator's service to its clients, not open source: no licence is granted.
        license: { name: 'Proprietary: use of this API is governed by your agreement with its operator', identifier: 'LicenseRef-Proprietary' },
      },
      security: [{ bearerAuth: [] }],
      tags: tags.map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? name })),
      paths,
      webhooks,
      components: {
        schemas: { ...Object.fromEntries(componentsIn(ref(ErrorBody), responseSchemas)), ...requestSchemas },
        headers: COMPONENT_HEADERS,
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'sk_live_… or sk_test_… (46 characters)',
            description:
              '`Authorization: Bearer <key>` on every request. `sk_live_…` keys act on the live balance and orders, `sk_test_…` keys on a separate test balance and test orders (neither sees the other’s orders). Keep keys on your server.',
          },
        },
      },
    };
  }
}

/**
 * A published payload as an OpenAPI webhook (what the service POSTs to a client's endpoint),
 * keyed by its event type (the `type` constant of the payload).
 */
function webhookOf(payload: Component): [string, unknown] {
  const type = (payload.schema as { properties?: { type?: { const?: unknown } } }).properties?.type?.const;
  if (typeof type !== 'string') throw new Error(`The published payload ${payload.name} has no constant type.`);
  const description = (payload.schema as { description?: string }).description ?? type;
  return [
    type,
    {
      post: {
        summary: `The ${type} event`,
        description: `${description} Signed like every delivery (docs/api.md "Webhooks"); answer 2xx within the timeout.`,
        operationId: `webhook_${type.replace(/\W/g, '_')}`,
        tags: ['Webhooks'],
        security: [],
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: `#/components/schemas/${payload.name}` } } } },
        responses: { '2XX': { description: 'Received: any 2xx answer acknowledges the delivery.' } },
      },
    },
  ];
}

function openApiPath(url: string): string {
  const below = url.startsWith(API_PREFIX) ? url.slice(API_PREFIX.length) : url;
  return below.replace(/:([A-Za-z0-9_]+)/g, '{$1}') || '/';
}

function schemaOf(schema: RouteOptions['schema'], part: 'body' | 'querystring' | 'params'): JsonSchema | undefined {
  const value = (schema as Record<string, unknown> | undefined)?.[part];
  return value as JsonSchema | undefined;
}

/** Query and path parameters from the route's own validation schemas. */
function parameters(route: CollectedRoute): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const [part, location] of [
    ['params', 'path'],
    ['querystring', 'query'],
  ] as const) {
    const schema = schemaOf(route.schema, part);
    const properties = (schema?.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((schema?.required ?? []) as string[]);
    for (const [name, property] of Object.entries(properties)) {
      const examples = property.examples as unknown[] | undefined;
      out.push({
        name,
        in: location,
        required: location === 'path' || required.has(name),
        ...(property.description !== undefined && { description: property.description }),
        schema: property,
        ...(examples?.[0] !== undefined && { example: examples[0] }),
      });
    }
  }
  return out;
}

const headerRef = (name: HeaderName) => ({ $ref: `#/components/headers/${name}` });

function responseHeaders(status: number, extra: readonly HeaderName[] = []): Record<string, unknown> {
  const names: HeaderName[] = ['Request-Id'];
  // Authentication answers before the rate limiter: a 401 carries no RateLimit headers.
  if (status !== 401) names.push('RateLimit-Policy', 'RateLimit');
  if (status === 429) names.push('Retry-After');
  names.push(...extra);
  const headers: Record<string, unknown> = Object.fromEntries(names.map((name) => [name, headerRef(name)]));
  // A 503 carries Retry-After when it is service_unavailable (the other 503 codes do not).
  if (status === 503)
    headers['Retry-After'] = { ...COMPONENT_HEADERS['Retry-After'], description: 'With `service_unavailable`: seconds to wait before retrying.', required: false };
  return headers;
}

function errorResponses(codes: readonly ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of ERROR_CODES) {
    if (!codes.includes(code)) continue;
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<string, unknown> = {};
  for (const [status, statusCodes] of [...byStatus.entries()].sort(([a], [b]) => a - b)) {
    responses[String(status)] = {
      description: `${STATUS_TEXT[status] ?? 'Error'}: ${statusCodes.map((code) => `\`${code}\``).join(', ')}.`,
      headers: responseHeaders(status),
      content: {
        'application/json': {
          schema: {
            // The narrowing says additionalProperties: true (Error closes the body): see QUANTITY_BY_PRODUCT.
            allOf: [
              { $ref: '#/components/schemas/Error' },
              { type: 'object', additionalProperties: true, properties: { error: { type: 'object', additionalProperties: true, properties: { code: { enum: statusCodes } } } } },
            ],
          },
          examples: Object.fromEntries(statusCodes.map((code) => [code, { summary: ERROR_DOCS[code].when, value: errorExample(code) }])),
        },
      },
    };
  }
  return responses;
}

function documentedOperation(route: CollectedRoute, doc: OperationDoc, requestSchemas: Record<string, JsonSchema>): Record<string, unknown> {
  const body = schemaOf(route.schema, 'body');
  let requestBody: Record<string, unknown> | undefined;
  if (body) {
    const name = doc.requestBody?.name ?? `${doc.operationId[0]?.toUpperCase()}${doc.operationId.slice(1)}Request`;
    requestSchemas[name] = body;
    requestBody = {
      required: true,
      ...(doc.requestBody?.description !== undefined && { description: doc.requestBody.description }),
      content: {
        'application/json': {
          schema: { $ref: `#/components/schemas/${name}` },
          ...(doc.requestBody?.examples && { examples: doc.requestBody.examples }),
        },
      },
    };
  }
  const errors = new Set<ErrorCode>([...doc.errors, ...COMMON_ERRORS, ...(route.method === 'post' ? BODY_ERRORS : route.method === 'delete' ? DELETE_BODY_ERRORS : [])]);
  return {
    operationId: doc.operationId,
    summary: doc.summary,
    description: doc.description,
    tags: [doc.tag],
    parameters: [...parameters(route), ...(doc.headers ?? [])],
    ...(requestBody && { requestBody }),
    responses: {
      [String(doc.success.status)]: {
        description: doc.success.description,
        headers: responseHeaders(doc.success.status, doc.success.headers),
        content: { 'application/json': { schema: { $ref: `#/components/schemas/${doc.success.schema.name}` }, examples: doc.success.examples } },
      },
      ...errorResponses([...errors]),
    },
  };
}

/** A route without `config.openapi`: listed (so the path set stays true) and flagged. */
function undocumentedOperation(route: CollectedRoute): Record<string, unknown> {
  const body = schemaOf(route.schema, 'body');
  return {
    operationId: `${route.method}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`,
    summary: `${route.method.toUpperCase()} ${route.path}`,
    'x-undocumented': true,
    parameters: parameters(route),
    ...(body && { requestBody: { required: true, content: { 'application/json': { schema: body } } } }),
    responses: { default: { description: 'Not documented yet.' } },
  };
}

const TAG_DESCRIPTIONS: Record<string, string> = {
  Orders: 'Buy Stars or Premium and follow the order until it is delivered or failed.',
  Recipients: 'Check a username before you take your customer’s money.',
  Pricing: 'What an order would cost now.',
  Balance: 'Your prepaid TON balance and its history.',
  Deposits: 'Live top-ups: where to send TON, and the transfers credited to your live balance.',
  Webhooks:
    'Be told when an order changes, or the balance falls below the dashboard\'s low-balance threshold (`balance.low`, schema BalanceLowEvent), instead of polling: signed POSTs per Standard Webhooks (see docs/api.md "Webhooks").',
  'Test helpers': 'Test-mode shortcuts for your CI (test keys only).',
};

const cell = (text: string) => text.replace(/\|/g, '\\|');
const errorTable = ERROR_CODES.map((code) => `| ${ERROR_STATUS[code]} | \`${code}\` | ${cell(ERROR_DOCS[code].when)} | ${cell(API_ERRORS[code].message)} |`).join('\n');

/** After the brand's name (docs/operations.md "Branding"). */
const API_DESCRIPTION = `sells Telegram Stars and Premium subscriptions over HTTP, paid from your prepaid TON balance.

**Flow.** Check the recipient (\`POST /recipients/validate\`, optional), ask for a price (\`GET /quote\`, optional), create the order (\`POST /orders\` with an \`Idempotency-Key\`: the price is reserved), then poll \`GET /orders/{id}\` every 5–15 s until \`status\` is \`delivered\` or \`failed\`. The reserve is debited on delivery and released on failure.

**Keys and modes.** \`Authorization: Bearer sk_live_…\` or \`sk_test_…\`. Test keys use a separate test balance; test orders never touch the outside world and settle within about 2 s. Magic test recipients: \`@test_invalid\` (validate answers 400 \`recipient_invalid\` with \`details.reason\` \`not_found\`; an order fails with \`recipient_invalid\`), \`@test_not_found\`, \`@test_not_a_user\`, \`@test_already_premium\` (premium only) and \`@test_not_eligible\` (validate answers 400 \`recipient_invalid\` with that \`details.reason\`; an order fails with it as \`failure_reason\`), \`@test_failed\` (the order fails with \`upstream_error\`), \`@test_slow\` (delivered after about 30 s); any other valid username is delivered.

**Format.** JSON in and out, UTF-8; every body has a boolean \`ok\` (the OpenAPI document itself excepted). Money is TON as a decimal string (\`"0.25"\`, at most 9 fractional digits, never a float); timestamps are RFC 3339 UTC with milliseconds (\`2026-11-25T21:30:00.123Z\`). Request bodies are validated strictly: no type coercion, unknown fields rejected. Every response carries \`Request-Id\`; error bodies repeat it as \`request_id\`.

**Idempotency.** Every \`POST /orders\` carries an \`Idempotency-Key\`. Retrying with the same key and body returns the same order (201, \`Idempotent-Replayed: true\`), never a second one; the same key with different parameters is 409 \`idempotency_conflict\`. A request that failed (400, 402, 503) did not bind its key.

**Lists.** \`GET /orders\`, \`GET /balance/history\` and \`GET /deposits\` answer \`{"ok": true, "object": "list", "data": [...], "has_more": bool}\`, newest first, with Stripe-style cursors (\`limit\`, \`starting_after\`, \`ending_before\`).

**Rate limits.** Per key; responses carry \`RateLimit-Policy\` and \`RateLimit\`; a 429 carries \`Retry-After\` (seconds).

**Errors.** \`{"ok": false, "error": {"code", "message", "param"?, "details"?}, "request_id"}\`. Match on \`code\`, never on \`message\`. When several checks fail, the first in this order answers: unknown route, authentication, rate limit, body size, content type, JSON, Idempotency-Key, body fields, idempotency replay/conflict, quote (\`quote_mismatch\`, \`quote_expired\`), live availability, balance. On test helpers a live key is refused (403 \`test_key_required\`) right after the rate limit, before the body is read.

| HTTP | code | when | message (an example where it names the request's values) |
|---|---|---|---|
${errorTable}
`;
