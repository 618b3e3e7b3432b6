import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler } from 'fastify';
import { ApiError } from '../../domain/api-error.js';
import { authenticateRequest, type Caller, type Prefetch } from './auth.js';
import type { ApiContext } from './context.js';
import type { ApiReference } from './openapi/document.js';
import { referenceRoutes } from './openapi/routes.js';
import { apiOperations } from './operations/index.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller;
    idempotencyKey: string;
    /** The route's data, read with the key's verdict (auth.ts Prefetch), if it was. */
    prefetched: Promise<unknown> | undefined;
  }
  interface FastifyContextConfig {
    /** The route's read that takes the key's verdict with it (auth.ts Prefetch). */
    prefetch?: Prefetch;
  }
}

export const BODY_LIMIT_BYTES = 16 * 1024;

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * JSON bodies are parsed here rather than by Fastify's default parser so that every failure
 * maps to one contract code: an empty body, bytes that are not UTF-8, invalid JSON, and
 * anything but a JSON object are all invalid_json.
 */
function parseJsonObject(_request: FastifyRequest, bytes: Buffer): Record<string, unknown> {
  // A JSON text is UTF-8 (RFC 8259). Decoding leniently would turn a stray byte into U+FFFD
  // and store a value the client never sent (found by the reliability fuzzer).
  let body: string;
  try {
    body = STRICT_UTF8.decode(bytes);
  } catch {
    throw new ApiError('invalid_json', 'The request body is not valid UTF-8.');
  }
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new ApiError('invalid_json', body.trim() === '' ? 'The request body is empty; send a JSON object.' : 'The request body is not valid JSON.');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError('invalid_json', 'The request body must be a JSON object.');
  }
  // JSON.parse keeps the last of a repeated member: `"quantity":50,"quantity":10000` would
  // order 10000 where a reader of the text (a log, a proxy, a signature check) may see 50.
  if (memberCount(body) !== parsedMemberCount(value)) {
    throw new ApiError('invalid_json', 'The request body names the same member twice in one object.');
  }
  return value as Record<string, unknown>;
}

/**
 * The members written in a valid JSON text: each is followed by the only kind of ':' outside a
 * string. A plain scan, about as fast as JSON.parse itself on an order body (docs/security.md
 * "Fault injection" has the figure); no JSON library reports repeated members.
 */
function memberCount(text: string): number {
  let count = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x3a) count++;
    else if (c === 0x22) {
      // Skip the string: its end is the first quote not escaped by a backslash.
      for (i++; ; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    }
  }
  return count;
}

/**
 * The members JSON.parse kept, in every object however deep: fewer than written means a repeat.
 * Iterative: a 16 KiB body nests thousands of levels deep, more than the call stack takes.
 */
function parsedMemberCount(root: object): number {
  let count = 0;
  const pending: object[] = [root];
  for (let value = pending.pop(); value !== undefined; value = pending.pop()) {
    const items: unknown[] = Array.isArray(value) ? value : Object.values(value);
    if (!Array.isArray(value)) count += items.length;
    for (const item of items) if (typeof item === 'object' && item !== null) pending.push(item);
  }
  return count;
}

function isJsonContentType(header: string | undefined): boolean {
  return (header ?? '').split(';')[0]?.trim().toLowerCase() === 'application/json';
}

/**
 * /api/v1: authentication first, then body handling, then the routes (docs/api.md "Order of checks").
 * `reference` records every route registered here and documents it (openapi/document.ts).
 */
