import { expect } from 'vitest';
import { ERROR_STATUS } from '../../../src/domain/api-error.js';
import type { DocumentChecker, OpenApiDocument } from '../../support/openapi.js';
import type { RawResponse } from './raw-http.js';

/**
 * The suites here are driven by the OpenAPI document the service serves: every operation it
 * lists is fuzzed and put through the authorization matrix, so endpoints added later are
 * covered without editing these files.
 */
export type Schema = Record<string, any>;

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: Schema;
}

export interface ApiOperation {
  method: string;
  /** Template below /api/v1, e.g. /orders/{id}. */
  template: string;
  operationId: string;
  parameters: Parameter[];
  /** The JSON request body schema, $refs resolved; undefined when the operation takes no body. */
  body: Schema | undefined;
  /** No key needed (`security: []`). */
  isPublic: boolean;
  /** Error codes the operation documents (extra 4xx like live_key_required come from here). */
  documentedCodes: Set<string>;
}

export const API_PREFIX = '/api/v1';

export async function fetchDocument(origin: string): Promise<OpenApiDocument> {
  const response = await fetch(`${origin}${API_PREFIX}/openapi.json`);
  expect(response.status).toBe(200);
  return (await response.json()) as OpenApiDocument;
}

export function operationsOf(document: OpenApiDocument): ApiOperation[] {
  const operations: ApiOperation[] = [];
  const globalSecurity = (document as { security?: unknown[] }).security ?? [];
  for (const [template, methods] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(methods as Record<string, any>)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const security = op.security ?? globalSecurity;
      const codes = new Set<string>();
      for (const response of Object.values<any>(op.responses ?? {})) {
        const schema = resolve(document, response?.content?.['application/json']?.schema ?? {});
        collectCodes(document, schema, codes);
        for (const example of Object.values<any>(response?.content?.['application/json']?.examples ?? {})) {
          const code = example?.value?.error?.code;
          if (typeof code === 'string') codes.add(code);
        }
      }
      const bodySchema = op.requestBody?.content?.['application/json']?.schema;
      operations.push({
        method: method.toUpperCase(),
        template,
        operationId: op.operationId ?? `${method} ${template}`,
        parameters: (op.parameters ?? [])
          .map((p: any) => resolve(document, p))
          .map((p: any) => ({ name: p.name, in: p.in, required: !!p.required, schema: deref(document, p.schema ?? {}) })),
        body: bodySchema ? deref(document, bodySchema) : undefined,
        isPublic: Array.isArray(security) && security.length === 0,
        documentedCodes: codes,
      });
    }
  }
  return operations;
}

function collectCodes(document: OpenApiDocument, schema: Schema, into: Set<string>): void {
  const code = schema?.properties?.error?.properties?.code;
  if (code) {
    const resolved = resolve(document, code);
    for (const value of resolved.enum ?? []) into.add(value);
    if (typeof resolved.const === 'string') into.add(resolved.const);
  }
  for (const branch of [...(schema?.oneOf ?? []), ...(schema?.anyOf ?? []), ...(schema?.allOf ?? [])]) collectCodes(document, resolve(document, branch), into);
}

function resolve(document: OpenApiDocument, value: any): any {
  let current = value;
  for (let depth = 0; current && typeof current.$ref === 'string' && depth < 20; depth++) {
    current = current.$ref
      .replace(/^#\//, '')
      .split('/')
      .reduce((node: any, segment: string) => node?.[segment.replace(/~1/g, '/').replace(/~0/g, '~')], document);
  }
  return current ?? {};
}

/** The schema with every $ref replaced by its target (bounded depth: the document has no cycles). */
export function deref(document: OpenApiDocument, schema: any, depth = 0): any {
  if (depth > 30 || schema === null || typeof schema !== 'object') return schema;
  if (Array.isArray(schema)) return schema.map((item) => deref(document, item, depth + 1));
  const target = resolve(document, schema);
  return Object.fromEntries(Object.entries(target).map(([key, value]) => [key, deref(document, value, depth + 1)]));
}

/** Fills a template's path parameters. */
export function pathOf(template: string, values: Record<string, string>): string {
  return `${API_PREFIX}${template.replace(/\{([^}]+)\}/g, (_, name: string) => values[name] ?? 'x')}`;
}

/**
 * The contract check every fuzzed or matrix response must pass: a JSON body with a boolean
 * `ok`; a `Request-Id`; an error is exactly {ok:false, error{code,message[,param][,details]},
 * request_id} with a contract code whose status is the response's; no stack trace; and the
 * response matches the served OpenAPI document for its operation and status.
 */
export function contractProblems(checker: DocumentChecker, method: string, url: string, response: RawResponse): string[] {
  const problems: string[] = [];
  const requestId = response.headers['request-id'];
  if (!/^req_[0-9A-Za-z]{16,}$/.test(requestId ?? '')) problems.push(`Request-Id header missing or malformed: ${requestId}`);
  let body: any;
  try {
    body = JSON.parse(response.body);
  } catch {
    return [...problems, `body is not JSON: ${JSON.stringify(response.body.slice(0, 300))}`];
  }
  if (typeof body?.ok !== 'boolean') problems.push('body has no boolean ok');
  if (body?.ok !== response.status < 400) problems.push(`ok=${body?.ok} with status ${response.status}`);
  if (response.status >= 400) {
    const keys = Object.keys(body ?? {})
      .sort()
      .join(',');
    if (keys !== 'error,ok,request_id') problems.push(`error body keys: ${keys}`);
    if (body?.request_id !== requestId) problems.push(`request_id ${body?.request_id} differs from the header ${requestId}`);
    const code = body?.error?.code;
    const status = (ERROR_STATUS as Record<string, number>)[code];
    if (status === undefined) problems.push(`unknown error code ${code}`);
    else if (status !== response.status) problems.push(`code ${code} is ${status}, sent with ${response.status}`);
    if (typeof body?.error?.message !== 'string' || body.error.message === '') problems.push('error without a message');
    for (const field of Object.keys(body?.error ?? {})) if (!['code', 'message', 'param', 'details'].includes(field)) problems.push(`unexpected error field ${field}`);
  }
  if (/\n\s+at |node_modules|\.ts:\d+/.test(response.body)) problems.push('the body carries a stack trace or source path');
  // The document describes every status an operation may answer (unknown routes aside).
  problems.push(...checker.check({ method, url, status: response.status, headers: response.headers, body: response.body }));
  return problems;
}
