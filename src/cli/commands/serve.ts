import { loadConfig } from '../../config.js';
import { ROLES, type Role } from '../../roles.js';
import { keepTickShape } from '../../runtime/tick-shape.js';
import { type Command, UsageError } from '../command.js';

export const serve: Command = {
  path: ['serve'],
  summary: 'Run the service: API and workers in one process, or one role of a scaled-out deployment',
  usage: 'starport serve [--role all|api|worker]\n\n' +
    'Roles: all (default) = API + workers; api = API only; worker = workers, serving only /healthz, /readyz, /metrics.\n' +
    'Environment: DATABASE_URL (postgres://…; unset = embedded SQLite), DATABASE_POOL_SIZE, PORT (3000; 0 = any free port),\n' +
    'HOST (127.0.0.1), DATA_DIR (./data), PUBLIC_URL, LOG_LEVEL, TON_USD_RATE, PRICE_STAR_USD, PRICE_PREMIUM_{3,6,12}_USD,\n' +
    'PRICE_MARKUP_PERCENT, QUOTE_TTL_SECONDS, TEST_FULFILMENT_DELAY_MS, TEST_SLOW_DELAY_MS, RATE_LIMIT_RPS, RATE_LIMIT_BURST,\n' +
    'RATE_LIMIT_NODES. See README.md.',
  options: { role: { type: 'string' } },
  async run(values) {
    const role = values.role ?? 'all';
    if (!ROLES.includes(role as Role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}, got "${role}"`);
    const config = loadConfig();
    // Before the start-up's garbage collections (src/runtime/tick-shape.ts).
    await keepTickShape();
    // Imported here so that the short operator commands do not load the HTTP stack.
    const { createLogger } = await import('../../logger.js');
    const { startService } = await import('../../service.js');
    const logger = createLogger(config.logLevel);
    const service = await startService(config, logger, role as Role);
    process.stdout.write(`listening on ${service.url}\n`);
    await new Promise<void>((resolve) => {
      const shutdown = (signal: string) => {
        logger.info({ signal }, 'shutting down: finishing in-flight requests');
        service.stop().then(resolve, (error) => {
          logger.error({ err: error }, 'shutdown failed');
          resolve();
        });
      };
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
    });
    logger.flush();
    return 0;
  },
};

export const migrate: Command = {
  path: ['migrate'],
  summary: 'Create or upgrade the database schema',
  usage: 'starport migrate [--json]',
  options: {},
  async run(_values, io) {
    const { withDatabase } = await import('../database.js');
    await withDatabase(async () => undefined);
    io.result({ ok: true }, 'database is up to date');
    return 0;
  },
};
