import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SqliteDatabase as Database } from '../../src/db/driver.js';
import { afterAll, expect, test } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/engine.js';
import { openConfiguredDatabase } from '../../src/db/open.js';
import { formatTon, parseTon } from '../../src/domain/money.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { BIN, childEnv, PROJECT_ROOT } from '../support/cli.js';
import { type FreshDatabase, freshDatabase, testEngine } from '../support/database.js';
import { type ServeProcess, startServe } from '../support/serve-process.js';
import { type Acknowledged, acknowledgedProblems, invariantProblems } from './support/invariants.js';
import { announceSeed, KILLS, SEED, seededRandom } from './support/settings.js';

/**
 * Suite 3: crash recovery. The service runs as child processes under load from several clients
 * and is killed with SIGKILL at random moments, then restarted. After each restart the clients
 * first resend every request whose answer they never got, with the same Idempotency-Key (what a
 * careful client does). At the end: every order that got a 201 exists, with its amount, and
 * reached a final state exactly once; no order nobody was told about; no double debit; the
 * ledger verifies; each balance equals funding − deliveries; and the database opens cleanly
 * (SQLite PRAGMA integrity_check, migrations re-run on either engine).
 *
 * Two scenarios, each on its own database:
 * - `bin/starport serve` (API and worker in one process), killed RELIABILITY_KILLS times (default 20);
 * - a scaled-out pair, `serve --role api` and `serve --role worker`: in turn the API, the worker
 *   or both are killed, and every fourth round a restarted process is killed again shortly after
 *   spawn, before it prints "listening"; RELIABILITY_KILLS SIGKILLs in all. On SQLite too: the
 *   processes share the database file (WAL, BEGIN IMMEDIATE and a busy timeout; docs/operations.md
 *   "Data directory"), the way the CLI runs beside `serve`, and the worker finds new orders by its
 *   poll instead of PostgreSQL's LISTEN/NOTIFY. (A scaled-out production deployment uses PostgreSQL.)
 */
const CLIENTS = 6;
const FUNDING = '500';
const RECIPIENTS = ['@crash_ok', '@Crash_Two', '@test_failed', '@test_invalid'];

interface Fixture {
  database: FreshDatabase;
  db: Db;
  accountId: string;
  apiKey: string;
}

const fixtures: Fixture[] = [];
/** Every child process still running, killed if a test fails half-way. */
const running = new Set<ServeProcess>();

announceSeed(`crash (${KILLS} kills)`);

async function newFixture(tag: string): Promise<Fixture> {
  const database = await freshDatabase();
  const db = await openConfiguredDatabase(loadConfig(database.env));
  const account = await createAccount(db, `crash-${tag}-${Date.now()}@example.com`);
  await adjustBalance(db, { accountId: account.accountId, mode: 'test', amount: parseTon(FUNDING), reason: 'crash suite funding' });
  const fixture = { database, db, accountId: account.accountId, apiKey: account.testKey };
  fixtures.push(fixture);
  return fixture;
}

afterAll(async () => {
  for (const server of running) await server.stop('SIGKILL');
  for (const { db, database } of fixtures) {
    await db.close();
    await database.dispose();
  }
});

const envOf = (fixture: Fixture) => ({
  ...fixture.database.env,
  TEST_FULFILMENT_DELAY_MS: '40',
  WORKER_LEASE_MS: '400',
  RATE_LIMIT_RPS: '0',
  LOG_LEVEL: 'error',
});

async function start(fixture: Fixture, args: string[] = []): Promise<ServeProcess> {
  const server = await startServe(envOf(fixture), 20_000, args);
  running.add(server);
  return server;
}

async function kill(server: ServeProcess): Promise<void> {
  const exit = await server.stop('SIGKILL');
  running.delete(server);
  expect(exit.signal).toBe('SIGKILL');
}

interface Pending {
  key: string;
  body: string;
}