export async function apiPlugin(app: FastifyInstance, ctx: ApiContext, reference: ApiReference): Promise<void> {
  app.decorateRequest('caller', null as unknown as Caller);
  app.decorateRequest('idempotencyKey', '');
  app.decorateRequest('prefetched', undefined);
  reference.collect(app);

  // Each route's first onRequest hook authenticates, except on the OpenAPI document and the
  // reference page, which need no key. A route's own hooks run after it. The hook is in
  // callback form and answers a cached key without a promise (docs/performance-history.md "Eighth round").
  const authenticate = authenticationHook(ctx);
  app.addHook('onRoute', (route) => {
    if (route.config?.public) return;
    const first = route.config?.prefetch ? authenticationHook(ctx, route.config.prefetch) : authenticate;
    route.onRequest = [first, ...(route.onRequest === undefined ? [] : [route.onRequest].flat())];
  });

  app.removeAllContentTypeParsers();
  // A body is only read on POST (docs/api.md "Conventions"): on DELETE it is received (within the
  // size limit) and ignored, whatever its type or content.
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES }, async (request: FastifyRequest, body: string | Buffer) =>
    request.method === 'POST' ? parseJsonObject(request, body as Buffer) : undefined,
  );
  // Any other media type is read (so an oversized body is still a 413, which comes first)
  // and then refused.
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES }, async (request: FastifyRequest) => {
    if (request.method === 'POST') throw unsupportedMediaType();
    return undefined;
  });
  app.addHook('preValidation', (request, _reply, done) => {
    if (request.method === 'POST' && !isJsonContentType(request.headers['content-type'])) return done(unsupportedMediaType());
    try {
      rejectRepeatedQueryParameters(request);
    } catch (error) {
      return done(error as Error);
    }
    done();
  });

  referenceRoutes(app, reference, { openapi: true });
  apiOperations(app, ctx);
}

/**
 * The caller from the API key, then the per-key rate limit (docs/api.md "Order of checks").
 *
 * A refusal is answered once the current microtasks have run, never from inside the HTTP
 * parser's callback: the parser goes on with the bytes it already holds, and when the body
 * proves unreadable (a bad chunk) the client gets the parser's 400 alone, as it did when this
 * hook was async, instead of a 401 cut short by a closed connection.
 */
function authenticationHook(ctx: ApiContext, prefetch?: Prefetch): onRequestHookHandler {
  const refuse = (error: Error, done: HookHandlerDoneFunction) => queueMicrotask(() => done(error));
  const admit = (request: FastifyRequest, reply: FastifyReply, caller: Caller, done: HookHandlerDoneFunction) => {
    // Part of authentication (docs/api.md "Order of checks"): before the rate limit.
    if (caller.unverified && caller.mode === 'live' && ctx.signupVerify === 'required') return refuse(new ApiError('email_unverified'), done);
    request.caller = caller;
    if (!ctx.rateLimiter) return done();
    const decision = ctx.rateLimiter.take(caller.keyId);
    reply.headers(decision.headers);
    if (decision.allowed) return done();
    refuse(new ApiError('rate_limited'), done);
  };
  return (request, reply, done) => {
    let caller: Caller | Promise<Caller>;
    try {
      caller = authenticateRequest(ctx.db, request, prefetch);
    } catch (error) {
      return refuse(error as Error, done);
    }
    if (caller instanceof Promise) caller.then((found) => admit(request, reply, found, done), done);
    else admit(request, reply, caller, done);
  };
}

/**
 * `?quantity=50&quantity=60` is ambiguous: refuse it rather than pick one. Parameters the route
 * does not know are ignored, repeated or not (docs/api.md "Conventions").
 */
function rejectRepeatedQueryParameters(request: FastifyRequest): void {
  const query = (request.query as Record<string, unknown> | undefined) ?? {};
  for (const name of Object.keys(query)) {
    if (!Array.isArray(query[name])) continue;
    // Looked up only now: request.routeOptions builds a new object on every read.
    const known = (request.routeOptions.schema?.querystring as { properties?: object } | undefined)?.properties ?? {};
    if (name in known) throw new ApiError('invalid_request', `Query parameter "${name}" is given more than once.`, name);
  }
}

function unsupportedMediaType(): ApiError {
  return new ApiError('unsupported_media_type');
}
