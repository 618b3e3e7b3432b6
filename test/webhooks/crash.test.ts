import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { parseTon } from '../../src/domain/money.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { type FreshDatabase, freshDatabase } from '../support/database.js';
import { pollUntil } from '../support/http.js';
import { type ServeProcess, startServe } from '../support/serve-process.js';
import { independentlyVerified, type Receiver, startReceiver } from '../support/webhook-receiver.js';

/**
 * At-least-once: a worker killed (SIGKILL) while the receiver holds its request open loses
 * nothing. Its claim runs out and another worker process sends the message again, with the same
 * webhook-id. Real processes (bin/starport serve, built dist/) on one database.
 */
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

let database: FreshDatabase;
let db: Db;
let receiver: Receiver;
const processes: ServeProcess[] = [];

beforeAll(async () => {
  database = await freshDatabase();
  receiver = await startReceiver();
});
afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop('SIGKILL')));
  await db?.close();
  await receiver?.close();
  await database?.dispose();
});

const env = () => ({
  ...database.env,
  WEBHOOK_ALLOW_LOOPBACK: '1',
  WEBHOOK_TIMEOUT_MS: '2000',
  WORKER_LEASE_MS: '500',
  // Every node then writes the same status_url (without it each uses its own bound address).
  PUBLIC_URL: 'https://starport.example',
  // The order stays in its first states: only order.created matters here.
  TEST_FULFILMENT_DELAY_MS: '60000',
});

async function api(base: string, path: string, key: string, json?: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}/api/v1${path}`, {
    method: json === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, ...(json !== undefined && { 'content-type': 'application/json' }), ...headers },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  return { status: response.status, body: (await response.json()) as any };
}

test('a worker killed mid-delivery: the event still arrives, with the same webhook-id and a valid signature', async () => {
  const first = await startServe(env());
  processes.push(first);
  db = await openDatabase({ dataDir: database.dataDir, databaseUrl: database.env.DATABASE_URL });
  const account = await createAccount(db, `crash-${Date.now()}@example.com`);
  await adjustBalance(db, { accountId: account.accountId, mode: 'test', amount: parseTon('10'), reason: 'test funding' });

  const endpoint = await api(first.url, '/webhook_endpoints', account.testKey, { url: receiver.url, events: ['order.created'] });
  expect(endpoint.status, JSON.stringify(endpoint.body)).toBe(201);
  receiver.script.push('hang');
  const order = await api(first.url, '/orders', account.testKey, { product: 'stars', recipient: '@crashtest', quantity: 50 }, { 'idempotency-key': 'crash-1' });
  expect(order.status).toBe(201);

  await pollUntil(
    async () => receiver.held(),
    (n) => n === 1,
    { what: 'the receiver to hold the first delivery' },
  );
  await first.stop('SIGKILL');
  const inFlight = await db.kysely.selectFrom('webhook_messages').selectAll().executeTakeFirstOrThrow();
  expect(inFlight).toMatchObject({ status: 'pending', event_type: 'order.created' });
  expect(Number(inFlight.attempts)).toBe(1);
  expect(await db.kysely.selectFrom('webhook_attempts').selectAll().execute(), 'the killed worker logged nothing').toEqual([]);

  const second = await startServe(env(), 20_000, ['--role', 'worker']);
  processes.push(second);
  const received = await pollUntil(
    async () => [...receiver.received],
    (list) => list.length === 2,
    { timeoutMs: 20_000, what: 'the redelivery' },
  );
  expect(received[1]!.headers['webhook-id']).toBe(received[0]!.headers['webhook-id']);
  expect(received[1]!.headers['webhook-id']).toBe(inFlight.id);
  expect(received[1]!.json).toEqual(received[0]!.json);
  expect(received[1]!.json).toMatchObject({
    type: 'order.created',
    data: { order: { id: order.body.id, status: 'fulfillment_pending', status_url: `https://starport.example/api/v1/orders/${order.body.id}` } },
  });
  for (const delivery of received) expect(independentlyVerified(delivery, endpoint.body.secret)).toBe(true);

  const done = await pollUntil(
    () => db.kysely.selectFrom('webhook_messages').selectAll().where('id', '=', inFlight.id).executeTakeFirstOrThrow(),
    (m) => m.status === 'succeeded',
    { what: 'the message to be recorded as delivered' },
  );
  expect(Number(done.attempts)).toBe(2);
  const attempts = await db.kysely.selectFrom('webhook_attempts').selectAll().execute();
  expect(attempts.map((a) => [Number(a.attempt), a.outcome])).toEqual([[2, 'succeeded']]);
});
