import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../domain/api-error.js';
import { newId } from '../domain/random.js';
import { errorBody } from './errors.js';

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (a NUL or a space in the
 * request line, a malformed header, headers over Node's size limit, a bad chunk) still leave
 * as a contract error body with a Request-Id (docs/api.md "Errors": no input produces anything
 * else). Fastify's default answers a bare `{"error":"Bad Request"}` instead. The contract has
 * one code for a request that cannot be read: 400 invalid_request. A request whose headers or
 * body did not arrive within HEADERS_TIMEOUT_MS / REQUEST_TIMEOUT_MS is 408 request_timeout
 * (docs/operations.md "Slow and hostile clients"); the connection is closed either way.
 */
const MESSAGES: Record<string, string> = {
  HPE_HEADER_OVERFLOW: 'The request line and headers are larger than the server accepts.',
};

type HttpSocket = Socket & {
  /** The response Node is writing on this connection, if any (detached once finished). */
  _httpMessage?: { headersSent: boolean } | null;
  /** The request the parser is reading, once its headers are complete. */
  parser?: { incoming?: { complete: boolean } | null } | null;
};

export function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const requestId = newId('req');
  const apiError =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? new ApiError('request_timeout')
      : new ApiError('invalid_request', MESSAGES[error.code ?? ''] ?? 'The request could not be read: it is not valid HTTP.');
  this.log.debug({ request_id: requestId, code: error.code }, 'unreadable request');
  if (!alreadyAnswered(socket as HttpSocket)) writeRawError(socket, apiError, requestId);
  socket.destroy();
}

/**
 * Node's own rule: no error answer once the request on this connection has been answered (a
 * 404 or 401 decided from the headers alone, while the body was still arriving or before its
 * bad bytes were parsed), or the client would read a second, unasked-for response. The
 * connection is closed instead. The answer is either being written (headers sent) or already
 * finished and detached while the request is still incomplete.
 */
function alreadyAnswered(socket: HttpSocket): boolean {
  const inFlight = socket._httpMessage;
  if (inFlight) return inFlight.headersSent;
  const incoming = socket.parser?.incoming;
  return incoming !== undefined && incoming !== null && !incoming.complete;
}

/**
 * Writes a contract error answer straight on a socket no Fastify request owns (the parser's
 * refusals, CONNECT, a connection over the cap), asking the client to close. The caller closes.
 */
export function writeRawError(socket: Socket, error: ApiError, requestId: string, headers: Record<string, string> = {}): void {
  if (!socket.writable) return;
  const body = JSON.stringify(errorBody(error, requestId));
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.write(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nRequest-Id: ${requestId}\r\n${extra}Connection: close\r\n\r\n${body}`,
  );
}
