import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { type CliResult, describeRun, makeTempDir, parseJsonStdout, pool, removeDir, runCli } from '../support/cli.js';
import { type FreshDatabase, freshDatabase, testEngine } from '../support/database.js';
import { pollUntil } from '../support/http.js';
import { type ServeExit, type ServeProcess, startServe } from '../support/serve-process.js';
import { closedPort, type HangServer, startHangServer, startTcpRelay, type TcpRelay } from '../support/tcp-hang-server.js';

/**
 * Start-up and shutdown with the database unreachable (docs/operations.md "Start-up and
 * shutdown"): `bin/starport` as the operator runs it. Start-up against a closed port or a
 * server that never answers fails after DATABASE_CONNECT_TIMEOUT_S with exit 3 and one line
 * on stderr that names what it could not reach and no credentials; an unusable SQLite DATA_DIR
 * fails at once. SIGTERM drains in-flight requests and exits 0; with the database hung or gone
 * it exits within SHUTDOWN_TIMEOUT_S all the same; a second signal exits at once.
 */

/** What the process start itself may add to a time bound on a loaded 2-core machine. */
const MARGIN_MS = 5_000;
const PASSWORD = 'pw-n0t-for-logs';
const USER = 'starport_user';

function expectOneLine(result: CliResult, pattern: RegExp, what: string, { userShown = false } = {}): void {
  const context = `${what}\n${describeRun([what], result)}`;
  expect(result.code, context).toBe(3);
  expect(result.stderr.endsWith('\n'), context).toBe(true);
  expect(result.stderr.trimEnd().split('\n'), context).toHaveLength(1);
  expect(result.stderr, context).toMatch(pattern);
  // No stack trace, and neither the password nor the user of the URL.
  expect(result.stderr, context).not.toMatch(/^\s+at /m);
  expect(result.stderr + result.stdout, context).not.toContain(PASSWORD);
  if (!userShown) expect(result.stderr, context).not.toContain(USER);
}

