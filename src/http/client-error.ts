import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../domain/api-error.js';
import { newId } from '../domain/random.js';
import { errorBody } from './errors.js';

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (a NUL or a space in the
 * request line, a malformed header, headers over Node's size limit, a bad chunk, a request
 * not received in time) still leave as a contract error body with a Request-Id
 * (CONTRACT "Errors": no input produces anything else). Fastify's default answers a bare
 * `{"error":"Bad Request"}` instead. The contract has one code for a request that cannot be
 * read: 400 invalid_request.
 */
const MESSAGES: Record<string, string> = {
  HPE_HEADER_OVERFLOW: 'The request line and headers are larger than the server accepts.',
  ERR_HTTP_REQUEST_TIMEOUT: 'The request was not received in time.',
};

export function clientErrorHandler(this: FastifyInstance, error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const requestId = newId('req');
  const message = MESSAGES[error.code ?? ''] ?? 'The request could not be read: it is not valid HTTP.';
  this.log.debug({ request_id: requestId, code: error.code }, 'unreadable request');
  // Node's own rule: no error answer once a response to this request has begun (a 404 or 401
  // answered from the headers, before the bad body bytes were parsed), or the client would
  // read a second, unasked-for response on the connection. It is closed instead.
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent: boolean } | null })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const body = JSON.stringify(errorBody(new ApiError('invalid_request', message), requestId));
    socket.write(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
