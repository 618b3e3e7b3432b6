import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { testEngine } from '../support/database.js';
import { type Harness, startHarness, type TestAccount } from '../support/harness.js';
import { REQUEST_ID } from '../support/http.js';

/**
 * Slow and hostile clients (docs/operations.md "Slow and hostile clients"): hundreds of
 * connections that trickle their headers or body a byte at a time, with and without an API key,
 * are answered 408 request_timeout (or, without a key, the 401 the headers already earn) and
 * closed within the configured limits, while a normal client's requests keep succeeding.
 * The limits are short here so that the suite is fast; production defaults are 10 s / 30 s.
 */
const HEADERS_MS = 1_000;
const REQUEST_MS = 2_000;
const KEEP_ALIVE_MS = 1_000;
/**
 * Enforcement runs on a sweep (a tenth of the headers limit here, 100 ms). On top of it comes
 * the delay of a process that holds clients, attackers and server on one event loop, on a
 * machine shared with other work: the measured event-loop delay is added, and the rest of the
 * margin covers accepting and reading 300 sockets at once (up to 1.3 s seen at a load average of
 * 12 on 2 cores). Without limits these connections are never closed at all.
 */
const MARGIN_MS = 2_000;
/** Node 20 closes an idle keep-alive connection this long after KEEP_ALIVE_TIMEOUT_MS. */
const NODE_KEEP_ALIVE_GRACE_MS = 1_000;
/** How often a trickling client sends its next byte: well inside any inactivity limit. */
const DRIP_MS = 200;

interface Outcome {
  /** Status of each answer read on the connection, in order. */
  statuses: number[];
  /** The first answer's body, parsed. */
  body: any;
  headers: string;
  /** From connect until the server closed the connection. */
  closedAfterMs: number;
  /** When it was closed (performance.now()). */
  closedAt: number;
}

/** Opens a connection, sends `prefix`, then one character of `drip` every DRIP_MS until the server closes. */
function trickle(h: Harness, prefix: string, drip = 'a'): Promise<Outcome> {
  const { hostname, port } = new URL(h.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname, port: Number(port) });
    const chunks: Buffer[] = [];
    let started = 0;
    let dripper: NodeJS.Timeout | undefined;
    // A connection the server never closes fails the test instead of hanging it.
    const deadline = setTimeout(() => socket.destroy(new Error('the server held the connection for 15 s')), 15_000);
    socket.on('connect', () => {
      started = performance.now();
      if (prefix) socket.write(prefix);
      dripper = setInterval(() => {
        if (socket.writable) socket.write(drip);
      }, DRIP_MS);
    });
    socket.on('data', (chunk) => chunks.push(chunk));
    // The server may reset a connection it closes while bytes are still arriving: the answer was read before.
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'ECONNRESET' && error.code !== 'EPIPE') reject(error);
    });
    socket.on('close', () => {
      const closedAt = performance.now();
      const closedAfterMs = closedAt - started;
      clearTimeout(deadline);
      clearInterval(dripper);
      resolve({ ...parseAnswers(Buffer.concat(chunks).toString('utf8')), closedAfterMs, closedAt });
    });
  });
}

function parseAnswers(text: string): Pick<Outcome, 'statuses' | 'body' | 'headers'> {
  const statuses: number[] = [];
  let body: any;
  let headers = '';
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    const head = rest.slice(0, end);
    const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
    statuses.push(Number(rest.slice(9, 12)));
    if (statuses.length === 1) {
      headers = head;
      body = JSON.parse(rest.slice(end + 4, end + 4 + length));
    }
    rest = rest.slice(end + 4 + length);
  }
  if (rest.length > 0) throw new Error(`unexpected bytes on the connection: ${JSON.stringify(rest.slice(0, 200))}`);
  return { statuses, body, headers };
}

function expectContractAnswer(outcome: Outcome, status: number, code: string): void {
  expect(outcome.statuses).toEqual([status]);
  expect(outcome.body).toMatchObject({ ok: false, error: { code } });
  expect(outcome.body.request_id).toMatch(REQUEST_ID);
  expect(outcome.headers).toMatch(new RegExp(`\\r\\nRequest-Id: ${outcome.body.request_id}(\\r\\n|$)`, 'i'));
}

const summary = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return { n: sorted.length, p50: Math.round(at(0.5)), p95: Math.round(at(0.95)), max: Math.round(sorted[sorted.length - 1] ?? NaN) };
};