describe('start-up with PostgreSQL unreachable', () => {
  let dataDir: string;
  let hung: HangServer;
  beforeAll(async () => {
    dataDir = makeTempDir('starport-lifecycle-');
    hung = await startHangServer();
  });
  afterAll(async () => {
    removeDir(dataDir);
    await hung?.close();
  });

  const env = (port: number, timeoutS?: number) => ({
    DATA_DIR: dataDir,
    DATABASE_URL: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/starport?application_name=lifecycle`,
    DATABASE_CONNECT_TIMEOUT_S: timeoutS === undefined ? undefined : String(timeoutS),
    LOG_LEVEL: 'info',
  });

  test('a closed port: serve and the CLI commands fail after the timeout, in one line, exit 3', async () => {
    const port = await closedPort();
    const runs: Array<{ args: string[]; timeoutS: number; configured: boolean }> = [
      { args: ['serve'], timeoutS: 2, configured: true },
      { args: ['account', 'list'], timeoutS: 1, configured: true },
      { args: ['ledger', 'verify', '--json'], timeoutS: 1, configured: true },
      { args: ['migrate'], timeoutS: 1, configured: true },
      // The CLI's default, DATABASE_CONNECT_TIMEOUT_S unset: 5 s.
      { args: ['order', 'list'], timeoutS: 5, configured: false },
    ];
    // Two at a time: process start-up on a busy machine is not what the bounds measure.
    const results = await pool(runs, 2, (run) => runCli(run.args, { env: env(port, run.configured ? run.timeoutS : undefined), timeoutMs: 30_000 }));
    runs.forEach((run, i) => {
      const result = results[i] as CliResult;
      const what = run.args.join(' ');
      expectOneLine(result, new RegExp(`^error: cannot reach the database at postgres://127\\.0\\.0\\.1:${port}/starport \\(ECONNREFUSED\\) after ${run.timeoutS} s\\n$`), what);
      expect(result.durationMs, what).toBeGreaterThanOrEqual(run.timeoutS * 1000);
      expect(result.durationMs, what).toBeLessThan(run.timeoutS * 1000 + MARGIN_MS);
      console.log(`closed port: starport ${what} → exit ${result.code} after ${Math.round(result.durationMs)} ms (timeout ${run.timeoutS} s)`);
    });
    // --json: the failure as one JSON document too.
    expect(parseJsonStdout(results[2] as CliResult)).toEqual({ ok: false, error: { message: expect.stringMatching(/^cannot reach the database at /) } });
    // serve says it is waiting (a log line on stdout) and never that it listens.
    expect(results[0]?.stdout).toMatch(/the database cannot be reached yet; still trying/);
    expect(results[0]?.stdout).not.toMatch(/listening on/);
  });

  test('a server that accepts and never answers: the same, "(no answer)"', async () => {
    const runs = [
      { args: ['serve'], timeoutS: 2 },
      { args: ['account', 'list'], timeoutS: 1 },
    ];
    const before = hung.accepted();
    const results = await Promise.all(runs.map((run) => runCli(run.args, { env: env(hung.port, run.timeoutS), timeoutMs: 30_000 })));
    runs.forEach((run, i) => {
      const result = results[i] as CliResult;
      const what = run.args.join(' ');
      expectOneLine(result, new RegExp(`^error: cannot reach the database at postgres://127\\.0\\.0\\.1:${hung.port}/starport \\(no answer\\) after ${run.timeoutS} s\\n$`), what);
      expect(result.durationMs, what).toBeGreaterThanOrEqual(run.timeoutS * 1000);
      expect(result.durationMs, what).toBeLessThan(run.timeoutS * 1000 + MARGIN_MS);
      console.log(`no answer: starport ${what} → exit ${result.code} after ${Math.round(result.durationMs)} ms (timeout ${run.timeoutS} s)`);
    });
    expect(hung.accepted() - before, 'the commands did connect to the silent server').toBeGreaterThanOrEqual(runs.length);
  });

  test.skipIf(testEngine !== 'postgres')('a server that answers with a refusal (no such database): at once, in one line', async () => {
    const url = new URL(process.env.TEST_DATABASE_URL as string);
    url.username = USER;
    url.password = PASSWORD;
    url.pathname = '/starport_lifecycle_no_such_database';
    const result = await runCli(['account', 'list'], { env: { DATA_DIR: dataDir, DATABASE_URL: url.toString(), DATABASE_CONNECT_TIMEOUT_S: '30' } });
    // The server refuses (no such role, or no such database) and waiting would not help. Its
    // own message may name the user; never the password.
    expectOneLine(result, /^error: the database at postgres:\/\/127\.0\.0\.1:\d+\/starport_lifecycle_no_such_database refused the connection: .+\n$/, 'account list', {
      userShown: true,
    });
    expect(result.durationMs).toBeLessThan(MARGIN_MS);
  });
});

if (testEngine !== 'postgres') console.log('lifecycle: the refusal by a live PostgreSQL server and the hung-database shutdowns need the postgres project (TEST_DATABASE_URL)');

describe('start-up with an unusable SQLite DATA_DIR', () => {
  let parent: string;
  beforeAll(() => {
    parent = makeTempDir('starport-lifecycle-');
    // A regular file where a folder should be: mkdir fails (ENOTDIR), even for root.
    fs.writeFileSync(path.join(parent, 'file'), 'not a folder');
  });
  afterAll(() => removeDir(parent));

  test('serve and a CLI command fail at once, in one line, exit 3', async () => {
    const dataDir = path.join(parent, 'file', 'data');
    const runs = [['serve'], ['account', 'list']];
    const results = await Promise.all(runs.map((args) => runCli(args, { env: { DATA_DIR: dataDir, LOG_LEVEL: 'info' } })));
    runs.forEach((args, i) => {
      const result = results[i] as CliResult;
      expectOneLine(
        result,
        new RegExp(`^error: cannot open the SQLite database in ${dataDir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(ENOTDIR: not a directory\\)\\n$`),
        args.join(' '),
      );
      expect(result.durationMs).toBeLessThan(MARGIN_MS);
      console.log(`unusable DATA_DIR: starport ${args.join(' ')} → exit ${result.code} after ${Math.round(result.durationMs)} ms`);
    });
  });
});

