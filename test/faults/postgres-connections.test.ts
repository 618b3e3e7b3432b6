import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { listenQueued } from '../../src/db/postgres-notify.js';
import { parseTon } from '../../src/domain/money.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { type FreshDatabase, freshDatabase, testEngine } from '../support/database.js';
import { type ServeProcess, startServe } from '../support/serve-process.js';
import { startTcpFaultProxy, type TcpFaultProxy } from '../support/tcp-fault-proxy.js';

/**
 * PostgreSQL connections failing under load (docs/operations.md "When the database goes
 * away"): cut by pg_terminate_backend, refused, reset and partitioned by a TCP proxy, with API
 * and worker as separate `serve` processes. No process exits; every answer is a success or a
 * 503 with Retry-After; creation works again within 2 s; every acknowledged order exists once
 * and is settled once; the ledger verifies.
 */
vi.setConfig({ testTimeout: 120_000, hookTimeout: 60_000 });

if (testEngine !== 'postgres') {
  console.warn('PostgreSQL connection faults: PostgreSQL only (set TEST_DATABASE_URL); skipped on SQLite, which has no connection to lose');
}

/** The notification listener's connection, as it names itself (src/db/postgres.ts APPLICATION_NAME). */
const LISTENER = 'starport-listen';
/** The test's own connections, which the cuts spare. */
const TEST_APPLICATION = 'starport-test';
/** Any request answers within this, whatever the fault (the service's own bounds are far lower). */
const REQUEST_LIMIT_MS = 20_000;

interface Answer {
  status: number;
  body: any;
  retryAfter: string | null;
  contentType: string | null;
  ms: number;
}

async function request(url: string, init: { key?: string; json?: unknown; idempotencyKey?: string; cookie?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (init.key) headers.authorization = `Bearer ${init.key}`;
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  if (init.idempotencyKey) headers['idempotency-key'] = init.idempotencyKey;
  if (init.cookie) headers.cookie = init.cookie;
  const started = performance.now();
  const response = await fetch(url, {
    method: init.json === undefined ? 'GET' : 'POST',
    headers,
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
    redirect: 'manual',
    signal: AbortSignal.timeout(REQUEST_LIMIT_MS),
  });
  const text = await response.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    // HTML (the dashboard) stays text.
  }
  return { status: response.status, body, retryAfter: response.headers.get('retry-after'), contentType: response.headers.get('content-type'), ms: performance.now() - started };
}

/** Tallies answers by status, and keeps the first few unexpected ones for the failure message. */
class Tally {
  readonly byStatus = new Map<number, number>();
  readonly unexpected: string[] = [];
  slowestMs = 0;
  add(what: string, answer: Answer, expected: number[]): void {
    this.byStatus.set(answer.status, (this.byStatus.get(answer.status) ?? 0) + 1);
    this.slowestMs = Math.max(this.slowestMs, answer.ms);
    const ok = expected.includes(answer.status) || (answer.status === 503 && answer.body?.error?.code === 'service_unavailable' && Number(answer.retryAfter) >= 1);
    if (!ok && this.unexpected.length < 5) this.unexpected.push(`${what}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)} retry-after=${answer.retryAfter}`);
  }
  summary(): Record<string, number> {
    return Object.fromEntries([...this.byStatus].sort(([a], [b]) => a - b).map(([status, n]) => [String(status), n]));
  }
}

/**
 * Clients creating orders (each key retried after a 503 until it is acknowledged, as the
 * contract allows) and reading them back, until stopped.
 */
class Load {
  readonly tally = new Tally();
  /** Idempotency key → the order id acknowledged for it. */
  readonly acknowledged = new Map<string, string>();
  /** Keys sent at least once. */
  readonly keys = new Set<string>();
  retriedKeys = 0;
  private running = true;
  private readonly clients: Promise<void>[];

  constructor(
    private readonly apiUrl: () => string,
    private readonly testKey: string,
    clients: number,
  ) {
    this.clients = Array.from({ length: clients }, (_, i) => this.client(i));
  }

