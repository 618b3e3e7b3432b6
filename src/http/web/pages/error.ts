import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Engine } from '../../../db/engine.js';
import type { Brand } from '../../../domain/brand.js';
import { handleError, handleNotFound, replyUnavailable, toApiError, unavailableError } from '../../errors.js';
import type { Html } from '../../html/html.js';
import { pageHeaders, sendHtml } from '../../html/http.js';
import { errorPage } from '../layout.js';

/**
 * The dashboard's own error pages for people, at the level of the whole service: a mistyped
 * URL or an unreadable request from a browser gets a page, an API client keeps the contract's
 * JSON error (docs/dashboard.md, "Error pages"). A request is a browser's when it is outside
 * /api and its Accept header names text/html (curl, the SDK and fetch() without one get JSON).
 */
function wantsPage(request: FastifyRequest): boolean {
  const path = request.url.split('?')[0] ?? '';
  if (path === '/api' || path.startsWith('/api/')) return false;
  if (request.method !== 'GET' && request.method !== 'HEAD') return false;
  const accept = request.headers.accept;
  return typeof accept === 'string' && /(^|[\s,])text\/html\s*(;|,|$)/i.test(accept);
}

export function notFoundPage(brand: Brand): Html {
  return errorPage(brand, 404, 'Page not found', 'There is no page at this address. Check the link, or start again from the overview.');
}

export function serverErrorPage(brand: Brand, requestId: string): Html {
  return errorPage(
    brand,
    500,
    'Something went wrong',
    `We could not show this page. Try again in a moment; if it keeps happening, contact support with the reference ${requestId}.`,
  );
}

export function badRequestPage(brand: Brand, status: number): Html {
  return errorPage(brand, status, 'This request could not be read', 'Go back, check the link or the form and try again.');
}

/** The database cannot be reached, or its disk is full: nothing of the request was kept. */
export function unavailablePage(brand: Brand): Html {
  return errorPage(brand, 503, 'Temporarily unavailable', 'We cannot save or show this right now. Nothing was changed: try again in a moment.');
}

/** The service's not-found handler when the dashboard is on: a page for browsers, JSON otherwise. */
export async function notFoundForBrowsers(brand: Brand, request: FastifyRequest, reply: FastifyReply, message?: string) {
  if (!wantsPage(request)) return handleNotFound(request, reply, message);
  pageHeaders(request, reply);
  return sendHtml(reply, notFoundPage(brand), 404);
}

/** The service's error handler when the dashboard is on: a page for browsers, JSON otherwise. */
export async function errorForBrowsers(brand: Brand, error: FastifyError | Error, request: FastifyRequest, reply: FastifyReply, engine?: Pick<Engine, 'isUnavailable'>) {
  if (!wantsPage(request)) return handleError(error, request, reply, engine);
  const apiError = engine?.isUnavailable(error) ? unavailableError() : toApiError(error);
  if (apiError.code === 'internal_error') request.log.error({ err: error }, 'unhandled error');
  pageHeaders(request, reply);
  if (apiError.code === 'service_unavailable') {
    replyUnavailable(request, reply, error);
    return sendHtml(reply, unavailablePage(brand), 503);
  }
  const status = apiError.status;
  return sendHtml(reply, status >= 500 ? serverErrorPage(brand, request.id) : badRequestPage(brand, status), status);
}