/** A request whose body is still on its way: in flight until `finish()` sends the rest. */
interface HeldRequest {
  /** The server has read the request's head (it answered 100 Continue): the request is in flight. */
  received: Promise<void>;
  finish(): void;
  answer: Promise<{ status: number; body: string }>;
}

function holdRequest(url: string, key: string): HeldRequest {
  const body = JSON.stringify({ product: 'stars', recipient: '@durov', quantity: 50 });
  const request = http.request(`${url}/api/v1/orders`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
      'idempotency-key': `lifecycle-${Date.now()}`,
      expect: '100-continue',
    },
  });
  const received = new Promise<void>((resolve) => request.once('continue', () => resolve()));
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    request.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
  // Caught here so that a test that never finishes the request sees no unhandled rejection.
  answer.catch(() => undefined);
  request.flushHeaders();
  void received.then(() => request.write(body.slice(0, 10)));
  return { received, finish: () => void received.then(() => request.end(body.slice(10))), answer };
}

const SHUTTING_DOWN = /"msg":"shutting down: finishing in-flight requests"/;

/** Sends `signal` and times the exit (killed with SIGKILL, and reported so, after `killAfterMs`). */
async function signalAndTime(serve: ServeProcess, signal: NodeJS.Signals, killAfterMs = 30_000): Promise<ServeExit & { ms: number }> {
  const started = performance.now();
  const exit = await serve.stop(signal, killAfterMs);
  return { ...exit, ms: performance.now() - started };
}

async function waitForShutdownStart(serve: ServeProcess): Promise<void> {
  await pollUntil(
    async () => serve.output().stdout,
    (stdout) => SHUTTING_DOWN.test(stdout),
    { timeoutMs: 10_000, what: 'the shutdown log line' },
  );
}

