import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/engine.js';
import { watcherStatus } from '../deposits/status.js';

/**
 * Liveness (the process answers) and readiness (the database answers). Readiness also shows,
 * as detail, live fulfilment's state (`live`: available / paused with the breaker's reason / not
 * configured) and, with live top-ups configured, the deposit watcher (`deposits`: lag, last
 * poll, unmatched count). Neither takes the node out of the balancer: a paused upstream or a
 * lagging watcher is an operator alert, and everything else still works.
 */
export function healthRoutes(app: FastifyInstance, db: Db, options: { depositAddress?: string; liveStatus?: () => Promise<unknown> } = {}): void {
  app.get('/healthz', async () => ({ ok: true }));
  app.get('/readyz', async (request, reply) => {
    try {
      await sql`select 1`.execute(db.kysely);
      const live = options.liveStatus ? { live: await options.liveStatus() } : {};
      if (!options.depositAddress) return { ok: true, ...live };
      const status = await watcherStatus(db.kysely, options.depositAddress);
      return {
        ok: true,
        ...live,
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
