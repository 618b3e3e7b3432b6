import { afterAll, beforeAll, expect, test } from 'vitest';
import { enqueueTestEvent } from '../../src/webhooks/outbox.js';
import { findEndpoint } from '../../src/webhooks/endpoints.js';
import { testEngine } from '../support/database.js';
import { type DnsServer, startDnsServer } from '../support/dns-server.js';
import { type Harness, startHarness, type TestAccount } from '../support/harness.js';
import { call, expectOk, pollUntil, postOrder } from '../support/http.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

/**
 * Webhook fairness under a slow receiver and a dead name server (docs/api.md "Delivery, retries
 * and ordering"; docs/architecture.md "Webhooks"). One client's endpoint answers only after
 * 10 s (the default delivery timeout) and has 50 messages queued; another's host name stops
 * resolving (its DNS server goes silent). A third client's deliveries must each arrive within
 * 1 s of their event, and a fourth client can still create an endpoint whose name must be
 * looked up. The service runs with its default timeout, concurrency (8 per process, 2 per
 * endpoint) and retry schedule, and looks webhook names up with a DNS server on loopback that
 * the test controls (WEBHOOK_DNS_SERVERS).
 */

const SLOW_BACKLOG = 50;
const DEAD_BACKLOG = 20;
const FAST_ORDERS = 6;
/** order.created, order.processing and order.delivered of each test order. */
const FAST_DELIVERIES = FAST_ORDERS * 3;
const BOUND_MS = 1_000;

let h: Harness;
let dns: DnsServer;
let slow: Receiver;
let fast: Receiver;

beforeAll(async () => {
  dns = await startDnsServer();
  for (const name of ['slow.fair.test', 'dead.fair.test', 'fast.fair.test', 'new.fair.test']) dns.names.set(name, ['127.0.0.1']);
  slow = await startReceiver();
  slow.fallback = { status: 200, delayMs: 10_000 };
  fast = await startReceiver();
  h = await startHarness({
    WEBHOOK_ALLOW_LOOPBACK: '1',
    WEBHOOK_DNS_SERVERS: dns.address,
    // Leases far longer than any delivery, however busy the machine.
    WORKER_LEASE_MS: '30000',
  });
});

afterAll(async () => {
  // The slow receiver's connections close first: its deliveries in flight end at once, and
  // the service stops after the dead name's lookups end (5 s each at most).
  await slow?.close();
  await fast?.close();
  await h?.close();
  await dns?.close();
});

/** An endpoint (test mode) at `host`, port of `receiver`, through the API. */
async function endpointAt(account: TestAccount, host: string, receiver: Receiver) {
  const port = new URL(receiver.url).port;
  const started = performance.now();
  const res = await call(h, { method: 'POST', path: '/webhook_endpoints', key: account.testKey, json: { url: `http://${host}:${port}/hooks/${account.accountId}` } });
  return { res, ms: Math.round(performance.now() - started) };
}

async function enqueue(account: TestAccount, endpointId: string, count: number): Promise<void> {
  const row = (await findEndpoint(h.service.db.kysely, endpointId, { accountId: account.accountId, mode: 'test' }))!;
  for (let i = 0; i < count; i++) await enqueueTestEvent(h.service.db.kysely, row, Date.now());
}

