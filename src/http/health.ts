import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/engine.js';

/** Liveness (the process answers) and readiness (the database answers). */
export function healthRoutes(app: FastifyInstance, db: Db): void {
  app.get('/healthz', async () => ({ ok: true }));
  app.get('/readyz', async (request, reply) => {
    try {
      await sql`select 1`.execute(db.kysely);
      return { ok: true };
    } catch (error) {
      reply.log.warn({ err: error }, 'readiness check failed');
      return reply.code(503).send({ ok: false, error: { code: 'internal_error', message: 'The database is not reachable.' }, request_id: request.id });
    }
  });
}
