import { verifyWebhook } from '@starport/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { enqueueTestEvent, pruneMessages } from '../../src/webhooks/outbox.js';
import { createEndpoint as addEndpoint, findEndpoint, rotateSecret } from '../../src/webhooks/endpoints.js';
import { type Harness, startHarness, type TestAccount } from '../support/harness.js';
import { call, EVENT_ID, expectError, expectOk, ORDER_ID, pollUntil, postOrder, TIMESTAMP, waitForStatus } from '../support/http.js';
import { accountIdOf, signedUp } from '../support/web.js';
import { independentlyVerified, type Receiver, startReceiver } from '../support/webhook-receiver.js';

/**
 * Webhooks end to end over real sockets: the service's worker POSTs to a receiver on loopback
 * (test mode, WEBHOOK_ALLOW_LOOPBACK=1), with short retry delays and timeout so retries take
 * milliseconds, not minutes.
 */

const TIMEOUT_MS = 800;
let h: Harness;
let receiver: Receiver;

beforeAll(async () => {
  h = await startHarness({
    WEBHOOK_ALLOW_LOOPBACK: '1',
    WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
    WEBHOOK_RETRY_DELAYS_MS: '30,30,30',
    WEBHOOK_DISABLE_AFTER_MS: '0',
    // Leases far longer than any delivery, however busy the machine: a lease that ran out
    // mid-delivery would rightly let another dispatcher send the message again.
    WORKER_LEASE_MS: '30000',
  });
});
afterAll(async () => {
  await h?.close();
});
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
});
afterEach(() => {
  receiver.received.length = 0;
  receiver.script.length = 0;
  receiver.fallback = { status: 200, body: '{"received":true}' };
});

const createEndpoint = (key: string, json: unknown) => call(h, { method: 'POST', path: '/webhook_endpoints', key, json });
const listEndpoints = (key: string) => call(h, { path: '/webhook_endpoints', key });

async function endpointFor(account: TestAccount, events?: string[], url = receiver.url): Promise<{ id: string; secret: string }> {
  const res = await createEndpoint(account.testKey, { url: `${url}?account=${account.accountId}`, ...(events && { events }) });
  expectOk(res, 201);
  return { id: res.body.id, secret: res.body.secret };
}

/** The deliveries this account's endpoints received so far. */
const receivedBy = (account: TestAccount) => receiver.received.filter((r) => r.path.includes(account.accountId));

async function waitForDeliveries(account: TestAccount, count: number, what = `${count} deliveries`) {
  return pollUntil(
    async () => receivedBy(account),
    (list) => list.length >= count,
    { timeoutMs: 10_000, what },
  );
}

async function attemptsOf(messageId: string) {
  return h.service.db.kysely.selectFrom('webhook_attempts').selectAll().where('message_id', '=', messageId).orderBy('attempt').execute();
}

