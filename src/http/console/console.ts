/**
 * What every console page module gets from the plugin (src/http/console/plugin.ts builds it).
 * A module of its own so the pages never import the plugin that registers them.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { OperatorSession } from '../../operator/operator-sessions.js';
import type { CsrfTokens } from '../html/csrf.js';
import type { ConsoleContext } from './context.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The console session, set on every route whose access is not public. */
    operatorSession: OperatorSession | undefined;
  }
  interface FastifyContextConfig {
    /** Who may use a console route: everyone (sign-in pages), any operator, or admins only. */
    access?: Access;
  }
}

export type Access = 'public' | 'support' | 'admin';

export const OPERATOR_COOKIE = 'sp_operator';
export const OPERATOR_PRE_COOKIE = 'sp_operator_pre';

type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

export interface Console {
  ctx: ConsoleContext;
  csrf: CsrfTokens;
  /** A GET page; `access` is checked before the handler (plugin.ts). */
  get(path: string, access: Access, handler: Handler): void;
  /** A form's POST: access, then the session's CSRF token, before the handler. */
  post(path: string, access: Access, handler: Handler): void;
  /** The signed-in operator of a non-public route. */
  session(request: FastifyRequest): OperatorSession;
  /** The CSRF token of the signed-in operator's session. */
  token(request: FastifyRequest): string;
}
