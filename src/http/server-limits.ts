import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { ApiError } from '../domain/api-error.js';
import { newId } from '../domain/random.js';
import { writeRawError } from './client-error.js';
import { errorBody } from './errors.js';
import type { HttpLimits } from '../config.js';

/**
 * The HTTP server's defences against slow and hostile clients (docs/operations.md "Slow and
 * hostile clients") and its answers to what Node handles outside Fastify (docs/api.md
 * "Errors"): each leaves as a contract error body with a Request-Id.
 */

/** How long a refused connection may take to send its request before it is simply closed. */
const REFUSAL_GRACE_MS = 1_000;
const REFUSAL_LOG_INTERVAL_MS = 60_000;

/**
 * Node's settings for the limits. Header and request limits are enforced by a sweep every
 * `connectionsCheckingInterval` (Node's default is 30 s, far coarser than the limits): a tenth
 * of the shorter limit, at most a second, so a request is cut within its limit + 1 s.
 */
export function nodeServerOptions(limits: HttpLimits) {
  return {
    headersTimeout: limits.headersTimeoutMs,
    connectionsCheckingInterval: Math.max(10, Math.min(1_000, Math.floor(limits.headersTimeoutMs / 10))),
    // Node would answer a missing Host itself, with an empty 400; app.ts refuses it instead.
    requireHostHeader: false,
  };
}

export function guardServer(server: Server, limits: HttpLimits, log: FastifyBaseLogger): void {
  limitConnections(server, limits.maxConnections, log);
  // CONNECT has no route here, like any other method a path lacks (404 not_found). Without a
  // listener Node destroys the socket without a word.
  server.on('connect', (request: IncomingMessage, socket: Socket) => {
    const error = new ApiError('not_found', `No route ${request.method} ${request.url ?? ''}.`);
    answerAndClose(socket, error, newId('req'));
  });
  // An Expect other than 100-continue cannot be met (RFC 9110 allows refusing it); Node would
  // answer an empty 417. The contract has no 417 code: 400 invalid_request (docs/api.md).
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const requestId = newId('req');
    const error = new ApiError('invalid_request', 'The Expect header is not supported: only "100-continue" is.');
    const body = JSON.stringify(errorBody(error, requestId));
    log.debug({ request_id: requestId, expect: request.headers.expect }, 'unsupported Expect');
    response.writeHead(error.status, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
      'Request-Id': requestId,
      Connection: 'close',
    });
    response.end(body);
  });
}

/**
 * At most `max` open connections in this process: a connection beyond them is answered
 * 503 service_unavailable (Retry-After: 1) once its request starts, and closed; it never
 * reaches the HTTP parser. Node's own cap (server.maxConnections) sits a little above and
 * drops connections silently should refusals themselves pile up.
 */
function limitConnections(server: Server, max: number, log: FastifyBaseLogger): void {
  // The HTTP server's own connection listener runs only for admitted connections.
  const httpListeners = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.maxConnections = max + Math.max(100, Math.ceil(max / 10));
  let open = 0;
  // Refusals are logged at most once a minute, with their count: an attack must not flood the log.
  let refused = 0;
  let loggedAt = -Infinity;
  server.on('connection', (socket: Socket) => {
    if (open >= max) {
      refused += 1;
      if (performance.now() - loggedAt >= REFUSAL_LOG_INTERVAL_MS) {
        log.warn({ max_connections: max, refused }, 'connection limit reached: new connections are answered 503');
        loggedAt = performance.now();
        refused = 0;
      }
      return refuseConnection(socket);
    }
    open += 1;
    socket.once('close', () => {
      open -= 1;
    });
    for (const listener of httpListeners) listener.call(server, socket);
  });
}

function refuseConnection(socket: Socket): void {
  const error = new ApiError('service_unavailable', 'The server has too many open connections; retry after the number of seconds in Retry-After.');
  socket.on('error', () => socket.destroy());
  const timer = setTimeout(() => socket.destroy(), REFUSAL_GRACE_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  // Answered once the request begins, so that the client reads it as that request's answer.
  socket.once('data', () => answerAndClose(socket, error, newId('req'), { 'Retry-After': '1' }));
}

/** Answers, stops sending, and discards what the client still sends until it closes or the grace ends. */
function answerAndClose(socket: Socket, error: ApiError, requestId: string, headers: Record<string, string> = {}): void {
  socket.on('error', () => socket.destroy());
  writeRawError(socket, error, requestId, headers);
  socket.end();
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), REFUSAL_GRACE_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}