describe('endpoint API', () => {
  test('create shows the secret once; list never does; delete removes it', async () => {
    const account = await h.account();
    const created = await createEndpoint(account.testKey, { url: 'http://127.0.0.1:9/hooks', events: ['order.delivered', 'order.failed'] });
    expectOk(created, 201);
    expect(created.body).toEqual({
      ok: true,
      id: expect.stringMatching(/^we_[0-9A-Za-z]{22}$/),
      url: 'http://127.0.0.1:9/hooks',
      events: ['order.delivered', 'order.failed'],
      mode: 'test',
      status: 'enabled',
      disabled_reason: null,
      created_at: expect.stringMatching(TIMESTAMP),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    expect(Buffer.from(created.body.secret.slice(6), 'base64')).toHaveLength(32);

    const listed = await listEndpoints(account.testKey);
    expectOk(listed);
    // Shaped like the other lists (object, has_more), and always complete.
    const { ok: _ok, secret: _secret, ...listedForm } = created.body;
    expect(listed.body).toEqual({ ok: true, object: 'list', data: [listedForm], has_more: false });
    expect(JSON.stringify(listed.body)).not.toContain(created.body.secret);

    // The other mode sees nothing of it.
    expect((await listEndpoints(account.liveKey)).body).toEqual({ ok: true, object: 'list', data: [], has_more: false });
    expectError(await call(h, { method: 'DELETE', path: `/webhook_endpoints/${created.body.id}`, key: account.liveKey }), 404, 'webhook_endpoint_not_found', 'id');
    // Another account neither.
    const other = await h.account();
    expectError(await call(h, { method: 'DELETE', path: `/webhook_endpoints/${created.body.id}`, key: other.testKey }), 404, 'webhook_endpoint_not_found', 'id');

    const deleted = await call(h, { method: 'DELETE', path: `/webhook_endpoints/${created.body.id}`, key: account.testKey });
    expectOk(deleted);
    expect(deleted.body).toEqual({ ok: true, id: created.body.id, deleted: true });
    expect((await listEndpoints(account.testKey)).body.data).toEqual([]);
    expectError(await call(h, { method: 'DELETE', path: `/webhook_endpoints/${created.body.id}`, key: account.testKey }), 404, 'webhook_endpoint_not_found', 'id');
    expectError(await call(h, { method: 'POST', path: '/webhook_endpoints/we_nope/rotate_secret', key: account.testKey, json: {} }), 404, 'webhook_endpoint_not_found', 'id');
  });

  test.each([
    ['a missing url', 'test', {}, 400, 'invalid_request', 'url'],
    ['a url that is not a string', 'test', { url: 42 }, 400, 'invalid_request', 'url'],
    ['an unknown field', 'test', { url: 'https://example.com/h', secret: 'mine' }, 400, 'invalid_request', 'secret'],
    ['a relative url', 'test', { url: '/hooks' }, 400, 'invalid_url', 'url'],
    ['http in live mode', 'live', { url: 'http://example.com/hooks' }, 400, 'invalid_url', 'url'],
    ['a private address in live mode', 'live', { url: 'https://10.0.0.5/hooks' }, 400, 'invalid_url', 'url'],
    ['the metadata address in live mode', 'live', { url: 'https://169.254.169.254/latest' }, 400, 'invalid_url', 'url'],
    ['loopback in live mode, even with loopback allowed for test', 'live', { url: 'https://127.0.0.1:8443/hooks' }, 400, 'invalid_url', 'url'],
    ['IPv4-mapped loopback in live mode', 'live', { url: 'https://[::ffff:127.0.0.1]/hooks' }, 400, 'invalid_url', 'url'],
    ['localhost in live mode', 'live', { url: 'https://localhost/hooks' }, 400, 'invalid_url', 'url'],
    ['a unique-local IPv6 address in live mode', 'live', { url: 'https://[fd00::1]/hooks' }, 400, 'invalid_url', 'url'],
    ['a private address in test mode', 'test', { url: 'http://192.168.1.10/hooks' }, 400, 'invalid_url', 'url'],
    ['credentials in the url', 'test', { url: 'http://user:pw@127.0.0.1/hooks' }, 400, 'invalid_url', 'url'],
    ['an unknown event type', 'test', { url: 'http://127.0.0.1:9/h', events: ['order.shipped'] }, 400, 'invalid_events', 'events'],
    ['an empty events list', 'test', { url: 'http://127.0.0.1:9/h', events: [] }, 400, 'invalid_events', 'events'],
    ['"*" with other types', 'test', { url: 'http://127.0.0.1:9/h', events: ['*', 'order.created'] }, 400, 'invalid_events', 'events'],
    ['events that are not strings (docs/api.md: not an array of event types)', 'test', { url: 'http://127.0.0.1:9/h', events: [1] }, 400, 'invalid_events', 'events'],
  ] as const)('refuses %s and writes nothing', async (_name, mode, json, status, code, param) => {
    const account = await h.account();
    const res = await createEndpoint(mode === 'live' ? account.liveKey : account.testKey, json);
    expectError(res, status, code, param);
    expect((await listEndpoints(account.testKey)).body.data).toEqual([]);
    expect((await listEndpoints(account.liveKey)).body.data).toEqual([]);
  });

  test('at most 16 endpoints per account and mode', async () => {
    const account = await h.account();
    for (let i = 0; i < 16; i++) expectOk(await createEndpoint(account.testKey, { url: `http://127.0.0.1:9/h${i}` }), 201);
    expectError(await createEndpoint(account.testKey, { url: 'http://127.0.0.1:9/h16' }), 409, 'webhook_endpoint_limit');
    const full = await listEndpoints(account.testKey);
    expect(full.body.data).toHaveLength(16);
    // The cap is why the list needs no paging: all 16 in one answer.
    expect(full.body).toMatchObject({ object: 'list', has_more: false });
  });
});

describe('deliveries', () => {
  test('every order event arrives, signed (checked independently and with the SDK), with the contract body', async () => {
    const account = await h.account({ test: '10' });
    const endpoint = await endpointFor(account);
    const created = await postOrder(h, account.testKey, { product: 'stars', recipient: '@webhooker', quantity: 50, external_id: 'inv-7' });
    expectOk(created, 201);
    const orderId = created.body.id;
    await waitForStatus(h, account.testKey, orderId, ['delivered']);
    const deliveries = await waitForDeliveries(account, 3);
    const types = deliveries.map((d) => d.json.type).sort();
    expect(types).toEqual(['order.created', 'order.delivered', 'order.processing']);

    const order = (await call(h, { path: `/orders/${orderId}`, key: account.testKey })).body;
    for (const delivery of deliveries) {
      expect(delivery.headers['content-type']).toBe('application/json');
      expect(delivery.headers['webhook-id']).toMatch(/^msg_[0-9A-Za-z]{22}$/);
      expect(Math.abs(Number(delivery.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
      expect(independentlyVerified(delivery, endpoint.secret), 'HMAC per the spec').toBe(true);
      expect(independentlyVerified(delivery, `whsec_${Buffer.alloc(32, 1).toString('base64')}`), 'a wrong secret must not verify').toBe(false);
      await expect(verifyWebhook(delivery.body, delivery.headers as Record<string, string>, endpoint.secret)).resolves.toEqual(delivery.json);

      const event = order.events.find((e: any) => e.id === delivery.json.id);
      expect(delivery.json.id).toMatch(EVENT_ID);
      expect(event, 'the webhook carries the order event of the same id').toBeDefined();
      expect(Object.keys(delivery.json).sort()).toEqual(['created_at', 'data', 'id', 'type']);
      expect(delivery.json.type).toBe(event.type);
      expect(delivery.json.created_at).toBe(event.created_at);
      const { order: snapshot, ...eventData } = delivery.json.data;
      expect(eventData).toEqual(event.data);
      // The order as it stood right after the event, without events.
      expect(snapshot).toEqual({ ...pick(order), status: event.status, updated_at: snapshot.updated_at });
      expect(snapshot.id).toMatch(ORDER_ID);
      expect(snapshot).not.toHaveProperty('events');
    }
    // Each message was delivered once, in one attempt, and logged (the outcome is recorded just
    // after the receiver answers, so wait for it).
    const messages = await pollUntil(
      () => h.service.db.kysely.selectFrom('webhook_messages').selectAll().where('endpoint_id', '=', endpoint.id).execute(),
      (list) => list.length === 3 && list.every((m) => m.status !== 'pending'),
      { what: 'the 3 outcomes recorded' },
    );
    expect(messages.map((m) => [m.status, Number(m.attempts)])).toEqual([
      ['succeeded', 1],
      ['succeeded', 1],
      ['succeeded', 1],
    ]);
    const attempts = await attemptsOf(messages[0]!.id);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ outcome: 'succeeded', response_snippet: '{"received":true}' });
    expect(Number(attempts[0]!.status_code)).toBe(200);
  });

  test('the events filter is honoured, and the other mode and other accounts get nothing', async () => {
    const account = await h.account({ test: '10' });
    await endpointFor(account, ['order.delivered']);
    const bystander = await h.account({ test: '10' });
    const created = await postOrder(h, account.testKey, { product: 'stars', recipient: '@filtered', quantity: 50 });
    await waitForStatus(h, account.testKey, created.body.id, ['delivered']);
    const [delivery] = await waitForDeliveries(account, 1);
    expect(delivery!.json.type).toBe('order.delivered');
    expect(delivery!.json.data.order.status).toBe('delivered');
    const messages = await h.service.db.kysely.selectFrom('webhook_messages').select('event_type').where('account_id', '=', account.accountId).execute();
    expect(messages.map((m) => m.event_type)).toEqual(['order.delivered']);
    expect(receivedBy(bystander)).toEqual([]);
  });

  test('a 500 is retried until it succeeds, with the same webhook-id and a fresh signature', async () => {
    const account = await h.account();
    const endpoint = await endpointFor(account);
    receiver.script.push({ status: 500, body: 'boom' }, { status: 503, body: 'x'.repeat(10_000) });
    const row = (await findEndpoint(h.service.db.kysely, endpoint.id, { accountId: account.accountId, mode: 'test' }))!;
    const messageId = await enqueueTestEvent(h.service.db.kysely, row, Date.now());
    const deliveries = await waitForDeliveries(account, 3);
    expect(new Set(deliveries.map((d) => d.headers['webhook-id']))).toEqual(new Set([messageId]));
    for (const delivery of deliveries) expect(independentlyVerified(delivery, endpoint.secret)).toBe(true);
    expect(deliveries[0]!.json).toMatchObject({ type: 'webhook.test', data: { endpoint_id: endpoint.id } });

    const attempts = await pollUntil(
      () => attemptsOf(messageId),
      (list) => list.length === 3,
      { what: '3 logged attempts' },
    );
    expect(attempts.map((a) => [Number(a.attempt), a.status_code === null ? null : Number(a.status_code), a.outcome])).toEqual([
      [1, 500, 'failed'],
      [2, 503, 'failed'],
      [3, 200, 'succeeded'],
    ]);
    expect(attempts[0]!.response_snippet).toBe('boom');
    // The body is read up to a small limit and stored as a 256-character snippet.
    expect(attempts[1]!.response_snippet).toBe('x'.repeat(256));
    const message = await h.service.db.kysely.selectFrom('webhook_messages').selectAll().where('id', '=', messageId).executeTakeFirstOrThrow();
    expect(message.status).toBe('succeeded');
    const after = (await findEndpoint(h.service.db.kysely, endpoint.id, { accountId: account.accountId, mode: 'test' }))!;
    expect(after).toMatchObject({ status: 'enabled', failingSince: null });
  });

  test('a 429 with Retry-After is retried no sooner than it asks', async () => {
    const account = await h.account();
    const endpoint = await endpointFor(account);
    receiver.script.push({ status: 429, headers: { 'retry-after': '1' } });
    const row = (await findEndpoint(h.service.db.kysely, endpoint.id, { accountId: account.accountId, mode: 'test' }))!;
    await enqueueTestEvent(h.service.db.kysely, row, Date.now());
    const deliveries = await waitForDeliveries(account, 2);
    // The schedule alone would retry after ~30 ms.
    expect(deliveries[1]!.at - deliveries[0]!.at).toBeGreaterThanOrEqual(950);
  });

  test('a receiver that does not answer in time is retried after the timeout', async () => {
    const account = await h.account();
    const endpoint = await endpointFor(account);
    receiver.script.push('hang');
    const row = (await findEndpoint(h.service.db.kysely, endpoint.id, { accountId: account.accountId, mode: 'test' }))!;
    const messageId = await enqueueTestEvent(h.service.db.kysely, row, Date.now());
    const deliveries = await waitForDeliveries(account, 2);
    // The retry comes only once the sender gave up on the hung request (it closed the
    // connection); the gap between arrivals can be shorter than the timeout when the machine
    // is busy, since the timer starts when the sender sends, not when the receiver reads.
    expect(deliveries[0]!.closedAt).toBeDefined();
    expect(deliveries[1]!.at).toBeGreaterThanOrEqual(deliveries[0]!.closedAt!);
    expect(deliveries[1]!.headers['webhook-id']).toBe(messageId);
    const attempts = await pollUntil(
      () => attemptsOf(messageId),
      (list) => list.length === 2,
      { what: '2 logged attempts' },
    );
    expect(attempts[0]).toMatchObject({ outcome: 'failed', status_code: null, error: `timed out after ${TIMEOUT_MS} ms` });
    expect(attempts[1]).toMatchObject({ outcome: 'succeeded' });
    receiver.releaseHeld();
  });

  test('an endpoint deleted while its delivery is in flight: the answer is dropped, nothing breaks', async () => {
    const account = await h.account();
    const endpoint = await endpointFor(account);
    receiver.script.push('hang');
    const row = (await findEndpoint(h.service.db.kysely, endpoint.id, { accountId: account.accountId, mode: 'test' }))!;
    await enqueueTestEvent(h.service.db.kysely, row, Date.now());
    await pollUntil(
      async () => receiver.held(),
      (n) => n === 1,
      { what: 'the held delivery' },
    );
    expectOk(await call(h, { method: 'DELETE', path: `/webhook_endpoints/${endpoint.id}`, key: account.testKey }));
    receiver.releaseHeld(200);
    // The dispatcher goes on delivering for others.
    const other = await endpointFor(account);
    const otherRow = (await findEndpoint(h.service.db.kysely, other.id, { accountId: account.accountId, mode: 'test' }))!;
    const messageId = await enqueueTestEvent(h.service.db.kysely, otherRow, Date.now());
    await pollUntil(
      () => attemptsOf(messageId),
      (list) => list.length === 1,
      { what: 'the other endpoint delivered' },
    );
    expect(await h.service.db.kysely.selectFrom('webhook_attempts').selectAll().where('endpoint_id', '=', endpoint.id).execute()).toEqual([]);
    expect(await h.service.db.kysely.selectFrom('webhook_messages').selectAll().where('endpoint_id', '=', endpoint.id).execute()).toEqual([]);
  });

  test('redirects are not followed: a 3xx is a failed attempt', async () => {
    const account = await h.account();
    const endpoint = await endpointFor(account);
    receiver.fallback = { status: 302, body: '' };
    const row = (await findEndpoint(h.service.db.kysely, endpoint.id, { accountId: account.accountId, mode: 'test' }))!;
    const messageId = await enqueueTestEvent(h.service.db.kysely, row, Date.now());
    const attempts = await pollUntil(
      () => attemptsOf(messageId),
      (list) => list.length === 4,
      { what: 'all 4 attempts' },
    );
    expect(attempts.every((a) => Number(a.status_code) === 302 && a.outcome === 'failed')).toBe(true);
    expect(receivedBy(account)).toHaveLength(4);
  });
});

describe('several workers', () => {
  test('three dispatchers on one database send each message once (no attempt is sent twice)', async () => {
    const account = await h.account();
    const endpoint = await endpointFor(account);
    const extra = [1, 2].map(
      () =>
        new WebhookDispatcher({
          db: h.service.db,
          logger: createLogger('silent'),
          policy: { allowLoopback: true },
          timeoutMs: 5_000,
          retryDelaysMs: [30],
          disableAfterMs: 0,
          leaseMarginMs: 30_000,
          publicUrl: () => h.url,
          concurrency: 4,
          pollMs: 20,
        }),
    );
    for (const dispatcher of extra) dispatcher.start();
    try {
      const row = (await findEndpoint(h.service.db.kysely, endpoint.id, { accountId: account.accountId, mode: 'test' }))!;
      const ids = new Set<string>();
      for (let i = 0; i < 60; i++) ids.add(await enqueueTestEvent(h.service.db.kysely, row, Date.now()));
      const deliveries = await waitForDeliveries(account, 60);
      const messages = await pollUntil(
        () => h.service.db.kysely.selectFrom('webhook_messages').selectAll().where('endpoint_id', '=', endpoint.id).execute(),
        (list) => list.every((m) => m.status === 'succeeded'),
        { what: 'all 60 messages recorded' },
      );
      expect(deliveries.map((d) => String(d.headers['webhook-id'])).sort()).toEqual([...ids].sort());
      expect(messages.every((m) => Number(m.attempts) === 1)).toBe(true);
    } finally {
      await Promise.all(extra.map((dispatcher) => dispatcher.stop()));
    }
  });
});

describe('retention', () => {
  test('finished messages older than the cut-off are pruned with their attempts; pending ones never', async () => {
    const account = await h.account();
    const endpoint = await endpointFor(account);
    const row = (await findEndpoint(h.service.db.kysely, endpoint.id, { accountId: account.accountId, mode: 'test' }))!;
    const delivered = await enqueueTestEvent(h.service.db.kysely, row, Date.now());
    await pollUntil(
      () => attemptsOf(delivered),
      (list) => list.length === 1,
      { what: 'the delivery' },
    );
    const waiting = await enqueueTestEvent(h.service.db.kysely, row, Date.now() + 3_600_000);
    const db = h.service.db.kysely;
    await db.updateTable('webhook_messages').set({ created_at: 1 }).where('endpoint_id', '=', endpoint.id).execute();
    expect(await pruneMessages(db, 2)).toBeGreaterThanOrEqual(1);
    const left = await db.selectFrom('webhook_messages').select('id').where('endpoint_id', '=', endpoint.id).execute();
    expect(left.map((m) => m.id)).toEqual([waiting]);
    expect(await attemptsOf(delivered)).toEqual([]);
  });
});

describe('metrics', () => {
  test('attempts by outcome and the outbox backlog are exported', async () => {
    const metric = async (name: string) => {
      const text = (await h.inject({ method: 'GET', url: '/metrics' })).body;
      const line = text.split('\n').find((l) => l.startsWith(name));
      return line === undefined ? 0 : Number(line.split(' ').pop());
    };
    const account = await h.account();
    const endpoint = await endpointFor(account);
    const before = { ok: await metric('starport_webhook_attempts_total{outcome="succeeded"}'), failed: await metric('starport_webhook_attempts_total{outcome="failed"}') };
    receiver.script.push({ status: 500 });
    // Held back: the endpoint is not due for a minute, so the backlog is observable.
    const row = (await findEndpoint(h.service.db.kysely, endpoint.id, { accountId: account.accountId, mode: 'test' }))!;
    const messageId = await enqueueTestEvent(h.service.db.kysely, row, Date.now() + 60_000);
    expect(await metric('starport_webhook_outbox_backlog')).toBeGreaterThanOrEqual(1);
    await h.service.db.kysely.updateTable('webhook_messages').set({ next_attempt_at: Date.now() }).where('id', '=', messageId).execute();
    await pollUntil(
      () => attemptsOf(messageId),
      (list) => list.some((a) => a.outcome === 'succeeded'),
      { what: 'a success after a failure' },
    );
    expect(await metric('starport_webhook_attempts_total{outcome="failed"}')).toBe(before.failed + 1);
    expect(await metric('starport_webhook_attempts_total{outcome="succeeded"}')).toBe(before.ok + 1);
  });
});

describe('secret rotation', () => {
  test('after a rotation deliveries carry both signatures during the grace; the new secret is shown once', async () => {
    const account = await h.account();
    const endpoint = await endpointFor(account);
    const rotated = await call(h, { method: 'POST', path: `/webhook_endpoints/${endpoint.id}/rotate_secret`, key: account.testKey, json: {} });
    expectOk(rotated);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    expect(rotated.body.id).toBe(endpoint.id);
    expect(JSON.stringify((await listEndpoints(account.testKey)).body)).not.toContain(rotated.body.secret);

    const row = (await findEndpoint(h.service.db.kysely, endpoint.id, { accountId: account.accountId, mode: 'test' }))!;
    await enqueueTestEvent(h.service.db.kysely, row, Date.now());
    const [delivery] = await waitForDeliveries(account, 1);
    expect(String(delivery!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(independentlyVerified(delivery!, rotated.body.secret)).toBe(true);
    expect(independentlyVerified(delivery!, endpoint.secret)).toBe(true);
    await expect(verifyWebhook(delivery!.body, delivery!.headers as Record<string, string>, rotated.body.secret)).resolves.toBeDefined();

    // Rotating again ends the oldest secret at once.
    const again = await call(h, { method: 'POST', path: `/webhook_endpoints/${endpoint.id}/rotate_secret`, key: account.testKey, json: {} });
    expectOk(again);
    await enqueueTestEvent(h.service.db.kysely, row, Date.now());
    const second = (await waitForDeliveries(account, 2))[1]!;
    expect(independentlyVerified(second, again.body.secret)).toBe(true);
    expect(independentlyVerified(second, rotated.body.secret)).toBe(true);
    expect(independentlyVerified(second, endpoint.secret)).toBe(false);
    expectError(
      await call(h, { method: 'POST', path: `/webhook_endpoints/${endpoint.id}/rotate_secret`, key: account.testKey, json: { now: true } }),
      400,
      'invalid_request',
      'now',
    );
  });
});

describe('concurrent rotations', () => {
  /** The endpoint's (secret, previous secret) as stored. */
  const secrets = async (id: string) => {
    const row = await h.service.db.kysely.selectFrom('webhook_endpoints').select(['secret', 'previous_secret']).where('id', '=', id).executeTakeFirstOrThrow();
    return { secret: row.secret, previous: row.previous_secret };
  };

  test('two rotations that both read the endpoint first: the previous secret is the one the last rotation replaced, as in a serial order', async () => {
    const account = await h.account();
    const endpoint = await endpointFor(account);
    const scope = { accountId: account.accountId, mode: 'test' as const };
    for (let round = 0; round < 5; round++) {
      const before = (await secrets(endpoint.id)).secret;
      // Both read the endpoint before either writes (what two requests at once do).
      const [a, b] = await Promise.all([findEndpoint(h.service.db.kysely, endpoint.id, scope), findEndpoint(h.service.db.kysely, endpoint.id, scope)]);
      const [first, second] = await Promise.all([
        rotateSecret(h.service.db.kysely, a!, { now: Date.now(), graceMs: 60_000 }),
        rotateSecret(h.service.db.kysely, b!, { now: Date.now(), graceMs: 60_000 }),
      ]);
      const after = await secrets(endpoint.id);
      // One of the two serial orders: before → first → second, or before → second → first.
      const orders = [
        { secret: second.secret, previous: first.secret, answers: [before, first.secret] },
        { secret: first.secret, previous: second.secret, answers: [second.secret, before] },
      ];
      const order = orders.find((o) => o.secret === after.secret && o.previous === after.previous);
      expect(order, `round ${round}: ${JSON.stringify({ before, first: first.secret, second: second.secret, after })}`).toBeDefined();
      // Each answer shows the secret its own rotation demoted.
      expect([first.previousSecret, second.previousSecret]).toEqual(order!.answers);
    }
  });

  test('over HTTP, rotations sent together leave a previous secret that was current, and every answer signs', async () => {
    const account = await h.account();
    const endpoint = await endpointFor(account);
    const issued = new Set<string>();
    const rotate = () => call(h, { method: 'POST', path: `/webhook_endpoints/${endpoint.id}/rotate_secret`, key: account.testKey, json: {} });
    const answers = await Promise.all([rotate(), rotate(), rotate(), rotate()]);
    for (const answer of answers) {
      expectOk(answer);
      issued.add(answer.body.secret);
    }
    expect(issued.size).toBe(4);
    const after = await secrets(endpoint.id);
    // The current secret is one answer's and the previous one another's (the last rotation
    // replaced an earlier one's secret), never the original that all four may have read first.
    expect(issued.has(after.secret)).toBe(true);
    expect(issued.has(after.previous!)).toBe(true);
    expect(after.previous).not.toBe(after.secret);
    // A delivery now verifies with the last answer's secret and with the previous one.
    const row = (await findEndpoint(h.service.db.kysely, endpoint.id, { accountId: account.accountId, mode: 'test' }))!;
    await enqueueTestEvent(h.service.db.kysely, row, Date.now());
    const [delivery] = await waitForDeliveries(account, 1);
    expect(independentlyVerified(delivery!, after.secret)).toBe(true);
    expect(independentlyVerified(delivery!, after.previous!)).toBe(true);
  });
});

describe('disabling', () => {
  test('an endpoint whose deliveries keep failing is disabled; it then gets no new events', async () => {
    const account = await h.account({ test: '10' });
    const endpoint = await endpointFor(account, ['order.created']);
    receiver.fallback = { status: 500, body: 'down' };
    const order = await postOrder(h, account.testKey, { product: 'stars', recipient: '@downstream', quantity: 50 });
    expectOk(order, 201);
    const listed = await pollUntil(
      () => listEndpoints(account.testKey),
      (res) => res.body.data[0]?.status === 'disabled',
      { what: 'the endpoint to be disabled' },
    );
    expect(listed.body.data[0].disabled_reason).toMatch(/Every delivery failed .*HTTP 500/);
    expect(receivedBy(account)).toHaveLength(4);

    receiver.fallback = { status: 200 };
    const next = await postOrder(h, account.testKey, { product: 'stars', recipient: '@downstream', quantity: 50 });
    await waitForStatus(h, account.testKey, next.body.id, ['delivered']);
    const messages = await h.service.db.kysely.selectFrom('webhook_messages').select(['status', 'event_id']).where('endpoint_id', '=', endpoint.id).execute();
    expect(messages).toEqual([{ status: 'failed', event_id: expect.stringMatching(EVENT_ID) }]);
    expect(receivedBy(account)).toHaveLength(4);
  });

  test('a disabled endpoint with due messages does not make the dispatcher spin', async () => {
    const account = await h.account();
    const endpoint = await endpointFor(account);
    const db = h.service.db.kysely;
    await db.updateTable('webhook_endpoints').set({ status: 'disabled', disabled_reason: 'test' }).where('id', '=', endpoint.id).execute();
    const row = (await findEndpoint(db, endpoint.id, { accountId: account.accountId, mode: 'test' }))!;
    for (let i = 0; i < 3; i++) await enqueueTestEvent(db, row, Date.now() - 60_000);
    const dispatcher = new WebhookDispatcher({
      db: h.service.db,
      logger: createLogger('silent'),
      policy: { allowLoopback: true },
      timeoutMs: 1000,
      retryDelaysMs: [30],
      disableAfterMs: 0,
      leaseMarginMs: 500,
      publicUrl: () => h.url,
      pollMs: 200,
    });
    dispatcher.start();
    const started = Date.now();
    await pollUntil(
      async () => Date.now() - started,
      (elapsed) => elapsed >= 1000,
      { what: 'one second' },
    );
    await dispatcher.stop();
    // About 5 rounds at a 200 ms poll; a loop that counted the disabled endpoint's messages as due would run thousands.
    expect(dispatcher.rounds).toBeLessThan(20);
    expect(receivedBy(account)).toEqual([]);
    const pending = await db.selectFrom('webhook_messages').select(['status', 'attempts']).where('endpoint_id', '=', endpoint.id).execute();
    expect(pending.map((m) => [m.status, Number(m.attempts)])).toEqual([
      ['pending', 0],
      ['pending', 0],
      ['pending', 0],
    ]);
  });

  test('a 410 Gone disables the endpoint at once', async () => {
    const account = await h.account();
    const endpoint = await endpointFor(account);
    receiver.fallback = { status: 410 };
    const row = (await findEndpoint(h.service.db.kysely, endpoint.id, { accountId: account.accountId, mode: 'test' }))!;
    await enqueueTestEvent(h.service.db.kysely, row, Date.now());
    const listed = await pollUntil(
      () => listEndpoints(account.testKey),
      (res) => res.body.data[0]?.status === 'disabled',
      { what: 'disabled after 410' },
    );
    expect(listed.body.data[0].disabled_reason).toMatch(/410 Gone/);
    expect(receivedBy(account)).toHaveLength(1);
  });
});

describe('disabling on the default schedule and disable-after (a driven clock)', () => {
  // A service of its own with the default WEBHOOK_DISABLE_AFTER_MS (3 days) and retry schedule,
  // its own dispatcher stopped: the test's dispatcher is the only one, and its clock is the
  // test's, so three days of retries take milliseconds.
  let h3: Harness;
  const defaults = loadConfig({}).webhooks;
  beforeAll(async () => {
    h3 = await startHarness({ WEBHOOK_ALLOW_LOOPBACK: '1' });
    await h3.service.webhooks?.stop();
  });
  afterAll(async () => {
    await h3?.close();
  });

  function clockedDispatcher(start: number) {
    const clock = { now: start };
    const dispatcher = new WebhookDispatcher({
      db: h3.service.db,
      logger: createLogger('silent'),
      policy: { allowLoopback: true },
      timeoutMs: 5_000,
      retryDelaysMs: defaults.retryDelaysMs,
      disableAfterMs: defaults.disableAfterMs,
      leaseMarginMs: 500,
      publicUrl: () => h3.url,
      now: () => clock.now,
      // Every wait at its shortest (-10 %): the whole schedule takes about 68 h, under 3 days.
      random: () => 0,
    });
    return { clock, dispatcher };
  }

  /** Moves the clock to the message's next attempt (not claimable a millisecond before) and makes it. */
  async function nextAttempt({ clock, dispatcher }: ReturnType<typeof clockedDispatcher>, messageId: string) {
    const { next_attempt_at: due } = await h3.service.db.kysely.selectFrom('webhook_messages').select('next_attempt_at').where('id', '=', messageId).executeTakeFirstOrThrow();
    expect(due, 'the message is still pending').not.toBeNull();
    expect(await dispatcher.claim(8, Number(due) - 1)).toEqual([]);
    clock.now = Number(due);
    const claimed = await dispatcher.claim(8, clock.now);
    expect(claimed.map((m) => m.id)).toEqual([messageId]);
    await dispatcher.deliver(claimed[0]!);
  }

  const endpointRow = (id: string) => h3.service.db.kysely.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const messageState = async (id: string) => {
    const row = await h3.service.db.kysely.selectFrom('webhook_messages').select(['status', 'attempts']).where('id', '=', id).executeTakeFirstOrThrow();
    return { status: row.status, attempts: Number(row.attempts) };
  };

  test('defaults: 3 days, and a schedule of 10 attempts that jitter can make shorter than that', () => {
    expect(defaults.disableAfterMs).toBe(3 * 86_400_000);
    expect(defaults.retryDelaysMs).toHaveLength(9);
    expect(0.9 * defaults.retryDelaysMs.reduce((a, b) => a + b, 0)).toBeLessThan(defaults.disableAfterMs);
  });

  test('an endpoint failing for less than a whole schedule stays enabled, even when a message runs out of attempts', async () => {
    const account = await h3.account();
    const endpoint = await addEndpoint(
      h3.service.db.kysely,
      { accountId: account.accountId, mode: 'test' },
      { url: `${receiver.url}?account=${account.accountId}`, events: ['*'], now: Date.now() },
    );
    const driven = clockedDispatcher(Date.now());
    const start = driven.clock.now;
    receiver.fallback = { status: 500, body: 'down' };
    const dead = await enqueueTestEvent(h3.service.db.kysely, endpoint, start);
    for (let i = 1; i <= 5; i++) await nextAttempt(driven, dead);
    expect(await endpointRow(endpoint.id)).toMatchObject({ status: 'enabled', failing_since: BigInt(start) });

    // Another message gets through in the middle of the dead one's schedule: the endpoint works.
    const alive = await enqueueTestEvent(h3.service.db.kysely, endpoint, driven.clock.now);
    receiver.script.push({ status: 200 });
    const [claimed] = await driven.dispatcher.claim(8, driven.clock.now);
    expect(claimed!.id).toBe(alive);
    await driven.dispatcher.deliver(claimed!);
    expect(await messageState(alive)).toEqual({ status: 'succeeded', attempts: 1 });
    expect((await endpointRow(endpoint.id)).failing_since).toBeNull();

    // The dead message uses up its schedule; the endpoint has failed only since attempt 6.
    for (let i = 6; i <= 9; i++) await nextAttempt(driven, dead);
    const beforeLast = await endpointRow(endpoint.id);
    expect(beforeLast.status).toBe('enabled');
    const failingSince = Number(beforeLast.failing_since);
    await nextAttempt(driven, dead);
    expect(await messageState(dead)).toEqual({ status: 'failed', attempts: 10 });
    expect(driven.clock.now - failingSince).toBeLessThan(defaults.disableAfterMs);
    expect(await endpointRow(endpoint.id)).toMatchObject({ status: 'enabled', disabled_reason: null, failing_since: BigInt(failingSince) });
    expect(receivedBy(account)).toHaveLength(11);
  });

  test('a message that fails its whole schedule disables the endpoint, in under 3 days; the dashboard says why', async () => {
    const { client, email } = await signedUp(h3, '10.9.1.1');
    const accountId = await accountIdOf(h3, email);
    const endpoint = await addEndpoint(h3.service.db.kysely, { accountId, mode: 'test' }, { url: `${receiver.url}?account=${accountId}`, events: ['*'], now: Date.now() });
    const driven = clockedDispatcher(Date.now());
    const start = driven.clock.now;
    receiver.fallback = { status: 500, body: 'down' };
    const messageId = await enqueueTestEvent(h3.service.db.kysely, endpoint, start);
    for (let i = 1; i <= 9; i++) await nextAttempt(driven, messageId);
    // Failing for about 46 hours, one attempt left: still enabled.
    expect(driven.clock.now - start).toBeGreaterThan(46 * 3_600_000);
    expect(await endpointRow(endpoint.id)).toMatchObject({ status: 'enabled', failing_since: BigInt(start) });
    expect(text((await client.get('/test/webhooks')).body)).not.toContain('is disabled');

    await nextAttempt(driven, messageId);
    expect(await messageState(messageId)).toEqual({ status: 'failed', attempts: 10 });
    // About 68 hours: the endpoint has not been failing for WEBHOOK_DISABLE_AFTER_MS, yet it failed
    // for the whole schedule, so it is disabled.
    const elapsed = driven.clock.now - start;
    expect(elapsed).toBeGreaterThan(67 * 3_600_000);
    expect(elapsed).toBeLessThan(defaults.disableAfterMs);
    const reason = 'Every delivery failed for 2 days 20 hours, through all 10 attempts of a message; the last error: HTTP 500.';
    expect(await endpointRow(endpoint.id)).toMatchObject({ status: 'disabled', disabled_reason: reason, disabled_at: BigInt(driven.clock.now) });
    expect(receiver.received.filter((r) => r.path.includes(accountId))).toHaveLength(10);

    const page = await client.get('/test/webhooks');
    expect(page.body).toContain(`data-testid="enable-${endpoint.id}"`);
    expect(text(page.body)).toContain(`Webhook endpoint ${endpoint.url} is disabled since`);
    expect(text(page.body)).toContain(reason);
    // Nothing more is claimed for it.
    expect(await driven.dispatcher.claim(8, driven.clock.now + 30 * 86_400_000)).toEqual([]);
  });
});

describe('outbound safety at send time', () => {
  test('a live endpoint whose address is not public is refused at send time and never contacted', async () => {
    const account = await h.account();
    // Bypass the creation check (as if DNS had changed since): the send-time check must hold on its own.
    const id = `we_sendtime${Date.now()}`;
    const now = Date.now();
    await h.service.db.kysely
      .insertInto('webhook_endpoints')
      .values({
        id,
        account_id: account.accountId,
        mode: 'live',
        url: `https://127.0.0.1:${new URL(receiver.url).port}/hooks?account=${account.accountId}`,
        events: '["*"]',
        secret: `whsec_${Buffer.alloc(32, 7).toString('base64')}`,
        status: 'enabled',
        created_at: now,
        updated_at: now,
      })
      .execute();
    const row = (await findEndpoint(h.service.db.kysely, id, { accountId: account.accountId, mode: 'live' }))!;
    const messageId = await enqueueTestEvent(h.service.db.kysely, row, now);
    const attempts = await pollUntil(
      () => attemptsOf(messageId),
      (list) => list.length >= 1,
      { what: 'a refused attempt' },
    );
    expect(attempts[0]).toMatchObject({ outcome: 'failed', status_code: null, error: expect.stringMatching(/^refused: 127\.0\.0\.1 is a loopback address/) });
    expect(receivedBy(account)).toEqual([]);
  });
});

const text = (body: string) => body.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

function pick(order: any) {
  const { ok: _ok, events: _events, ...rest } = order;
  return rest;
}