/** The clients' side: what was sent, what was acknowledged, what is still in doubt. */
function driver(fixture: Fixture) {
  const acknowledged: Acknowledged[] = [];
  /** Requests sent whose answer never came (the connection died with the server). */
  let inDoubt: Pending[] = [];
  const settled = new Set<string>();
  const tally = { created: 0, replayed: 0, refused: 0, lost: 0 };
  let sequence = 0;

  const send = async (origin: string, pending: Pending): Promise<'answered' | 'lost'> => {
    let response: Response;
    try {
      response = await fetch(`${origin}/api/v1/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fixture.apiKey}`, 'content-type': 'application/json', 'idempotency-key': pending.key },
        body: pending.body,
        signal: AbortSignal.timeout(15_000),
      });
    } catch {
      return 'lost';
    }
    let json: any;
    try {
      json = await response.json();
    } catch {
      return 'lost';
    }
    if (response.status === 201) {
      acknowledged.push({ id: json.id, accountId: fixture.accountId, idempotencyKey: pending.key, amount: json.amount.value });
      if (response.headers.get('idempotent-replayed') === 'true') tally.replayed++;
      else tally.created++;
    } else if (response.status === 402) {
      tally.refused++;
    } else {
      throw new Error(`POST /orders answered ${response.status}: ${JSON.stringify(json)}`);
    }
    settled.add(pending.key);
    return 'answered';
  };

  return {
    acknowledged,
    settled,
    tally,
    inDoubt: () => inDoubt,
    /** Resends everything in doubt with its original key and body, until each is answered. */
    async resolveInDoubt(origin: string) {
      const still: Pending[] = [];
      for (const pending of inDoubt) if ((await send(origin, pending)) === 'lost') still.push(pending);
      inDoubt = still;
    },
    /** CLIENTS clients creating orders until told to stop or their connection dies. */
    load(origin: string, round: string) {
      let active = true;
      const clients = Array.from({ length: CLIENTS }, async (_, client) => {
        while (active) {
          const pending = {
            key: `crash-${round}-${client}-${++sequence}`,
            body: JSON.stringify({ product: 'stars', recipient: RECIPIENTS[sequence % RECIPIENTS.length], quantity: 50 }),
          };
          if ((await send(origin, pending)) === 'lost') {
            tally.lost++;
            inDoubt.push(pending);
            return;
          }
        }
      });
      return async () => {
        active = false;
        await Promise.all(clients);
      };
    },
  };
}

const openOrders = async (db: Db) =>
  Number(
    (
      await db.kysely
        .selectFrom('orders')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('status', 'in', ['fulfillment_pending', 'processing'])
        .executeTakeFirstOrThrow()
    ).n,
  );

/** The end checks of both scenarios, once everything in doubt is answered and every order is final. */
async function expectRecovered(fixture: Fixture, load: ReturnType<typeof driver>): Promise<void> {
  const { db, database, accountId } = fixture;
  expect(load.acknowledged.length).toBeGreaterThan(0);
  expect(await invariantProblems(db.kysely, { final: true })).toEqual([]);
  expect(await acknowledgedProblems(db.kysely, load.acknowledged)).toEqual([]);
  const orders = await db.kysely.selectFrom('orders').select(['id', 'status', 'amount', 'idempotency_key']).execute();
  // Every order in the database is one a client was told about (after resending), and vice versa.
  expect(orders.map((o) => o.id).sort()).toEqual([...new Set(load.acknowledged.map((a) => a.id))].sort());
  expect(orders.every((o) => load.settled.has(o.idempotency_key))).toBe(true);
  const delivered = orders.filter((o) => o.status === 'delivered').reduce((sum, o) => sum + BigInt(String(o.amount)), 0n);
  const balance = await db.kysely.selectFrom('balances').select(['available', 'reserved']).where('account_id', '=', accountId).where('mode', '=', 'test').executeTakeFirstOrThrow();
  expect(formatTon(BigInt(String(balance.available)))).toBe(formatTon(parseTon(FUNDING) - delivered));
  expect(String(balance.reserved)).toBe('0');

  // The database opens cleanly: migrations re-run on a fresh connection, and SQLite's own check.
  const reopened = await openConfiguredDatabase(loadConfig(database.env));
  await reopened.close();
  if (testEngine === 'sqlite') {
    const file = path.join(database.dataDir, fileName(database.dataDir));
    const sqlite = new Database(file, { readonly: true });
    try {
      expect(sqlite.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(sqlite.pragma('foreign_key_check')).toEqual([]);
    } finally {
      sqlite.close();
    }
  }
}

test(`SIGKILL under load, ${KILLS} times: every acknowledged order survives and settles once`, { timeout: 600_000 }, async () => {
  const fixture = await newFixture('all');
  const random = seededRandom(SEED);
  const load = driver(fixture);

  const startedAt = performance.now();
  for (let round = 0; round < KILLS; round++) {
    const server = await start(fixture);
    await load.resolveInDoubt(server.url);
    const stopClients = load.load(server.url, String(round));
    // Kill at a random moment: early (during start-up work and the first orders) to late.
    await new Promise((resolve) => setTimeout(resolve, 30 + Math.floor(random() * 400)));
    await kill(server);
    await stopClients();
  }

  // A last start: answer what is still in doubt, let the worker settle everything, stop cleanly.
  const server = await start(fixture);
  await load.resolveInDoubt(server.url);
  expect(load.inDoubt(), 'every request in doubt was answered after the restart').toEqual([]);
  await expect.poll(() => openOrders(fixture.db), { timeout: 60_000, interval: 100 }).toBe(0);
  const stopped = await server.stop('SIGTERM');
  running.delete(server);
  expect(stopped.killed, 'a clean stop after the crashes').toBe(false);
  const seconds = (performance.now() - startedAt) / 1000;
  console.log(`[crash] ${testEngine}: ${KILLS} SIGKILLs in ${seconds.toFixed(1)} s; ${JSON.stringify(load.tally)}, ${load.acknowledged.length} acknowledged`);
  await expectRecovered(fixture, load);
});

/**
 * Spawns `serve --role ROLE` and SIGKILLs it `delayMs` after the spawn, without waiting for it to
 * listen. Resolves with whether it had printed "listening" by then.
 */
async function killSoonAfterSpawn(fixture: Fixture, role: 'api' | 'worker', delayMs: number): Promise<{ listened: boolean }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--role', role], {
    env: childEnv({ PORT: '0', HOST: '127.0.0.1', ...envOf(fixture) }),
    cwd: PROJECT_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.resume();
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  await new Promise((resolve) => setTimeout(resolve, delayMs));
  const listened = stdout.includes('listening on');
  child.kill('SIGKILL');
  expect(await exited, `serve --role ${role} was still running when killed`).toBe('SIGKILL');
  return { listened };
}