  private async client(n: number): Promise<void> {
    for (let i = 0; this.running; i++) {
      const key = randomUUID();
      this.keys.add(key);
      const body = { product: 'stars', recipient: `@fault_${n}_${i % 5}x`, quantity: 50 + (i % 10) };
      let attempts = 0;
      for (;;) {
        const answer = await request(`${this.apiUrl()}/api/v1/orders`, { key: this.testKey, json: body, idempotencyKey: key }).catch((error: Error) => ({
          status: 0,
          body: error.message,
          retryAfter: null,
          contentType: null,
          ms: REQUEST_LIMIT_MS,
        }));
        this.tally.add('POST /orders', answer, [201]);
        attempts++;
        if (answer.status === 201) {
          const earlier = this.acknowledged.get(key);
          if (earlier && earlier !== answer.body.id) this.tally.unexpected.push(`key ${key} acknowledged as ${earlier} and ${answer.body.id}`);
          this.acknowledged.set(key, answer.body.id);
          break;
        }
        if (answer.status !== 503) break;
        // A client honouring Retry-After would wait a second; a short pause keeps the test quick.
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      if (attempts > 1) this.retriedKeys++;
      const id = this.acknowledged.get(key);
      const read = await request(id ? `${this.apiUrl()}/api/v1/orders/${id}` : `${this.apiUrl()}/api/v1/balance`, { key: this.testKey }).catch((error: Error) => ({
        status: 0,
        body: error.message,
        retryAfter: null,
        contentType: null,
        ms: REQUEST_LIMIT_MS,
      }));
      this.tally.add('GET', read, [200]);
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.clients);
  }
}

/** Polls `probe` until `done`, at most `timeoutMs`; returns how long it took. */
async function within(timeoutMs: number, what: string, probe: () => Promise<boolean>): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await probe().catch(() => false)) return performance.now() - started;
    if (performance.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** How long after `since` a new order is acknowledged (polling with fresh keys). */
async function creationWorksAgain(apiUrl: string, testKey: string): Promise<number> {
  return within(2_000, 'an order is created again', async () => {
    const answer = await request(`${apiUrl}/api/v1/orders`, { key: testKey, json: { product: 'stars', recipient: '@recovery_probe', quantity: 50 }, idempotencyKey: randomUUID() });
    return answer.status === 201;
  });
}

describe.skipIf(testEngine !== 'postgres')('PostgreSQL connections failing under load', () => {
  let database: FreshDatabase;
  let db: Db;
  let dbName: string;
  let admin: pg.Client;
  const processes: ServeProcess[] = [];
  const figures: string[] = [];

  const start = async (role: 'api' | 'worker', env: Record<string, string> = {}) => {
    const node = await startServe({ ...database.env, RATE_LIMIT_RPS: '0', TEST_FULFILMENT_DELAY_MS: '50', LOG_LEVEL: 'info', ...env }, 30_000, ['--role', role]);
    processes.push(node);
    return node;
  };
  const fundedAccount = async () => {
    const account = await createAccount(db, `faults-${randomUUID()}@example.com`);
    await adjustBalance(db, { accountId: account.accountId, mode: 'test', amount: parseTon('100000'), reason: 'fault test' });
    return account;
  };
  /**
   * Terminates connections to the test database (never anyone else's): all but the test's own,
   * or those of one kind (the service's connections name theirs).
   */
  const cut = async (application?: string): Promise<number> => {
    const { rowCount } = await admin.query(
      `select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid() and ${application ? 'application_name = $2' : 'application_name <> $2'}`,
      [dbName, application ?? TEST_APPLICATION],
    );
    return rowCount ?? 0;
  };
  const alive = () => {
    for (const node of processes)
      expect({ pid: node.pid, exitCode: node.child.exitCode, signal: node.child.signalCode, stderr: node.output().stderr.slice(-2000) }).toEqual({
        pid: node.pid,
        exitCode: null,
        signal: null,
        stderr: expect.any(String),
      });
  };
  /** Every acknowledged order exists once, no unacknowledged one was made, each settles exactly once. */
  const settledExactlyOnce = async (load: Load, accountId: string) => {
    const ids = [...load.acknowledged.values()];
    expect(new Set(ids).size).toBe(ids.length);
    await within(60_000, 'every order to be final', async () => {
      const row = await db.kysely
        .selectFrom('orders')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('status', 'in', ['fulfillment_pending', 'processing'])
        .executeTakeFirstOrThrow();
      return Number(row.n) === 0;
    });
    const rows = await db.kysely
      .selectFrom('orders')
      .select(['id', 'idempotency_key', 'status'])
      .where('account_id', '=', accountId)
      .where('recipient', 'like', 'fault\\_%')
      .execute();
    const byKey = new Map(rows.map((row) => [row.idempotency_key, row]));
    // One order per acknowledged key, the one acknowledged; none for a key never acknowledged.
    expect(rows.length).toBe(byKey.size);
    expect(rows.length).toBe(load.acknowledged.size);
    for (const [key, id] of load.acknowledged) expect(byKey.get(key)?.id).toBe(id);
    expect(rows.every((row) => row.status === 'delivered')).toBe(true);
    const events = await db.kysely
      .selectFrom('order_events')
      .select(['order_id', 'type', (eb) => eb.fn.countAll().as('n')])
      .where('order_id', 'in', ids.length > 0 ? ids : [''])
      .groupBy(['order_id', 'type'])
      .execute();
    const doubled = events.filter((e) => Number(e.n) !== 1);
    expect(doubled).toEqual([]);
    expect(events.length).toBe(ids.length * 3);
    expect(await verifyLedger(db.kysely)).toEqual([]);
  };
  /** Outage log lines per component (src/db/outage.ts Outage): once per outage, not one per attempt. */
  const outageLines = (node: ServeProcess): Record<string, number> => {
    const lines: Record<string, number> = {};
    for (const line of node.output().stdout.split('\n')) {
      const match = /"msg":"([^":]+): database unavailable; retrying/.exec(line);
      if (match) lines[match[1] as string] = (lines[match[1] as string] ?? 0) + 1;
    }
    return lines;
  };
  const mostOutageLines = (node: ServeProcess) => Math.max(0, ...Object.values(outageLines(node)));

  beforeAll(async () => {
    database = await freshDatabase();
    const url = new URL(database.env.DATABASE_URL as string);
    dbName = url.pathname.slice(1);
    url.searchParams.set('application_name', TEST_APPLICATION);
    db = await openDatabase({ dataDir: database.dataDir, databaseUrl: url.toString(), poolSize: 2 });
    admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL, application_name: TEST_APPLICATION });
    await admin.connect();
  });
  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.stop('SIGTERM')));
  });
  afterAll(async () => {
    if (figures.length > 0) console.log(`fault figures:\n${figures.join('\n')}`);
    await admin?.end();
    await db?.close();
    await database?.dispose();
  });

  test('pg_terminate_backend of every service connection, repeatedly, under load: nothing exits, answers are 2xx or 503, nothing is lost or doubled', async () => {
    const api = await start('api');
    const worker = await start('worker');
    const account = await fundedAccount();
    const load = new Load(() => api.url, account.testKey, 8);
    await within(10_000, 'orders flowing', async () => load.acknowledged.size >= 20);
    let terminated = 0;
    const cuts = 6;
    for (let i = 0; i < cuts; i++) {
      terminated += await cut();
      // Some load between cuts, so that each finds statements and transactions in flight.
      const before = load.tally.byStatus.get(201) ?? 0;
      await within(10_000, 'load between cuts', async () => (load.tally.byStatus.get(201) ?? 0) + (load.tally.byStatus.get(503) ?? 0) > before + 5);
    }
    terminated += await cut();
    const recoveryMs = await creationWorksAgain(api.url, account.testKey);
    const extra = load.acknowledged.size;
    await within(10_000, 'load after the last cut', async () => load.acknowledged.size > extra + 20);
    await load.stop();
    alive();
    expect(load.tally.unexpected).toEqual([]);
    expect(terminated).toBeGreaterThan(cuts * 2);
    await settledExactlyOnce(load, account.accountId);
    alive();
    // At most once per cut and component (worker loop, listener, webhook dispatcher, live probe).
    expect(mostOutageLines(worker)).toBeLessThanOrEqual(cuts + 1);
    figures.push(
      `pg_terminate_backend: ${cuts + 1} cuts, ${terminated} connections terminated; answers ${JSON.stringify(load.tally.summary())}; ` +
        `${load.acknowledged.size} orders acknowledged (${load.retriedKeys} after a 503 retry), all delivered once, 0 lost, 0 doubled; ` +
        `creation again ${Math.round(recoveryMs)} ms after the last cut; slowest answer ${Math.round(load.tally.slowestMs)} ms; ledger verify clean`,
    );
  });

  test('the notification listener alone cut: it reconnects, and an order created right after is delivered within 5 s', async () => {
    const api = await start('api');
    const worker = await start('worker');
    const account = await fundedAccount();
    const listeners = async () =>
      (await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1 and application_name = $2', [dbName, LISTENER])).rows.map((r) => r.pid);
    await within(10_000, 'the worker listens', async () => (await listeners()).length === 1);
    const [before] = await listeners();
    expect(await cut(LISTENER)).toBe(1);
    const created = await request(`${api.url}/api/v1/orders`, {
      key: account.testKey,
      json: { product: 'stars', recipient: '@listener_cut', quantity: 50 },
      idempotencyKey: randomUUID(),
    });
    expect(created.status).toBe(201);
    const deliveredMs = await within(
      5_000,
      'the order delivered',
      async () => (await request(`${api.url}/api/v1/orders/${created.body.id}`, { key: account.testKey })).body.status === 'delivered',
    );
    const reconnectMs = await within(5_000, 'a new listening connection', async () => {
      const now = await listeners();
      return now.length === 1 && now[0] !== before;
    });
    alive();
    expect(worker.output().stdout).toContain('notification listener: database available again');
    figures.push(
      `listener cut: 1 connection terminated; order delivered ${Math.round(deliveredMs)} ms after creation; listener back within ${Math.round(reconnectMs)} ms of the delivery`,
    );
  });

  test('a listener that lost its connection reconnects with backoff and makes one catch-up call, with no notification sent', async () => {
    const calls: number[] = [];
    const lines: string[] = [];
    const logger = { warn: (_: object, msg: string) => void lines.push(msg), info: (_: object, msg: string) => void lines.push(msg) };
    const stop = await listenQueued(database.env.DATABASE_URL as string, () => calls.push(Date.now()), { logger: logger as never });
    try {
      await within(
        5_000,
        'listening',
        async () => (await admin.query('select 1 from pg_stat_activity where datname = $1 and application_name = $2', [dbName, LISTENER])).rowCount === 1,
      );
      expect(calls).toEqual([]);
      for (let i = 1; i <= 3; i++) {
        expect(await cut(LISTENER)).toBe(1);
        await within(5_000, `catch-up call ${i}`, async () => calls.length === i);
      }
      expect(lines.filter((l) => l.includes('notification listener: database unavailable'))).toHaveLength(3);
      expect(lines.filter((l) => l.includes('notification listener: database available again'))).toHaveLength(3);
    } finally {
      await stop();
    }
  });

  describe('through a TCP proxy: refused, reset, partitioned, healed', () => {
    let proxy: TcpFaultProxy;
    beforeAll(async () => {
      const url = new URL(database.env.DATABASE_URL as string);
      proxy = await startTcpFaultProxy(Number(url.port || 5432), url.hostname);
    });
    afterAll(async () => {
      await proxy?.close();
    });

    test("the migration lock's connection reset mid-migration: the open fails with a connection error, nothing crashes, and the next open migrates", async () => {
      const fresh = await freshDatabase();
      try {
        const name = new URL(fresh.env.DATABASE_URL as string).pathname.slice(1);
        const opening = openDatabase({ dataDir: fresh.dataDir, databaseUrl: proxy.urlFor(fresh.env.DATABASE_URL as string), poolSize: 2 });
        const outcome = opening.then(
          (opened) => ({ opened }),
          (error: unknown) => ({ error }),
        );
        // Kysely's migrator holds an advisory lock in its transaction while it migrates.
        await within(10_000, 'the migration lock taken', async () => {
          const { rowCount } = await admin.query("select 1 from pg_locks l join pg_database d on d.oid = l.database where l.locktype = 'advisory' and d.datname = $1", [name]);
          return (rowCount ?? 0) > 0;
        });
        proxy.resetAll();
        const result = await outcome;
        if ('opened' in result) {
          // The migration finished before the reset landed: nothing to prove this time, but fine.
          await result.opened.close();
        } else {
          const { postgresEngine } = await import('../../src/db/postgres.js');
          expect(postgresEngine.isUnavailable(result.error)).toBe(true);
        }
        const again = await openDatabase({ dataDir: fresh.dataDir, databaseUrl: fresh.env.DATABASE_URL, poolSize: 2 });
        expect(await verifyLedger(again.kysely)).toEqual([]);
        await again.close();
        figures.push(`migration lock reset: ${'opened' in result ? 'the migration won the race' : `open failed with ${(result.error as Error).message}`}; the next open migrated`);
      } finally {
        await fresh.dispose();
      }
    });

    test('answers 503 with Retry-After (HTML on the dashboard) while it is away, /readyz 503 and /healthz 200, and everything resumes within 2 s', async () => {
      // A bound low enough for a quick test (the default is 15 s); new connections then get 2 s.
      const env = { DATABASE_URL: proxy.urlFor(database.env.DATABASE_URL as string), DATABASE_QUERY_TIMEOUT_MS: '2000' };
      const api = await start('api', env);
      const worker = await start('worker', env);
      const account = await fundedAccount();
      const load = new Load(() => api.url, account.testKey, 6);
      await within(10_000, 'orders flowing', async () => load.acknowledged.size >= 20);
      const health = new Tally();
      const recoveries: Record<string, number> = {};
      const cookie = `sp_session=${randomBytes(32).toString('base64url')}`;

      /** While the database is away: /readyz 503 naming it, /healthz 200, the dashboard's own 503 page. */
      const awayChecks = async () => {
        const ready = await request(`${api.url}/readyz`);
        health.add('/readyz', ready, []);
        expect(ready.status).toBe(503);
        expect(ready.body.error).toMatchObject({ code: 'service_unavailable', message: expect.stringContaining('database') });
        expect(ready.ms).toBeLessThan(5_000);
        expect((await request(`${worker.url}/readyz`)).status).toBe(503);
        expect((await request(`${api.url}/healthz`)).status).toBe(200);
        expect((await request(`${worker.url}/healthz`)).status).toBe(200);
        const page = await request(`${api.url}/`, { cookie });
        expect(page.status).toBe(503);
        expect(page.contentType).toMatch(/^text\/html/);
        expect(page.body).toContain('Temporarily unavailable');
        expect(Number(page.retryAfter)).toBeGreaterThanOrEqual(1);
      };
      /** Back: /readyz 200 and creation within 2 s of the database's return. */
      const back = async (fault: string) => {
        const started = performance.now();
        await within(2_000, `/readyz 200 after ${fault}`, async () => (await request(`${api.url}/readyz`)).status === 200);
        await within(2_000, `worker /readyz 200 after ${fault}`, async () => (await request(`${worker.url}/readyz`)).status === 200);
        await creationWorksAgain(api.url, account.testKey);
        recoveries[fault] = Math.round(performance.now() - started);
        expect(recoveries[fault]).toBeLessThan(2_000);
        const page = await request(`${api.url}/`, { cookie });
        expect(page.status).toBe(303); // an unknown session: to the login page, as always
      };
      const someLoad = async () => {
        const before = load.acknowledged.size;
        await within(10_000, 'load', async () => load.acknowledged.size > before + 10);
      };

      // Refused: the server is down.
      await proxy.setMode('refuse');
      proxy.resetAll();
      await within(5_000, 'a 503 under refusal', async () => (load.tally.byStatus.get(503) ?? 0) > 0);
      await awayChecks();
      await proxy.setMode('pass');
      await back('refused');
      await someLoad();

      // Reset: every connection cut at once, three times.
      for (let i = 0; i < 3; i++) {
        proxy.resetAll();
        await someLoad();
      }
      recoveries.reset = Math.round(await creationWorksAgain(api.url, account.testKey));

      // Partitioned: connections accepted and frozen, nothing answered.
      const before503 = load.tally.byStatus.get(503) ?? 0;
      await proxy.setMode('partition');
      await within(10_000, 'a 503 in the partition', async () => (load.tally.byStatus.get(503) ?? 0) > before503);
      await awayChecks();
      await proxy.setMode('pass');
      await back('partition');
      await someLoad();

      await load.stop();
      alive();
      expect(load.tally.unexpected).toEqual([]);
      expect(health.unexpected).toEqual([]);
      // Bounded: the pool's wait, a new connection (2 s) and one statement (2 s), never a hang.
      expect(load.tally.slowestMs).toBeLessThan(10_000);
      await settledExactlyOnce(load, account.accountId);
      // Once per outage and component (worker loop, listener, webhook dispatcher, live probe,
      // readiness), not once per attempt: 5 faults (refused, 3 resets, partitioned), each
      // lasting seconds at most, over which every loop retried many times.
      // (One spare: a fault may split into two outages where a round got through between them.)
      expect(mostOutageLines(worker)).toBeLessThanOrEqual(6);
      expect(mostOutageLines(api)).toBeLessThanOrEqual(6);
      figures.push(
        `proxy refuse/reset×3/partition: answers ${JSON.stringify(load.tally.summary())}; slowest answer ${Math.round(load.tally.slowestMs)} ms; ` +
          `recovery (readyz 200 + creation) ${JSON.stringify(recoveries)} ms; ${load.acknowledged.size} orders acknowledged (${load.retriedKeys} after a 503 retry), ` +
          `0 lost, 0 doubled; outage log lines, worker ${JSON.stringify(outageLines(worker))}, API ${JSON.stringify(outageLines(api))}`,
      );
    });
  });
});
