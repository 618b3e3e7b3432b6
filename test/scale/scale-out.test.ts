import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { parseTon } from '../../src/domain/money.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { cliFor, parseJsonStdout, pool } from '../support/cli.js';
import { type FreshDatabase, freshDatabase, testEngine } from '../support/database.js';
import { type ServeProcess, startServe } from '../support/serve-process.js';

/**
 * The scaled-out deployment on PostgreSQL: API nodes and worker processes as real child
 * processes on loopback, sharing one database. (SQLite is one machine's embedded engine; its
 * multi-process behaviour is covered by the load suite.)
 */
vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

if (testEngine !== 'postgres') {
  console.warn('scale-out suite: PostgreSQL only (set TEST_DATABASE_URL); skipped on SQLite');
}

interface Res {
  status: number;
  body: any;
  headers: Headers;
}

async function call(base: string, path: string, key: string, init: { json?: unknown; idempotencyKey?: string } = {}): Promise<Res> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  if (init.idempotencyKey) headers['idempotency-key'] = init.idempotencyKey;
  const response = await fetch(`${base}/api/v1${path}`, {
    method: init.json === undefined ? 'GET' : 'POST',
    headers,
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

async function until<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function openOrders(db: Db): Promise<number> {
  const row = await db.kysely
    .selectFrom('orders')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('status', 'in', ['fulfillment_pending', 'processing'])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Event counts per order and type: the "exactly once" evidence. */
async function eventCounts(db: Db): Promise<Map<string, Record<string, number>>> {
  const rows = await db.kysely
    .selectFrom('order_events')
    .select(['order_id', 'type', (eb) => eb.fn.countAll().as('n')])
    .groupBy(['order_id', 'type'])
    .execute();
  const counts = new Map<string, Record<string, number>>();
  for (const row of rows) {
    const entry = counts.get(row.order_id) ?? {};
    entry[row.type] = Number(row.n);
    counts.set(row.order_id, entry);
  }
  return counts;
}

describe.skipIf(testEngine !== 'postgres')('scale-out on PostgreSQL', () => {
  let database: FreshDatabase;
  let db: Db;
  const processes: ServeProcess[] = [];
  const start = async (role: 'api' | 'worker', env: Record<string, string> = {}) => {
    const node = await startServe({ ...database.env, RATE_LIMIT_RPS: '0', TEST_FULFILMENT_DELAY_MS: '50', ...env }, 30_000, ['--role', role]);
    processes.push(node);
    return node;
  };
  const fundedAccount = async (ton: string) => {
    const account = await createAccount(db, `scale-${randomUUID()}@example.com`);
    await adjustBalance(db, { accountId: account.accountId, mode: 'test', amount: parseTon(ton), reason: 'scale test' });
    return account;
  };

  beforeAll(async () => {
    database = await freshDatabase();
    db = await openDatabase({ dataDir: database.dataDir, databaseUrl: database.env.DATABASE_URL });
  });
  // Each test starts its own nodes: a worker left over from an earlier test would take the
  // next test's orders.
  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.stop('SIGTERM')));
  });
  afterAll(async () => {
    await db?.close();
    await database?.dispose();
  });

  test('3 API nodes + 3 workers: 1,000 orders from 50 clients, retries across nodes, each settled exactly once', async () => {
    const apis = await Promise.all([start('api'), start('api'), start('api')]);
    const workers = await Promise.all([start('worker'), start('worker'), start('worker')]);
    const accounts = await Promise.all(Array.from({ length: 10 }, () => fundedAccount('1000')));
    const ids = new Set<string>();
    let replays = 0;
    const failures: string[] = [];
    await pool(
      Array.from({ length: 1000 }, (_, i) => i),
      50,
      async (i) => {
        const account = accounts[i % accounts.length]!;
        const body = { product: 'stars', recipient: `@client_${i % 7}x`, quantity: 50 + (i % 20), external_id: `inv-${i}` };
        const key = randomUUID();
        const first = await call(apis[i % 3]!.url, '/orders', account.testKey, { json: body, idempotencyKey: key });
        if (first.status !== 201) return void failures.push(`${first.status} ${JSON.stringify(first.body)}`);
        ids.add(first.body.id);
        if (i % 4 === 0) {
          // The client's retry lands on another node: the same order comes back.
          const retry = await call(apis[(i + 1) % 3]!.url, '/orders', account.testKey, { json: body, idempotencyKey: key });
          if (retry.status !== 201 || retry.body.id !== first.body.id || retry.headers.get('idempotent-replayed') !== 'true') {
            failures.push(`retry: ${retry.status} ${JSON.stringify(retry.body)}`);
          }
          replays++;
        }
      },
    );
    // On failure, show what the API nodes logged as errors.
    if (failures.length > 0)
      for (const node of apis)
        console.error(
          node
            .output()
            .stdout.split('\n')
            .filter((l) => l.includes('"level":50'))
            .slice(0, 3)
            .join('\n'),
        );
    expect(failures).toEqual([]);
    expect(ids.size).toBe(1000);
    expect(replays).toBe(250);

    await until(
      () => openOrders(db),
      (n) => n === 0,
      90_000,
      'every order to be final',
    );
    const counts = await eventCounts(db);
    expect(counts.size).toBe(1000);
    for (const [id, byType] of counts) {
      expect({ id, ...byType }).toEqual({ id, 'order.created': 1, 'order.processing': 1, 'order.delivered': 1 });
    }
    expect(await verifyLedger(db.kysely)).toEqual([]);
    // Every worker took part: the queue is shared, not owned by one process.
    const claimedBy = await db.kysely.selectFrom('orders').select('lease_owner').where('lease_owner', 'is not', null).execute();
    expect(claimedBy).toEqual([]); // no lease left behind
    expect(workers.every((w) => w.child.exitCode === null)).toBe(true);
  });

  test('a worker killed with SIGKILL mid-stream: its open batch rolls back, another worker finishes every order exactly once', async () => {
    const api = await start('api');
    const account = await fundedAccount('100');
    const created: string[] = [];
    await pool(
      Array.from({ length: 300 }, (_, i) => i),
      20,
      async (i) => {
        const res = await call(api.url, '/orders', account.testKey, { json: { product: 'stars', recipient: `@kill_${i % 5}xx`, quantity: 50 }, idempotencyKey: randomUUID() });
        expect(res.status).toBe(201);
        created.push(res.body.id);
      },
    );
    // A slow simulation keeps the doomed worker busy with batches when it is killed.
    const doomed = await start('worker', { TEST_FULFILMENT_DELAY_MS: '300' });
    await until(
      () => db.kysely.selectFrom('orders').select('id').where('status', '!=', 'fulfillment_pending').execute(),
      (rows) => rows.length > 0,
      30_000,
      'the worker to start on the orders',
    );
    process.kill(doomed.pid, 'SIGKILL');
    await doomed.exited;
    expect(await openOrders(db)).toBeGreaterThan(0);

    await start('worker');
    await until(
      () => openOrders(db),
      (n) => n === 0,
      60_000,
      'every order to be final',
    );
    const counts = await eventCounts(db);
    for (const id of created) expect(counts.get(id)).toEqual({ 'order.created': 1, 'order.processing': 1, 'order.delivered': 1 });
    expect(await verifyLedger(db.kysely)).toEqual([]);
  });

  test('a key reissued by the CLI is refused at once on every API node', async () => {
    const [a, b] = await Promise.all([start('api'), start('api')]);
    const account = await fundedAccount('1');
    expect((await call(b.url, '/balance', account.testKey)).status).toBe(200);
    const reissued = await cliFor(database.env)(['key', 'reissue', '--account', account.accountId, '--mode', 'test', '--json']);
    const newKey = parseJsonStdout(reissued).key as string;
    for (const node of [b, a]) {
      const old = await call(node.url, '/balance', account.testKey);
      expect(old.status).toBe(401);
      expect(old.body.error.code).toBe('api_key_revoked');
      expect((await call(node.url, '/balance', newKey)).status).toBe(200);
    }
  });

  test('rate limit across two nodes: each enforces half, the key gets the configured burst within one token per node', async () => {
    const env = { RATE_LIMIT_RPS: '2', RATE_LIMIT_BURST: '20', RATE_LIMIT_NODES: '2' };
    const [a, b] = await Promise.all([start('api', env), start('api', env)]);
    const account = await fundedAccount('1');
    const started = Date.now();
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 40; i++) {
      const res = await call([a, b][i % 2]!.url, '/balance', account.testKey);
      statuses.push(res.status);
      if (res.status === 429) retryAfter ??= res.headers.get('retry-after');
    }
    const elapsedSeconds = (Date.now() - started) / 1000;
    const allowed = statuses.filter((s) => s === 200).length;
    // Tolerance: the burst (20), plus what the limit refills while the requests run
    // (2/s), plus one token per node for rounding.
    expect(allowed).toBeGreaterThanOrEqual(20);
    expect(allowed).toBeLessThanOrEqual(20 + Math.ceil(elapsedSeconds * 2) + 2);
    expect(statuses.filter((s) => s === 429).length).toBe(40 - allowed);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  });
});
