import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { formatTon, parseTon } from '../../src/domain/money.js';
import { openDatabase } from '../../src/db/open.js';
import { type CliResult, cliFor, describeRun, parseJsonStdout, pool } from '../support/cli.js';
import { type FreshDatabase, freshDatabase } from '../support/database.js';
import { type ServeProcess, startServe } from '../support/serve-process.js';

/**
 * Concurrency over real sockets against a separately started `bin/starport serve` process,
 * with accounts created and funded by separate `bin/starport` CLI processes on the same
 * database (the SQLite file, or the PostgreSQL database when the suite runs there). Nothing
 * waits a fixed time: every wait is for a response, a process's output or exit, or a poll
 * with a deadline.
 */
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const STARS_50 = '0.25'; // 50 stars at the default price list
const ORDER_BODY = { product: 'stars', recipient: '@load_tester', quantity: 50 };
const timings: Record<string, number> = {};

let database: FreshDatabase;
let cli: ReturnType<typeof cliFor>;
let server: ServeProcess | undefined;

interface Account {
  account_id: string;
  live_key: string;
  test_key: string;
}

interface Res {
  status: number;
  body: any;
  headers: Headers;
  error?: string;
}

async function request(base: string, method: string, path: string, key: string, options: { json?: unknown; idempotencyKey?: string } = {}): Promise<Res> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (options.json !== undefined) headers['content-type'] = 'application/json';
  if (options.idempotencyKey !== undefined) headers['idempotency-key'] = options.idempotencyKey;
  try {
    const response = await fetch(`${base}/api/v1${path}`, {
      method,
      headers,
      body: options.json === undefined ? undefined : JSON.stringify(options.json),
    });
    const text = await response.text();
    let body: any = text;
    try {
      body = JSON.parse(text);
    } catch {
      // kept as text: the assertions will show it
    }
    return { status: response.status, body, headers: response.headers };
  } catch (error) {
    // A refused or reset connection counts as a failure of the server, not of the test.
    return { status: 0, body: undefined, headers: new Headers(), error: String((error as Error).cause ?? error) };
  }
}

const postOrder = (base: string, key: string, idempotencyKey: string, json: unknown = ORDER_BODY) => request(base, 'POST', '/orders', key, { json, idempotencyKey });

async function balance(base: string, key: string): Promise<{ value: string; reserved: string }> {
  const res = await request(base, 'GET', '/balance', key);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.balance;
}

/** Polls `probe` until it returns a value (not undefined) or the deadline passes. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, deadlineMs = 20_000, everyMs = 100): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${deadlineMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

function statusCounts(results: Res[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of results) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

function expectNoServerErrors(results: Res[]) {
  const bad = results.filter((r) => r.status === 0 || r.status >= 500);
  expect(bad.map((r) => ({ status: r.status, body: r.body, error: r.error })).slice(0, 5), `${bad.length} responses were 5xx or failed`).toEqual([]);
}

function expectCliOk(args: string[], result: CliResult) {
  expect(result.code, describeRun(args, result)).toBe(0);
}

/** Creates an account with the CLI and credits its test balance, also with the CLI. */
async function fundedAccount(run: ReturnType<typeof cliFor>, label: string, ton: string): Promise<Account> {
  const createArgs = ['account', 'create', '--email', `${label}-${process.pid}-${Date.now()}@example.com`, '--json'];
  const created = await run(createArgs);
  expectCliOk(createArgs, created);
  const account = parseJsonStdout(created) as Account;
  const creditArgs = ['balance', 'credit', '--account', account.account_id, '--mode', 'test', '--amount', ton, '--reason', 'load test funding', '--json'];
  const credited = await run(creditArgs);
  expectCliOk(creditArgs, credited);
  expect(parseJsonStdout(credited).balance).toEqual({ value: formatTon(parseTon(ton)), reserved: '0', currency: 'TON' });
  return account;
}

async function ledgerVerify(run: ReturnType<typeof cliFor>): Promise<{ result: CliResult; document: any }> {
  const result = await run(['ledger', 'verify', '--json']);
  return { result, document: parseJsonStdout(result) };
}