describe(`slow clients (${testEngine})`, () => {
  let h: Harness;
  let attacker: TestAccount;
  let normal: TestAccount;
  beforeAll(async () => {
    h = await startHarness({
      HEADERS_TIMEOUT_MS: String(HEADERS_MS),
      REQUEST_TIMEOUT_MS: String(REQUEST_MS),
      KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_MS),
      // No per-key limit in the way: each attacking connection authenticates once.
      RATE_LIMIT_RPS: '0',
    });
    attacker = await h.account({ test: '1000' });
    normal = await h.account({ test: '1000' });
  });
  afterAll(() => h?.close());

  /** One normal request over the keep-alive pool (fetch); its latency in ms. */
  async function normalRequest(kind: 'balance' | 'order'): Promise<number> {
    const started = performance.now();
    const response =
      kind === 'balance'
        ? await fetch(`${h.url}/api/v1/balance`, { headers: { authorization: `Bearer ${normal.testKey}` } })
        : await fetch(`${h.url}/api/v1/orders`, {
            method: 'POST',
            headers: { authorization: `Bearer ${normal.testKey}`, 'content-type': 'application/json', 'idempotency-key': randomUUID() },
            body: JSON.stringify({ product: 'stars', recipient: '@durov', quantity: 50 }),
          });
    const body = (await response.json()) as { ok: boolean };
    expect(response.status, JSON.stringify(body)).toBe(kind === 'balance' ? 200 : 201);
    return performance.now() - started;
  }

  test('300 trickling connections are cut within the limits; a normal client is served throughout', async () => {
    // Baseline: the normal client alone.
    const baseline: number[] = [];
    for (let i = 0; i < 20; i++) baseline.push(await normalRequest(i % 2 === 0 ? 'balance' : 'order'));
    const ordersBefore = (await h.counts()).orders;

    const lag = monitorEventLoopDelay({ resolution: 10 });
    lag.enable();
    const auth = `Authorization: Bearer ${attacker.testKey}\r\n`;
    const body = (withKey: boolean) =>
      `POST /api/v1/orders HTTP/1.1\r\nHost: x\r\n${withKey ? auth : ''}Content-Type: application/json\r\nIdempotency-Key: ${randomUUID()}\r\nContent-Length: 200\r\n\r\n{"product":`;
    const groups = {
      // Headers that never end (a header value growing a byte at a time).
      headersNoKey: Array.from({ length: 100 }, () => trickle(h, 'GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nX-Slow: ')),
      headersWithKey: Array.from({ length: 50 }, () => trickle(h, `GET /api/v1/balance HTTP/1.1\r\nHost: x\r\n${auth}X-Slow: `)),
      // Connections that never send a byte.
      silent: Array.from({ length: 25 }, () => trickle(h, '', '')),
      // Complete headers, then a body a byte at a time.
      bodyWithKey: Array.from({ length: 100 }, () => trickle(h, body(true), ' ')),
      bodyNoKey: Array.from({ length: 25 }, () => trickle(h, body(false), ' ')),
    };
    const connections = Object.values(groups).reduce((n, group) => n + group.length, 0);
    expect(connections).toBe(300);

    // The normal client goes on while the attackers hold their sockets; it stops when they are cut.
    let attackOver = false;
    const all = Promise.all(Object.values(groups).flat()).finally(() => {
      attackOver = true;
    });
    const during: number[] = [];
    const finishedAt: number[] = [];
    const started = performance.now();
    while (!attackOver) {
      during.push(await normalRequest(during.length % 2 === 0 ? 'balance' : 'order'));
      finishedAt.push(performance.now());
    }
    const attackMs = performance.now() - started;
    const outcomes = {
      headersNoKey: await Promise.all(groups.headersNoKey),
      headersWithKey: await Promise.all(groups.headersWithKey),
      silent: await Promise.all(groups.silent),
      bodyWithKey: await Promise.all(groups.bodyWithKey),
      bodyNoKey: await Promise.all(groups.bodyNoKey),
    };
    await all;
    lag.disable();
    const lagMs = lag.max / 1e6;
    const within = (limit: number) => limit + MARGIN_MS + lagMs;

    for (const outcome of [...outcomes.headersNoKey, ...outcomes.headersWithKey, ...outcomes.silent]) {
      expectContractAnswer(outcome, 408, 'request_timeout');
      expect(outcome.closedAfterMs).toBeGreaterThanOrEqual(HEADERS_MS * 0.5);
      expect(outcome.closedAfterMs).toBeLessThanOrEqual(within(HEADERS_MS));
    }
    for (const outcome of outcomes.bodyWithKey) {
      expectContractAnswer(outcome, 408, 'request_timeout');
      expect(outcome.closedAfterMs).toBeGreaterThanOrEqual(REQUEST_MS * 0.5);
      expect(outcome.closedAfterMs).toBeLessThanOrEqual(within(REQUEST_MS));
    }
    // Without a key the headers already earn a 401 (authentication comes before the body); the
    // connection is still cut at the request limit, with no second answer.
    for (const outcome of outcomes.bodyNoKey) {
      expectContractAnswer(outcome, 401, 'missing_api_key');
      expect(outcome.closedAfterMs).toBeGreaterThanOrEqual(REQUEST_MS * 0.5);
      expect(outcome.closedAfterMs).toBeLessThanOrEqual(within(REQUEST_MS));
    }

    // Every normal request succeeded (normalRequest asserts it) and none waited for the attackers
    // to be cut: requests completed while the 100 keyed bodies were still held, and none took as
    // long as the body limit that holds them. (Not "before the first cut": client, attackers and
    // server share one process, and on a starved machine setting up 300 sockets alone can take
    // a second.)
    const bodiesCut = Math.min(...outcomes.bodyWithKey.map((o) => o.closedAt));
    const timeline = `attack from ${Math.round(started)}, keyed bodies cut from ${Math.round(bodiesCut)}, normal requests done at ${finishedAt.map(Math.round).join(' ')}`;
    expect(finishedAt.filter((at) => at < bodiesCut).length, timeline).toBeGreaterThanOrEqual(5);
    expect(Math.max(...during)).toBeLessThan(REQUEST_MS);
    // Only the normal client's orders were created: no trickled body became an order.
    expect((await h.counts()).orders).toBe(ordersBefore + Math.floor(during.length / 2));

    const closed = (group: Outcome[]) => summary(group.map((o) => o.closedAfterMs));
    console.log(
      `[slow-clients ${testEngine}] ${connections} connections; 408: ${[...outcomes.headersNoKey, ...outcomes.headersWithKey, ...outcomes.silent, ...outcomes.bodyWithKey].length}, ` +
        `401 then closed: ${outcomes.bodyNoKey.length}; closed after (ms) headers ${JSON.stringify(closed([...outcomes.headersNoKey, ...outcomes.headersWithKey]))}, ` +
        `silent ${JSON.stringify(closed(outcomes.silent))}, body ${JSON.stringify(closed(outcomes.bodyWithKey))}, body without key ${JSON.stringify(closed(outcomes.bodyNoKey))}; ` +
        `normal client: baseline ${JSON.stringify(summary(baseline))} ms, under attack ${JSON.stringify(summary(during))} ms over ${Math.round(attackMs)} ms; ` +
        `event loop delay max ${Math.round(lagMs)} ms`,
    );
  });

  test('an idle keep-alive connection is closed after KEEP_ALIVE_TIMEOUT_MS, with no answer of its own', async () => {
    const outcome = await trickle(h, `GET /api/v1/balance HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${normal.testKey}\r\n\r\n`, '');
    expect(outcome.statuses).toEqual([200]);
    expect(outcome.closedAfterMs).toBeGreaterThanOrEqual(KEEP_ALIVE_MS * 0.5);
    console.log(`[slow-clients ${testEngine}] idle keep-alive closed after ${Math.round(outcome.closedAfterMs)} ms (limit ${KEEP_ALIVE_MS} ms)`);
    // Node closes a second after the time it announces (`Keep-Alive: timeout=1`), so that a client
    // honouring the announcement never sends on a connection being closed.
    expect(outcome.headers).toMatch(/\r\nKeep-Alive: timeout=1(\r\n|$)/i);
    expect(outcome.closedAfterMs).toBeLessThanOrEqual(KEEP_ALIVE_MS + NODE_KEEP_ALIVE_GRACE_MS + MARGIN_MS);
  });
});

