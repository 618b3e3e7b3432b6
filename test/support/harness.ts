import { createAccount } from '../../src/accounts/accounts.js';
import { loadConfig } from '../../src/config.js';
import type { Mode } from '../../src/domain/api-key.js';
import { parseDecimal } from '../../src/domain/decimal.js';
import { parseTon } from '../../src/domain/money.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { createLogger } from '../../src/logger.js';
import { type RunningService, startService } from '../../src/service.js';
import { freshDatabase } from './database.js';
import { conformingInject } from './openapi.js';

/**
 * A real service on a fresh database (see database.ts for the engine), listening on a free loopback
 * port, with its worker running. Tests talk to it with `inject` (no socket) or over `url`.
 */
export interface Harness {
  service: RunningService;
  url: string;
  dataDir: string;
  /** The database's environment (DATA_DIR, plus DATABASE_URL on PostgreSQL): a CLI on it is another process on the same data. */
  databaseEnv: Record<string, string>;
  inject: RunningService['app']['inject'];
  /** A new account; `funds` (TON) credited to its test and live balances. */
  account(options?: { test?: string; live?: string }): Promise<TestAccount>;
  credit(accountId: string, mode: Mode, ton: string): Promise<void>;
  /** Changes TON_USD_RATE of the running service (USD per TON, e.g. "2.5"). */
  setTonUsdRate(rate: string): void;
  /** Row counts of the tables a bad request must not touch. */
  counts(): Promise<{ orders: number; journal: number; events: number }>;
  close(): Promise<void>;
}

export interface TestAccount {
  accountId: string;
  liveKey: string;
  testKey: string;
}

let sequence = 0;

/** Where the service's log lines go: `lines` gets every line at `level` (a suite that searches its logs for secrets). */
export interface HarnessLogs {
  level: string;
  lines: string[];
}

/**
 * `databaseUrl` rewrites the fresh PostgreSQL database's URL the service connects with (the
 * fault suites put a TCP proxy between them); the harness's own setup uses the same URL.
 * `logs` collects the service's log lines.
 */
export async function startHarness(env: Record<string, string> = {}, options: { databaseUrl?: (url: string) => string; logs?: HarnessLogs } = {}): Promise<Harness> {
  const database = await freshDatabase();
  if (options.databaseUrl && database.env.DATABASE_URL) database.env.DATABASE_URL = options.databaseUrl(database.env.DATABASE_URL);
  const { dataDir } = database;
  const { logs } = options;
  const logger = logs ? createLogger(logs.level, { write: (line: string) => void logs.lines.push(line) }) : createLogger(process.env.TEST_LOG_LEVEL ?? 'silent');
  let service: Awaited<ReturnType<typeof startService>>;
  try {
    // With DEPOSIT_ADDRESS the worker runs the deposit watcher: tests never reach the real
    // toncenter (port 9 refuses at once) unless they pass a fake's TON_API_URL.
    const config = loadConfig({ PORT: '0', TEST_FULFILMENT_DELAY_MS: '100', TEST_SLOW_DELAY_MS: '1500', TON_API_URL: 'http://127.0.0.1:9/api/v2', ...database.env, ...env });
    service = await startService(config, logger);
  } catch (error) {
    // A configuration the service refuses (the tests of those refusals) leaves no database behind.
    await database.dispose();
    throw error;
  }
  const { db } = service;
  const harness: Harness = {
    service,
    url: service.url,
    dataDir,
    databaseEnv: database.env,
    // Every response a suite receives through inject is checked against the served OpenAPI
    // document (openapi.ts): the document cannot drift from what the service answers.
    inject: conformingInject(service.app),
    async account(options = {}) {
      const created = await createAccount(db, `user${++sequence}-${Date.now()}@example.com`);
      if (options.test) await harness.credit(created.accountId, 'test', options.test);
      if (options.live) await harness.credit(created.accountId, 'live', options.live);
      return created;
    },
    async credit(accountId, mode, ton) {
      await adjustBalance(db, { accountId, mode, amount: parseTon(ton), reason: 'test funding' });
    },
    setTonUsdRate(rate) {
      const decimal = parseDecimal(rate);
      if (!decimal) throw new Error(`not a decimal rate: ${rate}`);
      service.rateFeed.setRate(decimal);
    },
    async counts() {
      const count = async (table: 'orders' | 'journal' | 'order_events') => {
        const row = await db.kysely
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow();
        return Number(row.n);
      };
      return { orders: await count('orders'), journal: await count('journal'), events: await count('order_events') };
    },
    async close() {
      await service.stop();
      await database.dispose();
    },
  };
  return harness;
}
