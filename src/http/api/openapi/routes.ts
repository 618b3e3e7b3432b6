import type { FastifyInstance } from 'fastify';
import type { ApiReference } from './document.js';
import { PAGE_CSP } from './page-style.js';

/** GET openapi.json and the reference page; both need no key (docs/api.md "Authentication"). */
export function referenceRoutes(app: FastifyInstance, reference: ApiReference, options: { openapi: boolean }): void {
  if (options.openapi) {
    app.get('/openapi.json', { config: { public: true } }, async (_request, reply) => {
      reply.header('Cache-Control', 'no-cache');
      return reference.document();
    });
  }
  app.get('/docs', { config: { public: true } }, async (_request, reply) => {
    reply.header('Cache-Control', 'no-cache');
    reply.header('Content-Security-Policy', PAGE_CSP);
    reply.header('X-Content-Type-Options', 'nosniff');
    return reply.type('text/html; charset=utf-8').send(reference.page());
  });
}