test(`split roles: serve --role api and --role worker SIGKILLed separately at random moments, ${KILLS} times in all, some before they listen`, { timeout: 600_000 }, async () => {
  const fixture = await newFixture('split');
  const random = seededRandom(SEED ^ 0x5a17);
  const load = driver(fixture);
  const kills = { api: 0, worker: 0, early: 0, earlyBeforeListening: 0 };
  const total = () => kills.api + kills.worker + kills.early;
  /** The quickest start seen per role (spawn → "listening"): early kills land well inside it. */
  const quickest = { api: Infinity, worker: Infinity };
  const timedStart = async (role: 'api' | 'worker') => {
    const spawnedAt = performance.now();
    const server = await start(fixture, ['--role', role]);
    quickest[role] = Math.min(quickest[role], performance.now() - spawnedAt);
    return server;
  };

  const startedAt = performance.now();
  let api = await timedStart('api');
  let worker = await timedStart('worker');
  // The roles are real: the worker process serves no API, the API process runs no worker (below,
  // orders wait while only the worker is down).
  expect((await fetch(`${worker.url}/api/v1/balance`, { headers: { authorization: `Bearer ${fixture.apiKey}` } })).status).toBe(404);

  let round = 0;
  for (; total() < KILLS; round++) {
    await load.resolveInDoubt(api.url);
    const stopClients = load.load(api.url, `split-${round}`);
    await new Promise((resolve) => setTimeout(resolve, 30 + Math.floor(random() * 400)));
    // In turn: the API alone (the worker keeps settling), the worker alone (the API keeps taking
    // orders), both at once.
    const victims = (['api', 'worker', 'both'] as const)[round % 3];
    if (victims !== 'worker') {
      await kill(api);
      kills.api++;
    }
    if (victims !== 'api') {
      await kill(worker);
      kills.worker++;
    }
    await stopClients();
    // Every few rounds a restarted process dies again before it is up (opening the database,
    // recovering the WAL, running migrations, taking its first leases).
    if (round % 4 === 3) {
      const role = victims === 'worker' ? 'worker' : 'api';
      const { listened } = await killSoonAfterSpawn(fixture, role, Math.floor((0.1 + 0.6 * random()) * quickest[role]));
      kills.early++;
      if (!listened) kills.earlyBeforeListening++;
    }
    // Both back, side by side when both died.
    [api, worker] = await Promise.all([victims === 'worker' ? api : timedStart('api'), victims === 'api' ? worker : timedStart('worker')]);
  }

  // Both up: answer what is still in doubt, let the worker settle everything, stop cleanly.
  await load.resolveInDoubt(api.url);
  expect(load.inDoubt(), 'every request in doubt was answered after the restarts').toEqual([]);
  await expect.poll(() => openOrders(fixture.db), { timeout: 60_000, interval: 100 }).toBe(0);
  for (const server of [api, worker]) {
    const stopped = await server.stop('SIGTERM');
    running.delete(server);
    expect(stopped.killed, 'a clean stop after the crashes').toBe(false);
  }
  const seconds = (performance.now() - startedAt) / 1000;
  console.log(
    `[crash] ${testEngine} split roles: ${total()} SIGKILLs in ${round} rounds (${JSON.stringify(kills)}) in ${seconds.toFixed(1)} s; ${JSON.stringify(load.tally)}, ${load.acknowledged.length} acknowledged`,
  );
  expect(kills.api).toBeGreaterThan(0);
  expect(kills.worker).toBeGreaterThan(0);
  // With the default 20 kills: 13 rounds, 3 of them with a process killed before it listened.
  if (round >= 4) expect(kills.early).toBeGreaterThan(0);
  expect(kills.earlyBeforeListening, 'the early kills came before "listening"').toBe(kills.early);
  await expectRecovered(fixture, load);
});

function fileName(dataDir: string): string {
  const files = fs.readdirSync(dataDir).filter((f) => /\.(db|sqlite3?)$/.test(f));
  if (files.length === 0) throw new Error(`no SQLite file in ${dataDir}: ${fs.readdirSync(dataDir).join(', ')}`);
  return files[0] as string;
}
