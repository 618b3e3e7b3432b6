import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Mode } from '../../domain/api-key.js';
import type { WebContext } from './context.js';
import type { CsrfTokens } from './csrf.js';
import type { View } from './layout.js';

/**
 * What the team, account and activity pages need from the dashboard plugin (src/http/web/plugin.ts
 * passes its `Web`, which has all of it): declared here so that those pages do not import the
 * plugin that imports them.
 */
export interface SignedInPages {
  ctx: WebContext;
  csrf: CsrfTokens;
  authenticated: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  sessionCsrf: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  view(request: FastifyRequest, mode: Mode): View;
}
