import type { FastifyInstance } from 'fastify';
import type { Db } from '../db/engine.js';
import { Outage } from '../db/outage.js';
import { ping } from '../db/reach.js';
import { watcherStatus } from '../deposits/status.js';
import { UNAVAILABLE_RETRY_AFTER_S } from './errors.js';

/**
 * How long /readyz waits for the database before it answers 503: a partitioned database
 * (connections accepted, nothing answered) makes it say so within this, rather than hold the
 * balancer's probe until the query timeout.
 */
const READY_TIMEOUT_MS = 2_000;

class ReadinessTimeout extends Error {}

/**
 * Liveness (the process answers) and readiness (the database answers). Readiness also shows,
 * as detail, live fulfilment's state (`live`: available / paused with the breaker's reason / not
 * configured) and, with live top-ups configured, the deposit watcher (`deposits`: lag, last
 * poll, unmatched count). Neither takes the node out of the balancer: a paused upstream or a
 * lagging watcher is an operator alert, and everything else still works.
 *
 * While the database cannot be reached, /healthz stays 200 (the process lives and recovers by
 * itself) and /readyz answers 503 service_unavailable naming the database
 * (docs/operations.md "When the database goes away"), logged once per outage.
 */
export function healthRoutes(app: FastifyInstance, db: Db, options: { depositAddress?: string; liveStatus?: () => Promise<unknown> } = {}): void {
  const outage = new Outage('readiness check');
  app.get('/healthz', async () => ({ ok: true }));
  app.get('/readyz', async (request, reply) => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ReadinessTimeout(`no answer within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    });
    try {
      const ready = await Promise.race([readiness(db, options), deadline]);
      outage.recovered(request.log);
      return ready;
    } catch (error) {
      outage.failed(request.log, error);
      reply.header('Retry-After', String(UNAVAILABLE_RETRY_AFTER_S));
      return reply.code(503).send({
        ok: false,
        error: { code: 'service_unavailable', message: `The database is not reachable (${db.engine.name === 'postgres' ? 'PostgreSQL' : 'SQLite'}).` },
        request_id: request.id,
      });
    } finally {
      clearTimeout(timer);
    }
  });
}

async function readiness(db: Db, options: { depositAddress?: string; liveStatus?: () => Promise<unknown> }) {
  await ping(db.kysely);
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
}
