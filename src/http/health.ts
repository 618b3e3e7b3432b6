import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/engine.js';
import { watcherStatus } from '../deposits/status.js';

/**
 * Liveness (the process answers) and readiness (the database answers). With live top-ups
 * configured, readiness also reports the deposit watcher (`deposits`: lag, last poll, unmatched
 * count) as detail: a lagging watcher does not make the API unready.
 */
export function healthRoutes(app: FastifyInstance, db: Db, options: { depositAddress?: string } = {}): void {
  app.get('/healthz', async () => ({ ok: true }));
  app.get('/readyz', async (request, reply) => {
    try {
      await sql`select 1`.execute(db.kysely);
      if (!options.depositAddress) return { ok: true };
      const status = await watcherStatus(db.kysely, options.depositAddress);
      return {
        ok: true,
        deposits: {
          lag_seconds: status.lagSeconds === null ? null : Math.round(status.lagSeconds),
          last_checked_at: status.lastCheckedAt === null ? null : new Date(status.lastCheckedAt).toISOString(),
          unmatched: status.unmatched,
        },
      };
    } catch (error) {
      reply.log.warn({ err: error }, 'readiness check failed');
      return reply.code(503).send({ ok: false, error: { code: 'internal_error', message: 'The database is not reachable.' }, request_id: request.id });
    }
  });
}
