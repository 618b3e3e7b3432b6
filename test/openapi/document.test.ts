import { createHash } from 'node:crypto';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ERROR_STATUS } from '../../src/domain/api-error.js';
import { GetQuoteQuery as quoteQuery } from '../../src/http/api/operations/quotes/get-quote.js';
import { CreateOrderBody as createOrderBody } from '../../src/http/api/operations/orders/create-order.js';
import { OrderIdParams as orderIdParams } from '../../src/http/api/operations/orders/get-order.js';
import { ValidateRecipientBody as validateRecipientBody } from '../../src/http/api/operations/recipients/validate-recipient.js';
import { type Harness, startHarness } from '../support/harness.js';
import { REQUEST_ID } from '../support/http.js';
import { DocumentChecker, type OpenApiDocument } from '../support/openapi.js';

/**
 * The OpenAPI document: served without a key, valid OpenAPI 3.1, and describing exactly the
 * routes the service has, with the very schemas that validate requests.
 */

let h: Harness;
let doc: OpenApiDocument;

type Json = Record<string, any>;

beforeAll(async () => {
  h = await startHarness();
  const response = await fetch(`${h.url}/api/v1/openapi.json`);
  expect(response.status).toBe(200);
  doc = (await response.json()) as OpenApiDocument;
});
afterAll(async () => {
  await h.close();
});

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation: operation as Json })));