describe(`shutdown (${testEngine})`, () => {
  let database: FreshDatabase;
  let testKey: string;
  let serve: ServeProcess | undefined;
  let relay: TcpRelay | undefined;

  beforeAll(async () => {
    database = await freshDatabase();
    const created = await runCli(['account', 'create', '--email', 'lifecycle@example.com', '--json'], { env: database.env });
    testKey = parseJsonStdout(created).test_key;
    const credited = await runCli(['balance', 'credit', '--account', parseJsonStdout(created).account_id, '--mode', 'test', '--amount', '100', '--reason', 'lifecycle'], {
      env: database.env,
    });
    expect(credited.code, describeRun(['balance', 'credit'], credited)).toBe(0);
  });
  afterEach(async () => {
    await serve?.stop('SIGKILL');
    serve = undefined;
    await relay?.close();
    relay = undefined;
  });
  afterAll(async () => {
    await database?.dispose();
  });

  const start = (extra: Record<string, string> = {}) => startServe({ ...database.env, LOG_LEVEL: 'info', SHUTDOWN_TIMEOUT_S: '2', ...extra });

  test('SIGTERM as soon as "listening on" is printed: exits 0 (the handlers come first)', async () => {
    serve = await start();
    const exit = await signalAndTime(serve, 'SIGTERM');
    expect(exit.code, `${exit.signal}\n${exit.stdout}${exit.stderr}`).toBe(0);
    expect(exit.ms).toBeLessThan(MARGIN_MS);
    console.log(`${testEngine}: SIGTERM, idle → exit 0 after ${Math.round(exit.ms)} ms`);
  });

  test('SIGTERM lets an in-flight request finish, then exits 0', async () => {
    serve = await start();
    const held = holdRequest(serve.url, testKey);
    await held.received;
    const exiting = signalAndTime(serve, 'SIGTERM');
    await waitForShutdownStart(serve);
    held.finish();
    const answer = await held.answer;
    expect(answer.status, answer.body).toBe(201);
    const exit = await exiting;
    expect(exit.code, exit.stdout + exit.stderr).toBe(0);
    expect(exit.killed).toBe(false);
    expect(exit.ms).toBeLessThan(2_000 + MARGIN_MS);
    expect(exit.stderr).toBe('');
    console.log(`${testEngine}: SIGTERM with a request in flight → exit 0 after ${Math.round(exit.ms)} ms`);
  });

  test('a request that never finishes: SIGTERM exits with 1 at SHUTDOWN_TIMEOUT_S', async () => {
    serve = await start();
    const held = holdRequest(serve.url, testKey);
    await held.received;
    const exit = await signalAndTime(serve, 'SIGTERM');
    expect(exit.code, exit.stdout + exit.stderr).toBe(1);
    expect(exit.killed).toBe(false);
    expect(exit.ms).toBeGreaterThanOrEqual(2_000);
    expect(exit.ms).toBeLessThan(2_000 + MARGIN_MS);
    expect(exit.stdout).toMatch(/shutdown did not finish within 2 s; exiting/);
    await expect(held.answer).rejects.toThrow();
    console.log(`${testEngine}: SIGTERM with a request held open → exit 1 after ${Math.round(exit.ms)} ms (SHUTDOWN_TIMEOUT_S=2)`);
  });

  test.each([
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)('a second signal (%s) exits at once with %i', async (second, code) => {
    serve = await start({ SHUTDOWN_TIMEOUT_S: '60' });
    await holdRequest(serve.url, testKey).received;
    serve.child.kill('SIGTERM');
    await waitForShutdownStart(serve);
    const exit = await signalAndTime(serve, second);
    expect(exit.code, exit.stdout + exit.stderr).toBe(code);
    expect(exit.killed).toBe(false);
    expect(exit.ms).toBeLessThan(MARGIN_MS);
    expect(exit.stdout).toMatch(/second signal: exiting at once/);
    console.log(`${testEngine}: second signal ${second} → exit ${exit.code} after ${Math.round(exit.ms)} ms`);
  });

  async function startBehindRelay(): Promise<ServeProcess> {
    const target = new URL(database.env.DATABASE_URL as string);
    relay = await startTcpRelay({ host: target.hostname, port: Number(target.port || 5432) });
    target.hostname = '127.0.0.1';
    target.port = String(relay.port);
    return start({ DATABASE_URL: target.toString() });
  }

  test.skipIf(testEngine !== 'postgres')('PostgreSQL hangs: SIGTERM exits with 1 within SHUTDOWN_TIMEOUT_S', async () => {
    serve = await startBehindRelay();
    relay!.hang();
    // A request that needs the database, stuck with it.
    const stuck = fetch(`${serve.url}/api/v1/balance`, { headers: { authorization: `Bearer ${testKey}` } }).catch((error: unknown) => error);
    const exit = await signalAndTime(serve, 'SIGTERM');
    expect(exit.code, exit.stdout + exit.stderr).toBe(1);
    expect(exit.killed).toBe(false);
    expect(exit.ms).toBeLessThan(2_000 + MARGIN_MS);
    expect(exit.stdout).toMatch(/shutdown did not finish within 2 s; exiting/);
    await stuck;
    console.log(`postgres hung: SIGTERM → exit ${exit.code} after ${Math.round(exit.ms)} ms (SHUTDOWN_TIMEOUT_S=2)`);
  });

  test.skipIf(testEngine !== 'postgres')('PostgreSQL host gone (open connections silent, new ones refused): SIGTERM exits with 1 within SHUTDOWN_TIMEOUT_S', async () => {
    serve = await startBehindRelay();
    await relay!.vanish();
    const exit = await signalAndTime(serve, 'SIGTERM');
    expect(exit.code, `${exit.signal} ${exit.killed}\n${exit.stdout}${exit.stderr}`).toBe(1);
    expect(exit.killed).toBe(false);
    expect(exit.ms).toBeLessThan(2_000 + MARGIN_MS);
    expect(exit.stderr).toBe('');
    console.log(`postgres host gone: SIGTERM → exit ${exit.code} after ${Math.round(exit.ms)} ms (SHUTDOWN_TIMEOUT_S=2)`);
  });
});