describe(`the connection cap (${testEngine})`, () => {
  const MAX = 20;
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ MAX_CONNECTIONS: String(MAX), HEADERS_TIMEOUT_MS: '60000', REQUEST_TIMEOUT_MS: '60000' });
  });
  afterAll(() => h?.close());

  const connect = () =>
    new Promise<net.Socket>((resolve, reject) => {
      const { hostname, port } = new URL(h.url);
      const socket = net.connect({ host: hostname, port: Number(port) }, () => resolve(socket));
      socket.on('error', reject);
    });

  /** GET /healthz on a new connection: the answer, once the server closes or answers in full. */
  const probe = () => trickle(h, 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', '');

  test('beyond MAX_CONNECTIONS a new connection is answered 503 with Retry-After and closed; freed slots serve again', async () => {
    const held = await Promise.all(Array.from({ length: MAX }, connect));
    try {
      const refused = await probe();
      expectContractAnswer(refused, 503, 'service_unavailable');
      expect(refused.headers).toMatch(/\r\nRetry-After: 1(\r\n|$)/i);
      expect(refused.closedAfterMs).toBeLessThan(MARGIN_MS);
    } finally {
      for (const socket of held) socket.destroy();
    }
    // The held connections' slots come back as the server sees them close.
    const deadline = Date.now() + 5_000;
    let served = await probe();
    while (served.statuses[0] !== 200 && Date.now() < deadline) served = await probe();
    expect(served.statuses).toEqual([200]);
  });
});
