import type { FastifyRequest, RouteOptions } from 'fastify';

/**
 * The API's routes, to tell a client that missed one which route it meant (docs/api.md
 * "Errors", `not_found`): a path without the /api/v1 prefix, or a method the path does not
 * have (`POST /quote` → `GET /api/v1/quote`).
 */
export class ApiRouteIndex {
  private readonly routes: { method: string; segments: string[] }[] = [];

  constructor(private readonly prefix: string) {}

  /**
   * An onRoute hook: records the routes under the prefix that take an API key (HEAD mirrors
   * excluded). The public ones, the reference and its document, have their own unprefixed pages.
   */
  readonly add = (route: RouteOptions): void => {
    if (!route.url.startsWith(`${this.prefix}/`) || route.config?.public) return;
    const segments = route.url.split('/').slice(1);
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') this.routes.push({ method, segments });
    }
  };

  /**
   * `No route POST /quote.` plus the route meant, or undefined when no API route matches the path
   * (with or without the prefix) under another method or only with the prefix.
   */
  suggestion(method: string, path: string): string | undefined {
    const prefixed = path === this.prefix || path.startsWith(`${this.prefix}/`) ? path : `${this.prefix}${path === '/' ? '' : path}`;
    const segments = prefixed.split('/').slice(1);
    const methods = [...new Set(this.routes.filter((route) => matches(route.segments, segments)).map((route) => route.method))].sort(
      (a, b) => METHOD_ORDER.indexOf(a) - METHOD_ORDER.indexOf(b),
    );
    if (methods.length === 0) return undefined;
    const wanted = method === 'HEAD' ? 'GET' : method;
    // The right path and method already: nothing to suggest.
    if (prefixed === path && methods.includes(wanted)) return undefined;
    if (prefixed === path) return `No route ${method} ${path}: it answers ${methods.join(' and ')} only.`;
    return `No route ${method} ${path}. The API is under ${this.prefix}: ${methods.includes(wanted) ? wanted : methods.join(' or ')} ${prefixed}.`;
  }
}

const METHOD_ORDER = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

function matches(pattern: string[], segments: string[]): boolean {
  if (pattern.length !== segments.length) return false;
  return pattern.every((part, i) => (part.startsWith(':') ? (segments[i] ?? '') !== '' : part === segments[i]));
}

/**
 * A request from an API client rather than a browser: it sends an API key, or asks for JSON.
 * Such a request to a dashboard page that shares an API path (`GET /balance`) gets the API's
 * JSON 404 naming the right path, not the dashboard's redirect to its login page.
 */
export function fromApiClient(request: FastifyRequest): boolean {
  if (request.headers.authorization !== undefined) return true;
  const accept = request.headers.accept;
  return typeof accept === 'string' && /(^|[\s,])application\/json\s*(;|,|$)/i.test(accept) && !/(^|[\s,])text\/html\s*(;|,|$)/i.test(accept);
}
