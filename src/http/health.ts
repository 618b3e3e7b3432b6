import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/engine.js';

/**
 * Liveness (the process answers) and readiness (the database answers). Readiness also shows
 * live fulfilment's state (`live`: available / paused with the breaker's reason / not
 * configured) as a detail: a paused upstream is an operator alert, not a reason to take the
 * node out of the balancer (test mode and everything else still work).
 */
export function healthRoutes(app: FastifyInstance, db: Db, liveStatus?: () => Promise<unknown>): void {
  app.get('/healthz', async () => ({ ok: true }));
  app.get('/readyz', async (request, reply) => {
    try {
      await sql`select 1`.execute(db.kysely);
      return liveStatus ? { ok: true, live: await liveStatus() } : { ok: true };
    } catch (error) {
      reply.log.warn({ err: error }, 'readiness check failed');
      return reply.code(503).send({ ok: false, error: { code: 'internal_error', message: 'The database is not reachable.' }, request_id: request.id });
    }
  });
}