describe('GET /api/v1/openapi.json', () => {
  test('needs no key and answers JSON with a Request-Id', async () => {
    const response = await fetch(`${h.url}/api/v1/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('request-id')).toMatch(REQUEST_ID);
    // Not an authenticated request: no rate-limit headers.
    expect(response.headers.get('ratelimit')).toBeNull();
    await response.text();
    // A wrong key does not matter either.
    const withBadKey = await fetch(`${h.url}/api/v1/openapi.json`, { headers: { authorization: 'Bearer sk_test_nope' } });
    expect(withBadKey.status).toBe(200);
    await withBadKey.text();
  });

  test('is a valid OpenAPI 3.1 document (standard validator)', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as never);
    expect(result.errors ?? [], JSON.stringify(result.errors, null, 2)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(doc.openapi).toBe('3.1.0');
  });

  test('servers: the address the service answers on, with /api/v1', () => {
    expect(doc.servers).toEqual([{ url: `${h.url}/api/v1`, description: expect.any(String) }]);
  });

  test('servers: PUBLIC_URL when set', async () => {
    const other = await startHarness({ PUBLIC_URL: 'https://starport.example.com' });
    try {
      const served = (await other.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
      expect(served.servers[0].url).toBe('https://starport.example.com/api/v1');
      expect(served.externalDocs.url).toBe('https://starport.example.com/docs');
    } finally {
      await other.close();
    }
  });
});

describe('the document is the routes', () => {
  /** METHOD /path of every route Fastify has under /api/v1, read from its own route table. */
  function registeredRoutes(): Set<string> {
    const tree = h.service.app.printRoutes({ commonPrefix: false });
    const found = new Set<string>();
    const stack: string[] = [];
    for (const line of tree.split('\n')) {
      const match = /^([│ ]*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
      if (!match) continue;
      const depth = (match[1] as string).length / 4;
      stack.length = depth;
      stack.push(match[2] as string);
      const path = stack.join('');
      for (const method of (match[3] ?? '').split(', ').filter(Boolean)) found.add(`${method} ${path}`);
    }
    return new Set(
      [...found]
        .filter((route) => route.split(' ')[1]?.startsWith('/api/v1/'))
        // HEAD routes are Fastify's automatic mirrors of GET routes.
        .filter((route) => !route.startsWith('HEAD '))
        // The document and the page do not document themselves.
        .filter((route) => !['GET /api/v1/openapi.json', 'GET /api/v1/docs'].includes(route))
        .map((route) => route.replace(/:([A-Za-z0-9_]+)/g, '{$1}')),
    );
  }

  test('the routes Fastify registered under /api/v1 are exactly the documented paths and methods', () => {
    const documented = new Set(operations().map(({ path, method }) => `${method.toUpperCase()} /api/v1${path}`));
    const registered = registeredRoutes();
    expect(registered.size).toBeGreaterThanOrEqual(5);
    expect([...registered].sort()).toEqual([...documented].sort());
    expect([...documented]).toEqual(
      expect.arrayContaining(['GET /api/v1/balance', 'GET /api/v1/orders/{id}', 'GET /api/v1/quote', 'POST /api/v1/orders', 'POST /api/v1/recipients/validate']),
    );
  });

  test('every operation is documented: id, summary, description, tag, a success response with an example', () => {
    for (const { path, method, operation } of operations()) {
      const where = `${method.toUpperCase()} ${path}`;
      expect(operation['x-undocumented'], `${where} has no config.openapi`).toBeUndefined();
      expect(operation.operationId, where).toMatch(/^[a-z][A-Za-z]+$/);
      expect(operation.summary, where).toBeTruthy();
      expect(operation.description, where).toBeTruthy();
      expect(operation.tags, where).toHaveLength(1);
      const success = Object.entries(operation.responses as Json).filter(([status]) => status.startsWith('2'));
      expect(success, where).toHaveLength(1);
      expect(Object.keys(success[0]?.[1].content['application/json'].examples).length, where).toBeGreaterThan(0);
    }
    expect(operations().map(({ operation }) => operation.operationId)).toEqual(expect.arrayContaining(['createOrder', 'getBalance', 'getOrder', 'getQuote', 'validateRecipient']));
  });

  test('request schemas are the ones Fastify validates with', () => {
    const schemas = doc.components.schemas as Json;
    expect(schemas.CreateOrderRequest).toEqual(JSON.parse(JSON.stringify(createOrderBody)));
    expect(schemas.ValidateRecipientRequest).toEqual(JSON.parse(JSON.stringify(validateRecipientBody)));
    const quote = doc.paths['/quote']?.get as Json;
    for (const [name, schema] of Object.entries(quoteQuery.properties)) {
      expect(quote.parameters.find((p: Json) => p.name === name)).toMatchObject({ in: 'query', required: true, schema: JSON.parse(JSON.stringify(schema)) });
    }
    const order = doc.paths['/orders/{id}']?.get as Json;
    expect(order.parameters).toEqual([expect.objectContaining({ name: 'id', in: 'path', required: true, schema: JSON.parse(JSON.stringify(orderIdParams.properties.id)) })]);
    expect((doc.paths['/orders']!.post as Json).requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/CreateOrderRequest' });
  });
});

describe('contents', () => {
  test('every error code of the contract is in the document, with its status', () => {
    const codes = (doc.components.schemas as Json).ErrorCode.enum;
    expect([...codes].sort()).toEqual(Object.keys(ERROR_STATUS).sort());
    const description = (doc.info as Json).description as string;
    for (const [code, status] of Object.entries(ERROR_STATUS)) expect(description).toContain(`| ${status} | \`${code}\` |`);
  });

  test('each operation documents its errors by status, with an example per code', () => {
    for (const { path, method, operation } of operations()) {
      for (const [status, response] of Object.entries(operation.responses as Json)) {
        if (status.startsWith('2')) continue;
        const content = response.content['application/json'];
        const codes = content.schema.allOf[1].properties.error.properties.code.enum as string[];
        expect(codes.length, `${method} ${path} ${status}`).toBeGreaterThan(0);
        for (const code of codes) {
          expect(ERROR_STATUS[code as keyof typeof ERROR_STATUS]).toBe(Number(status));
          expect(content.examples[code].value.error.code).toBe(code);
        }
      }
      // Every authenticated operation can answer these.
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['400', '401', '429', '500']));
    }
    const create = doc.paths['/orders']?.post as Json;
    expect(Object.keys(create.responses).sort()).toEqual(['201', '400', '401', '402', '403', '409', '413', '415', '429', '500', '503']);
  });

  test('headers: Authorization, Idempotency-Key, Request-Id, Idempotent-Replayed, RateLimit-Policy, RateLimit, Retry-After', () => {
    const components = doc.components as Json;
    expect(components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    const create = doc.paths['/orders']?.post as Json;
    expect(create.parameters).toContainEqual(expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: true }));
    expect(Object.keys(create.responses['201'].headers)).toEqual(['Request-Id', 'RateLimit-Policy', 'RateLimit', 'Idempotent-Replayed']);
    expect(Object.keys(create.responses['429'].headers)).toEqual(['Request-Id', 'RateLimit-Policy', 'RateLimit', 'Retry-After']);
    expect(Object.keys(create.responses['401'].headers)).toEqual(['Request-Id']);
    expect(Object.keys(components.headers).sort()).toEqual(['Idempotent-Replayed', 'RateLimit', 'RateLimit-Policy', 'Request-Id', 'Retry-After']);
  });

  test('every example validates against its schema', () => {
    const checker = DocumentChecker.for(doc);
    let checked = 0;
    const pointerSegment = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
    for (const { path, method, operation } of operations()) {
      const base = `/paths/${pointerSegment(path)}/${method}`;
      const media: [string, Json][] = Object.entries(operation.responses as Json).map(([status, response]) => [
        `${base}/responses/${status}/content/application~1json`,
        response.content['application/json'],
      ]);
      if (operation.requestBody) media.push([`${base}/requestBody/content/application~1json`, operation.requestBody.content['application/json']]);
      for (const [pointer, content] of media) {
        const validate = checker.validator(`${pointer}/schema`);
        for (const [name, example] of Object.entries(content.examples ?? {}) as [string, Json][]) {
          expect(validate(example.value), `${pointer} example ${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
          checked++;
        }
      }
      (operation.parameters as Json[]).forEach((parameter, index) => {
        if (parameter.example === undefined) return;
        const validate = checker.validator(`${base}/parameters/${index}/schema`);
        expect(validate(parameter.example), `${base} parameter ${parameter.name}`).toBe(true);
        checked++;
      });
    }
    expect(checked).toBeGreaterThan(40);
  });
});

describe('the reference page', () => {
  test.each(['/docs', '/api/v1/docs'])('%s: HTML without a key, self-contained', async (path) => {
    const response = await fetch(`${h.url}${path}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await response.text();
    expect(html).toMatch(/^<!doctype html>/);
    // Its CSP allows exactly its own inline stylesheet.
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)?.[1] ?? '';
    expect(response.headers.get('content-security-policy')).toContain(`'sha256-${createHash('sha256').update(style).digest('base64')}'`);
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    // Nothing from elsewhere: no scripts, no external stylesheets, fonts or images.
    expect(html).not.toMatch(/<script|<link|<img|@import|url\(/i);
    for (const [, url] of html.matchAll(/(?:src|href)="([^"]+)"/g)) expect(url?.startsWith('#') || url?.startsWith(h.url), String(url)).toBe(true);
  });

  test('has the walkthrough, test recipients, idempotency and polling guidance, every endpoint and error code', async () => {
    const html = await (await fetch(`${h.url}/docs`)).text();
    for (const text of [
      'Your first order, step by step',
      `export STARPORT_BASE_URL=${h.url}/api/v1`,
      'Idempotency-Key: $KEY',
      '@test_invalid',
      '@test_failed',
      '@test_slow',
      'Idempotency and retries',
      '5 to 15 seconds',
      'about 2 s',
      'Retry-After',
      '@starport/sdk',
      // The Python SDK too, with the service's own base URL.
      'packages/python',
      `base_url=&quot;${h.url}/api/v1&quot;`,
    ]) {
      expect(html).toContain(text);
    }
    for (const { operation } of operations()) expect(html).toContain(`id="${operation.operationId}"`);
    for (const code of Object.keys(ERROR_STATUS)) expect(html).toContain(`id="error-${code}"`);
  });
});
