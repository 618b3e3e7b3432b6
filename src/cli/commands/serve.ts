import os from 'node:os';
import type { Logger } from 'pino';
import { loadConfig } from '../../config.js';
import { createLogger } from '../../logger.js';
import { ROLES, type Role } from '../../roles.js';
import { keepTickShape } from '../../runtime/tick-shape.js';
import { type Command, UsageError } from '../command.js';
import { withDatabase } from '../database.js';

export const serve: Command = {
  path: ['serve'],
  summary: 'Run the service: API and workers in one process, or one role of a scaled-out deployment',
  usage:
    'starport serve [--role all|api|worker]\n\n' +
    'Roles: all (default) = API + workers; api = API only; worker = workers, serving only /healthz, /readyz, /metrics.\n' +
    'Environment: DATABASE_URL (postgres://…; unset = embedded SQLite), DATABASE_POOL_SIZE, DATABASE_CONNECT_TIMEOUT_S (30),\n' +
    'SHUTDOWN_TIMEOUT_S (10; a second SIGTERM/SIGINT exits at once), PORT (3000; 0 = any free port),\n' +
    'HOST (127.0.0.1), OPERATOR_PORT (unset: the operator console is off), OPERATOR_HOST (127.0.0.1), DATA_DIR (./data), PUBLIC_URL, LOG_LEVEL, TON_USD_RATE, PRICE_STAR_USD, PRICE_PREMIUM_{3,6,12}_USD,\n' +
    'PRICE_MARKUP_PERCENT, QUOTE_TTL_SECONDS, TEST_FULFILMENT_DELAY_MS, TEST_SLOW_DELAY_MS, RATE_LIMIT_RPS, RATE_LIMIT_BURST,\n' +
    'RATE_LIMIT_NODES. See README.md.',
  options: { role: { type: 'string' } },
  async run(values) {
    const role = values.role ?? 'all';
    if (!ROLES.includes(role as Role)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}, got "${role}"`);
    const config = loadConfig();
    // Before the start-up's garbage collections (src/runtime/tick-shape.ts).
    await keepTickShape();
    // Imported here so that the short operator commands do not load the HTTP stack (the
    // logger and the database are in the CLI's main chunk anyway: other commands use them).
    const { startService } = await import('../../service.js');
    const logger = createLogger(config.logLevel);
    const service = await startService(config, logger, role as Role);
    // The handlers first: whoever reads the line below may signal at once.
    const stopped = new Promise<number>((resolve) => {
      installShutdown(config.shutdownTimeoutS, logger, service.stop, resolve);
    });
    process.stdout.write(`listening on ${service.url}\n`);
    if (service.console) process.stdout.write(`operator console on ${service.console.url}\n`);
    return stopped;
  },
};

/**
 * SIGTERM or SIGINT: stop accepting, let in-flight requests finish, give back leases, close the
 * database (service.stop), and resolve with 0, or 1 when part of that failed. Exit at the
 * latest `timeoutS` after the signal, with 1, whatever is still waiting (a database that does
 * not answer); a second SIGTERM or SIGINT exits at once with 128 + the signal's number (143,
 * 130). docs/operations.md "Graceful shutdown".
 */
function installShutdown(timeoutS: number, logger: Logger, stop: () => Promise<void>, resolve: (code: number) => void): void {
  let code: number | undefined;
  let signalled = false;
  const exitNow = (exitCode: number) => {
    // pino writes asynchronously; its last lines go out before the exit.
    logger.flush();
    process.exit(exitCode);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      logger.warn({ signal }, 'second signal: exiting at once');
      exitNow(128 + (os.constants.signals[signal] ?? 0));
      return;
    }
    signalled = true;
    logger.info({ signal, timeout_s: timeoutS }, 'shutting down: finishing in-flight requests');
    const deadline = setTimeout(() => {
      if (code === undefined) logger.error({ timeout_s: timeoutS }, `shutdown did not finish within ${timeoutS} s; exiting`);
      exitNow(code ?? 1);
    }, timeoutS * 1000);
    stop()
      .then(
        () => {
          code = 0;
        },
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          code = 1;
        },
      )
      .finally(() => {
        // Stopped: the process ends when nothing is left to do, or at the deadline all the same.
        deadline.unref();
        logger.flush();
        resolve(code as number);
      });
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

export const migrate: Command = {
  path: ['migrate'],
  summary: 'Create or upgrade the database schema',
  usage: 'starport migrate [--json]',
  options: {},
  async run(_values, io) {
    await withDatabase(async () => undefined);
    io.result({ ok: true }, 'database is up to date');
    return 0;
  },
};
