import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';

/**
 * Checks responses against the served OpenAPI document: the body against the schema
 * documented for its operation and status (ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses), the
 * documented required headers, and no documented-but-misplaced headers. Every harness routes
 * `inject` through it (harness.ts), so every response of every HTTP suite is checked: a
 * response the document does not describe fails the test that received it.
 */

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export type OpenApiDocument = {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown>; headers: Record<string, HeaderObject> };
} & Record<string, unknown>;

interface HeaderObject {
  required?: boolean;
  schema?: unknown;
}

interface Operation {
  operationId?: string;
  responses: Record<string, { headers?: Record<string, { $ref?: string } & HeaderObject>; content?: Record<string, { schema?: unknown }> }>;
  [key: string]: unknown;
}

/** Headers the document describes per response; finding one where it is not documented is a mismatch. */
const DOCUMENTED_RESPONSE_HEADERS = ['idempotent-replayed', 'ratelimit-policy', 'ratelimit', 'retry-after'];

export interface ObservedResponse {
  method: string;
  /** Path and query, as requested. */
  url: string;
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

const cache = new Map<string, DocumentChecker>();

export class DocumentChecker {
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly routes: { method: string; template: string; regex: RegExp; operation: Operation }[] = [];

  /** One checker per distinct document (the servers block differs between harnesses). */
  static for(document: OpenApiDocument): DocumentChecker {
    const { servers: _servers, externalDocs: _externalDocs, ...rest } = document;
    const key = JSON.stringify(rest);
    let checker = cache.get(key);
    if (!checker) {
      checker = new DocumentChecker(rest as OpenApiDocument);
      cache.set(key, checker);
    }
    return checker;
  }

  constructor(readonly document: OpenApiDocument) {
    // strict: false — the document has OpenAPI keywords (discriminator, example) ajv does not know.
    this.ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
    this.ajv.addSchema(document as object, 'openapi.json');
    for (const [template, methods] of Object.entries(document.paths)) {
      const pattern = template
        .split('/')
        .map((segment) => (/^\{[^}]+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&')))
        .join('/');
      for (const [method, operation] of Object.entries(methods)) {
        this.routes.push({ method: method.toUpperCase(), template, regex: new RegExp(`^/api/v1${pattern}$`), operation });
      }
    }
  }

  /** The documented operation for a request, or undefined (unknown routes, HEAD, /healthz…). */
  operationFor(method: string, url: string): { template: string; operation: Operation } | undefined {
    const path = new URL(url, 'http://localhost').pathname;
    return this.routes.find((route) => route.method === method.toUpperCase() && route.regex.test(path));
  }

  /** A schema validator for a JSON pointer into the document. */
  validator(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi.json#${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }

  /** Problems with a response; [] when it matches the document or is not a documented operation. */
  check(response: ObservedResponse): string[] {
    const match = this.operationFor(response.method, response.url);
    if (!match) return [];
    const { template, operation } = match;
    const where = `${response.method.toUpperCase()} ${template} → ${response.status}`;
    if (operation['x-undocumented']) {
      return [`${where}: the route has no documentation: give it config.openapi (see src/http/api/operations/index.ts)`];
    }
    const documented = operation.responses[String(response.status)];
    if (!documented) {
      return [`${where}: status ${response.status} is not documented (documented: ${Object.keys(operation.responses).join(', ')}); see the route's config.openapi errors`];
    }
    const problems: string[] = [];

    const contentType = String(response.headers['content-type'] ?? '');
    if (!contentType.startsWith('application/json')) problems.push(`${where}: content-type ${contentType}, documented application/json`);
    let body: unknown;
    try {
      body = JSON.parse(response.body);
    } catch {
      return [...problems, `${where}: the body is not JSON`];
    }
    const pointerSegment = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
    const pointer = `/paths/${pointerSegment(template)}/${response.method.toLowerCase()}/responses/${response.status}/content/${pointerSegment('application/json')}/schema`;
    const validate = this.validator(pointer);
    if (!validate(body)) {
      problems.push(`${where}: body does not match the documented schema: ${this.ajv.errorsText(validate.errors, { dataVar: 'body' })}\n  body: ${response.body}`);
    }

    const headers = Object.fromEntries(Object.entries(documented.headers ?? {}).map(([name, header]) => [name.toLowerCase(), this.header(header)]));
    for (const [name, header] of Object.entries(headers)) {
      const value = response.headers[name];
      if (value === undefined) {
        if (header.required) problems.push(`${where}: documented required header ${name} is missing`);
        continue;
      }
      if (header.schema && !this.ajv.validate(header.schema as object, String(value))) {
        problems.push(`${where}: header ${name}: ${JSON.stringify(value)} does not match ${JSON.stringify(header.schema)}`);
      }
    }
    for (const name of DOCUMENTED_RESPONSE_HEADERS) {
      if (response.headers[name] !== undefined && !(name in headers)) problems.push(`${where}: header ${name} is sent but not documented for this response`);
    }
    return problems;
  }

  private header(header: { $ref?: string } & HeaderObject): HeaderObject {
    if (!header.$ref) return header;
    return this.document.components.headers[header.$ref.split('/').pop() as string] ?? {};
  }
}

/** The checker for the document a service serves. */
export async function checkerFor(app: FastifyInstance): Promise<DocumentChecker> {
  const response = await app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  if (response.statusCode !== 200) throw new Error(`GET /api/v1/openapi.json answered ${response.statusCode}`);
  return DocumentChecker.for(response.json() as OpenApiDocument);
}

/**
 * `app.inject` that checks every response it returns against the served document and throws
 * (failing the test that sent the request) when the two disagree.
 */
export function conformingInject(app: FastifyInstance): FastifyInstance['inject'] {
  const inject = app.inject.bind(app) as (options: InjectOptions | string) => Promise<LightMyRequestResponse>;
  let checker: Promise<DocumentChecker> | undefined;
  const checked = async (options: InjectOptions | string) => {
    const response = await inject(options);
    const url = typeof options === 'string' ? options : (options.url ?? options.path);
    // Only string URLs are checked (the suites use no other form).
    if (typeof url !== 'string') return response;
    const method = typeof options === 'string' ? 'GET' : String(options.method ?? 'GET');
    checker ??= checkerFor(app);
    const problems = (await checker).check({ method, url, status: response.statusCode, headers: response.headers, body: response.body });
    if (problems.length > 0) throw new Error(`The response does not match the served OpenAPI document:\n${problems.join('\n')}`);
    return response;
  };
  // With no options (the chaining form) or a callback, pass through unchecked.
  return ((...args: unknown[]) => {
    if (args.length !== 1 || args[0] === undefined) return (app.inject as (...a: unknown[]) => unknown)(...args);
    return checked(args[0] as InjectOptions | string);
  }) as FastifyInstance['inject'];
}
