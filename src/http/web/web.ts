/**
 * What every dashboard page module gets from the plugin (src/http/web/plugin.ts builds it).
 * A module of its own so the pages never import the plugin that registers them.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Session } from '../../accounts/sessions.js';
import type { Mode } from '../../domain/api-key.js';
import type { WebContext } from './context.js';
import type { CsrfTokens } from '../html/csrf.js';
import type { View } from './layout.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The dashboard session, set by `web.authenticated` on the pages that need one. */
    dashboardSession: Session | undefined;
  }
}

/** What every page module gets. */
export interface Web {
  ctx: WebContext;
  csrf: CsrfTokens;
  /** preHandler: a logged-in user, else a redirect to the login page. */
  authenticated: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  /** preHandler for POSTs of logged-in pages: the session's CSRF token must come with the form. */
  sessionCsrf: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
  view(request: FastifyRequest, mode: Mode): View;
  /** Registers a GET page at `path` (live) and `/test…` (test). */
  page(path: string, handler: (request: FastifyRequest, reply: FastifyReply, mode: Mode) => Promise<unknown>): void;
}