function expectLedgerClean({ result, document }: { result: CliResult; document: any }) {
  expect(document, describeRun(['ledger', 'verify', '--json'], result)).toEqual({ ok: true });
  expect(result.code).toBe(0);
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

const ACCOUNTS_A = 20;
const ORDERS_PER_ACCOUNT_A = 25;
const AFFORDABLE_A = 10;
const FUNDS_A = '2.5'; // exactly AFFORDABLE_A orders of 0.25

let accountsA: Account[] = [];
let accountB: Account;
let accountC: Account;
const FUNDS_B = '1';
const FUNDS_C = '50'; // exactly 200 orders of 0.25: every order of (c) is affordable without the credits

beforeAll(async () => {
  const started = performance.now();
  database = await freshDatabase();
  cli = cliFor(database.env);
  // The server migrates the fresh database; then CLI processes create and fund accounts
  // beside it, on the same database.
  server = await startServe({ ...database.env, TEST_FULFILMENT_DELAY_MS: '100', RATE_LIMIT_RPS: '0' });
  const labels = [...Array.from({ length: ACCOUNTS_A }, (_, i) => [`load-a${i}`, FUNDS_A]), ['load-b', FUNDS_B], ['load-c', FUNDS_C]] as const;
  const accounts = await pool(labels, 4, ([label, ton]) => fundedAccount(cli, label, ton));
  accountsA = accounts.slice(0, ACCOUNTS_A);
  accountB = accounts[ACCOUNTS_A] as Account;
  accountC = accounts[ACCOUNTS_A + 1] as Account;
  timings['setup: serve + 22 accounts created and funded by 44 CLI runs'] = performance.now() - started;
  // 44 Node start-ups: seconds on an idle machine, much longer when other suites share the CPUs.
}, 240_000);

afterAll(async () => {
  // Only if a test failed before stopping it: do not leave the process behind.
  if (server && server.child.exitCode === null && server.child.signalCode === null) await server.stop('SIGKILL', 5_000);
  await database?.dispose();
  console.log(
    `load timings (ms):\n${Object.entries(timings)
      .map(([name, ms]) => `  ${name}: ${Math.round(ms)}`)
      .join('\n')}`,
  );
});

describe('one serve process, many clients', () => {
  test('(a) 500 concurrent orders from 20 accounts funded for 10 each: exactly 200 created, 300 refused, no overdraft', async () => {
    const base = (server as ServeProcess).url;
    const started = performance.now();
    const plan = shuffle(accountsA.flatMap((account, a) => Array.from({ length: ORDERS_PER_ACCOUNT_A }, (_, i) => ({ account, key: `a-${a}-${i}-${Date.now()}` }))));
    // The ledger check runs while the orders are in flight, and again once they settled.
    const verifyInFlight = ledgerVerify(cli);
    const results = await Promise.all(plan.map(({ account, key }) => postOrder(base, account.test_key, key)));
    timings['(a) 500 concurrent POST /orders'] = performance.now() - started;

    expectNoServerErrors(results);
    expect(statusCounts(results)).toEqual({ 201: ACCOUNTS_A * AFFORDABLE_A, 402: ACCOUNTS_A * (ORDERS_PER_ACCOUNT_A - AFFORDABLE_A) });
    for (const account of accountsA) {
      const mine = results.filter((_, i) => plan[i]?.account === account);
      expect(mine.filter((r) => r.status === 201).length, `orders created for ${account.account_id}`).toBe(AFFORDABLE_A);
    }
    const created = results.filter((r) => r.status === 201);
    expect(new Set(created.map((r) => r.body.id)).size).toBe(created.length);
    for (const r of created) {
      expect(r.body.amount).toEqual({ value: STARS_50, currency: 'TON' });
      expect(r.headers.get('idempotent-replayed')).toBeNull();
    }
    for (const r of results.filter((x) => x.status === 402)) {
      expect(r.body.error.code).toBe('insufficient_balance');
      expect(r.body.error.details.required).toBe(STARS_50);
      expect(parseTon(r.body.error.details.available)).toBeLessThan(parseTon(STARS_50));
    }

    // No balance is negative; every account spent exactly its funds (value 0 the moment its
    // 10 orders were reserved, whatever their state now).
    for (const account of accountsA) {
      const b = await balance(base, account.test_key);
      expect(b.value.startsWith('-') || b.reserved.startsWith('-'), JSON.stringify(b)).toBe(false);
      expect(b.value).toBe('0');
      expect(parseTon(b.value) + parseTon(b.reserved)).toBeLessThanOrEqual(parseTon(FUNDS_A));
    }

    expectLedgerClean(await verifyInFlight);
    timings['(a) ledger verify while in flight'] = performance.now() - started;

    // All 200 deliver: nothing stays reserved and nothing comes back.
    await until('all (a) orders delivered', async () => {
      const balances = await Promise.all(accountsA.map((a) => balance(base, a.test_key)));
      return balances.every((b) => b.reserved === '0') ? balances : undefined;
    }).then((balances) => {
      for (const b of balances) expect(b).toEqual({ value: '0', reserved: '0', currency: 'TON' });
    });
    expectLedgerClean(await ledgerVerify(cli));
    timings['(a) total, until settled and verified'] = performance.now() - started;
  });

  test('(b) 50 concurrent requests with one Idempotency-Key create one order', async () => {
    const base = (server as ServeProcess).url;
    const started = performance.now();
    const key = `b-${Date.now()}`;
    const results = await Promise.all(Array.from({ length: 50 }, () => postOrder(base, accountB.test_key, key)));
    timings['(b) 50 concurrent POST /orders, one key'] = performance.now() - started;

    expectNoServerErrors(results);
    expect(statusCounts(results)).toEqual({ 201: 50 });
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    const firsts = results.filter((r) => r.headers.get('idempotent-replayed') === null);
    expect(firsts.length, 'responses without Idempotent-Replayed').toBe(1);
    for (const r of results.filter((x) => x.headers.get('idempotent-replayed') !== null)) {
      expect(r.headers.get('idempotent-replayed')).toBe('true');
    }
    // One reserve only: 1 − 0.25, whether the order is still open or already delivered.
    expect((await balance(base, accountB.test_key)).value).toBe('0.75');
  });

  test('(c) balance credits by CLI processes while 200 orders are created over HTTP: exact balance, clean ledger', async () => {
    const base = (server as ServeProcess).url;
    const started = performance.now();
    const LANES = 2; // two CLI processes writing at a time, beside the server
    const CREDITS = 20;
    const WAVE = 10;
    const CREDIT = '0.123456789';
    const orders: Promise<Res>[] = [];
    const cliRuns: { args: string[]; result: CliResult }[] = [];
    await Promise.all(
      Array.from({ length: LANES }, async (_, lane) => {
        for (let k = lane; k < CREDITS; k += LANES) {
          const args = ['balance', 'credit', '--account', accountC.account_id, '--mode', 'test', '--amount', CREDIT, '--reason', `load credit ${k}`, '--json'];
          // The CLI process starts first; a wave of orders goes out while it runs.
          const running = cli(args);
          for (let i = 0; i < WAVE; i++) orders.push(postOrder(base, accountC.test_key, `c-${k}-${i}-${Date.now()}`));
          cliRuns.push({ args, result: await running });
        }
      }),
    );
    const results = await Promise.all(orders);
    timings['(c) 20 CLI credits (2 lanes of 10 sequential runs) + 200 orders'] = performance.now() - started;

    expect(cliRuns.length).toBe(CREDITS);
    for (const { args, result } of cliRuns) {
      expectCliOk(args, result);
      const document = parseJsonStdout(result);
      expect(document.balance.currency).toBe('TON');
      expect(parseTon(document.balance.value)).toBeGreaterThanOrEqual(0n);
    }
    expectNoServerErrors(results);
    expect(statusCounts(results)).toEqual({ 201: CREDITS * WAVE });

    // value + reserved = funds + credits − delivered; once all are delivered, reserved is 0.
    const expected = parseTon(FUNDS_C) + BigInt(CREDITS) * parseTon(CREDIT) - BigInt(CREDITS * WAVE) * parseTon(STARS_50);
    const now = await balance(base, accountC.test_key);
    expect(parseTon(now.value) + parseTon(now.reserved)).toBeGreaterThanOrEqual(expected);
    const settled = await until('all (c) orders delivered', async () => {
      const b = await balance(base, accountC.test_key);
      return b.reserved === '0' ? b : undefined;
    });
    expect(settled).toEqual({ value: formatTon(expected), reserved: '0', currency: 'TON' });
    expect(settled.value).toBe('2.46913578');
    expectLedgerClean(await ledgerVerify(cli));
    timings['(c) total, until settled and verified'] = performance.now() - started;
    // Twenty CLI processes, ten after each other per lane: generous for a slow or busy machine
    // (a limit on time, not an assertion about speed).
  }, 120_000);

  test('the server stops gracefully on SIGTERM: exit code 0', async () => {
    const exit = await (server as ServeProcess).stop('SIGTERM');
    expect(exit.killed, `serve had to be killed\nstderr: ${exit.stderr}`).toBe(false);
    expect({ code: exit.code, signal: exit.signal }, `stderr: ${exit.stderr}`).toEqual({ code: 0, signal: null });
  });
});

describe('restart', () => {
  test('(d) a restarted server resumes test-mode fulfilment without duplicating events', async () => {
    const started = performance.now();
    const fresh = await freshDatabase();
    const run = cliFor(fresh.env);
    let first: ServeProcess | undefined;
    let second: ServeProcess | undefined;
    try {
      // A long fulfilment delay: the orders are still processing when the first server stops.
      first = await startServe({ ...fresh.env, TEST_FULFILMENT_DELAY_MS: '2500', RATE_LIMIT_RPS: '0' });
      const account = await fundedAccount(run, 'restart', '5');
      const recipients = ['@restart_one', '@restart_two', '@Restart_Three', '@test_failed'];
      const created = await Promise.all(recipients.map((recipient, i) => postOrder(first!.url, account.test_key, `d-${i}`, { product: 'stars', recipient, quantity: 50 })));
      for (const r of created) expect(r.status, JSON.stringify(r.body)).toBe(201);
      const ids = created.map((r) => r.body.id as string);

      const stoppedFirst = await first.stop('SIGTERM');
      expect(stoppedFirst.killed).toBe(false);
      expect({ code: stoppedFirst.code, signal: stoppedFirst.signal }, `stderr: ${stoppedFirst.stderr}`).toEqual({ code: 0, signal: null });

      // What the first server left behind: nothing final yet, no lease held.
      const db = await openDatabase({ dataDir: fresh.dataDir, databaseUrl: fresh.env.DATABASE_URL });
      try {
        const rows = await db.kysely.selectFrom('orders').select(['id', 'status', 'lease_owner']).where('id', 'in', ids).execute();
        expect(rows.length).toBe(ids.length);
        for (const row of rows) {
          expect(['fulfillment_pending', 'processing'], `order ${row.id} was ${row.status} before the restart`).toContain(row.status);
          expect(row.lease_owner, `order ${row.id} still leased after a graceful stop`).toBeNull();
        }
      } finally {
        await db.close();
      }

      second = await startServe({ ...fresh.env, TEST_FULFILMENT_DELAY_MS: '100', RATE_LIMIT_RPS: '0' });
      const base = second.url;
      const finals = await until(
        'the orders to reach a final status after the restart',
        async () => {
          const orders = await Promise.all(ids.map((id) => request(base, 'GET', `/orders/${id}`, account.test_key)));
          for (const o of orders) expect(o.status, JSON.stringify(o.body)).toBe(200);
          return orders.every((o) => o.body.status === 'delivered' || o.body.status === 'failed') ? orders.map((o) => o.body) : undefined;
        },
        20_000,
      );
      timings['(d) restart: create → stop → start → all final'] = performance.now() - started;

      expect(finals.map((o) => o.status)).toEqual(['delivered', 'delivered', 'delivered', 'failed']);
      expect(finals[3].failure_reason).toBe('upstream_error');
      for (const order of finals) {
        const types = order.events.map((e: { type: string }) => e.type);
        const last = order.status === 'delivered' ? 'order.delivered' : 'order.failed';
        expect(types, `events of ${order.id}`).toEqual(['order.created', 'order.processing', last]);
        expect(new Set(order.events.map((e: { id: string }) => e.id)).size).toBe(3);
      }
      // Three delivered, one released: 5 − 3 × 0.25.
      expect(await balance(base, account.test_key)).toEqual({ value: '4.25', reserved: '0', currency: 'TON' });
      expectLedgerClean(await ledgerVerify(run));

      const stoppedSecond = await second.stop('SIGINT');
      expect(stoppedSecond.killed).toBe(false);
      expect({ code: stoppedSecond.code, signal: stoppedSecond.signal }, `stderr: ${stoppedSecond.stderr}`).toEqual({ code: 0, signal: null });
      timings['(d) total'] = performance.now() - started;
    } finally {
      for (const s of [first, second]) {
        if (s && s.child.exitCode === null && s.child.signalCode === null) await s.stop('SIGKILL', 5_000);
      }
      await fresh.dispose();
    }
  });
});
