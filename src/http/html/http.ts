import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Html } from './html.js';

/** Small request/response helpers shared by the dashboard's pages. */
export const SESSION_COOKIE = 'sp_session';
export const PRE_SESSION_COOKIE = 'sp_pre';

declare module 'fastify' {
  interface FastifyInstance {
    /** PUBLIC_URL is https: the dashboard is reached over TLS, whatever the proxy headers say. */
    httpsOrigin: boolean;
  }
}

/**
 * Whether the browser reached us over https: the public origin says so (PUBLIC_URL=https://…),
 * or the request itself was TLS (directly, or through a trusted proxy's X-Forwarded-Proto).
 * Secure cookies and HSTS follow it (docs/operations.md, "Behind a proxy").
 */
function isHttps(request: FastifyRequest): boolean {
  return request.server.httpsOrigin || request.protocol === 'https';
}

export function cookieOptions(request: FastifyRequest, maxAgeSeconds?: number) {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: isHttps(request),
    ...(maxAgeSeconds !== undefined && { maxAge: maxAgeSeconds }),
  };
}

export function sendHtml(reply: FastifyReply, page: Html, status = 200): FastifyReply {
  return reply.code(status).type('text/html; charset=utf-8').send(page.text);
}

/** 303: after a POST the browser follows with a GET. */
export function redirect(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(303).header('location', location).send();
}

/**
 * A form or query field as a string ('' when absent, repeated or not text). NUL characters are
 * dropped: no browser sends them from a form, and PostgreSQL refuses them in text.
 */
export function field(source: unknown, name: string): string {
  const value = (source as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.replace(/\u0000/g, '') : '';
}

/** Only our own paths are valid redirect targets after login (no open redirect). */
export function safeNext(value: string): string {
  return /^\/(?![/\\])[\x21-\x7e]*$/.test(value) && !value.startsWith('/login') ? value : '/';
}

/** The origin the pages show in URLs (curl lines, status_url): PUBLIC_URL, else what the browser used. */
export function originOf(request: FastifyRequest, publicUrl: string | undefined): string {
  return publicUrl ?? `${request.protocol}://${request.host}`;
}

/** A browser tells us when a request comes from another site (Sec-Fetch-Site): such forms are refused outright. */
export function crossSite(request: FastifyRequest): boolean {
  return request.headers['sec-fetch-site'] === 'cross-site';
}

/**
 * A strict policy: our own files only, no inline script or style, no framing, forms post only
 * to us. The QR code is an <img> from our origin.
 */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

/** The security headers of every dashboard answer (pages, files, and the service's error pages for browsers). */
export function pageHeaders(request: FastifyRequest, reply: FastifyReply): void {
  // A file may carry a stricter policy of its own (an SVG logo: src/http/web/brand.ts).
  if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', CSP);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('x-frame-options', 'DENY');
  if (!reply.hasHeader('referrer-policy')) reply.header('referrer-policy', 'same-origin');
  reply.header('cross-origin-opener-policy', 'same-origin');
  reply.header('cross-origin-resource-policy', 'same-origin');
  reply.header('permissions-policy', 'camera=(), microphone=(), geolocation=(), payment=()');
  if (isHttps(request)) reply.header('strict-transport-security', 'max-age=31536000');
  // Pages show balances and, once, new keys: never stored by the browser or a proxy.
  if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
}