/** Deliveries in flight (a live lease) per endpoint, now. */
async function inFlight(): Promise<Map<string, number>> {
  const rows = await h.service.db.kysely
    .selectFrom('webhook_messages')
    .select(['endpoint_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('status', '=', 'pending')
    .where('lease_until', '>=', BigInt(Date.now()))
    .groupBy('endpoint_id')
    .execute();
  return new Map(rows.map((row) => [row.endpoint_id, Number(row.n)]));
}

test(`a receiver answering after 10 s (${SLOW_BACKLOG} queued) and a name that never resolves hold up no other client: each of its deliveries arrives within ${BOUND_MS} ms of its event`, async () => {
  const slowClient = await h.account();
  const deadClient = await h.account();
  const fastClient = await h.account({ test: '100' });
  const newClient = await h.account();

  const slowEndpoint = await endpointAt(slowClient, 'slow.fair.test', slow);
  const deadEndpoint = await endpointAt(deadClient, 'dead.fair.test', fast);
  const fastEndpoint = await endpointAt(fastClient, 'fast.fair.test', fast);
  for (const { res } of [slowEndpoint, deadEndpoint, fastEndpoint]) expectOk(res, 201);

  // The dead client's name server stops answering; then both backlogs are queued.
  dns.names.set('dead.fair.test', 'silent');
  const deadQuestionsBefore = dns.questions.filter((q) => q.endsWith(' dead.fair.test')).length;
  await enqueue(slowClient, slowEndpoint.res.body.id, SLOW_BACKLOG);
  await enqueue(deadClient, deadEndpoint.res.body.id, DEAD_BACKLOG);
  await pollUntil(
    async () => ({ slow: slow.received.length, asked: dns.questions.filter((q) => q.endsWith(' dead.fair.test')).length - deadQuestionsBefore }),
    (state) => state.slow >= 2 && state.asked >= 2,
    { what: 'the slow receiver holding deliveries and the dead name being asked' },
  );

  // Meanwhile another client creates an endpoint whose name must be looked up.
  const created = await endpointAt(newClient, 'new.fair.test', fast);
  expectOk(created.res, 201);

  const stall = { most: new Map<string, number>() };
  const sample = async () => {
    for (const [endpoint, n] of await inFlight()) stall.most.set(endpoint, Math.max(stall.most.get(endpoint) ?? 0, n));
  };
  const orders: string[] = [];
  for (let i = 0; i < FAST_ORDERS; i++) {
    const order = await postOrder(h, fastClient.testKey, { product: 'stars', recipient: `@fair_${i}`, quantity: 50 });
    expectOk(order, 201);
    orders.push(order.body.id);
    await sample();
  }
  const byFast = () => fast.received.filter((r) => r.path === `/hooks/${fastClient.accountId}`);
  await pollUntil(
    async () => {
      await sample();
      return byFast().length;
    },
    (n) => n >= FAST_DELIVERIES,
    { timeoutMs: 20_000, what: `${FAST_DELIVERIES} deliveries to the fast client` },
  );
  const latencies = byFast().map((r) => ({ type: r.json.type as string, order: r.json.data.order.id as string, ms: r.at - Date.parse(r.json.created_at) }));
  expect(new Set(latencies.map((l) => `${l.order} ${l.type}`)).size).toBe(FAST_DELIVERIES);
  const late = latencies.filter((l) => l.ms > BOUND_MS);
  expect(late, `deliveries later than ${BOUND_MS} ms after their event: ${JSON.stringify(late)} of ${JSON.stringify(latencies)}`).toEqual([]);

  // The slow and the dead endpoint each had at most 2 deliveries in flight, and still do.
  expect(slow.mostOpen()).toBe(2);
  expect(stall.most.get(slowEndpoint.res.body.id)).toBeLessThanOrEqual(2);
  expect(stall.most.get(deadEndpoint.res.body.id)).toBeLessThanOrEqual(2);
  expect([...stall.most.values()].reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(8);
  // Nothing reached the dead client's receiver; its attempts end "did not resolve in time".
  expect(fast.received.filter((r) => r.path === `/hooks/${deadClient.accountId}`)).toEqual([]);
  const deadAttempts = await pollUntil(
    () => h.service.db.kysely.selectFrom('webhook_attempts').select(['error', 'duration_ms']).where('endpoint_id', '=', deadEndpoint.res.body.id).execute(),
    (rows) => rows.length >= 1,
    { timeoutMs: 15_000, what: "the dead name's first attempt" },
  );
  expect(deadAttempts[0]!.error).toBe('refused: dead.fair.test did not resolve in time');

  const sorted = latencies.map((l) => l.ms).sort((a, b) => a - b);
  console.log(
    `[${testEngine}] webhook fairness: ${FAST_DELIVERIES} fast-client deliveries, latency after their event median ${sorted[Math.floor(sorted.length / 2)]} ms, max ${sorted.at(-1)} ms (bound ${BOUND_MS}); ` +
      `slow receiver open at most ${slow.mostOpen()} (of ${SLOW_BACKLOG} queued), in flight at most ${JSON.stringify(Object.fromEntries([...stall.most].map(([id, n]) => [id === slowEndpoint.res.body.id ? 'slow' : id === deadEndpoint.res.body.id ? 'dead' : 'other', n])))}; ` +
      `endpoint created during the stall in ${created.ms} ms; dead name's attempt failed after ${Number(deadAttempts[0]!.duration_ms)} ms: ${deadAttempts[0]!.error}`,
  );
}, 60_000);
