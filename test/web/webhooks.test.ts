import { afterAll, beforeAll, expect, test } from 'vitest';
import { createEndpoint } from '../../src/webhooks/endpoints.js';
import { type Harness, startHarness } from '../support/harness.js';
import { pollUntil } from '../support/http.js';
import { independentlyVerified, type Receiver, startReceiver } from '../support/webhook-receiver.js';
import { accountIdOf, signedUp } from '../support/web.js';

/**
 * The dashboard's webhooks page over HTTP: add an endpoint (secret shown once), send a test
 * event to a receiver on loopback, the delivery log, redeliver, rotate, the disabled-endpoint
 * notice with re-enable, delete, and the CSRF guard on every form.
 */

let h: Harness;
let receiver: Receiver;

beforeAll(async () => {
  h = await startHarness({ WEBHOOK_ALLOW_LOOPBACK: '1', WEBHOOK_RETRY_DELAYS_MS: '20', WEBHOOK_DISABLE_AFTER_MS: '0' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await h?.close();
});

const text = (body: string) => body.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

test('add, test event, delivery log, redeliver, rotate and delete', async () => {
  const { client, email } = await signedUp(h, '10.9.0.1');
  const accountId = await accountIdOf(h, email);
  const empty = await client.get('/test/webhooks');
  expect(empty.status).toBe(200);
  expect(text(empty.body)).toContain('No webhook endpoints yet');
  expect(empty.body).toContain('aria-current="page">Webhooks<');

  // A live endpoint must be https on a public address: the form says why and keeps the input.
  const refused = await client.submit('/webhooks', { url: 'http://127.0.0.1:9/x' });
  expect(refused.status).toBe(400);
  expect(text(refused.body)).toContain('Live-mode webhook URLs must use https://');
  expect(refused.body).toContain('value="http://127.0.0.1:9/x"');
  expect(await h.service.db.kysely.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', accountId).execute()).toEqual([]);

  const url = `${receiver.url}?dash=${accountId}`;
  const added = await client.submit('/test/webhooks', { url, events: 'order.delivered' });
  expect(added.status).toBe(200);
  const secret = /value="(whsec_[^"]+)"/.exec(added.body)?.[1];
  expect(secret).toMatch(/^whsec_/);
  const [row] = await h.service.db.kysely.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', accountId).execute();
  expect(row).toMatchObject({ url, mode: 'test', events: '["order.delivered"]', secret });

  // The list and the endpoint page never show the secret again.
  const list = await client.get('/test/webhooks');
  expect(list.body).toContain(row!.id);
  expect(list.body).not.toContain(secret);
  const detailUrl = `/test/webhooks/${row!.id}`;
  expect((await client.get(detailUrl)).body).not.toContain(secret);

  // Send a test event: it arrives signed.
  const sent = await client.submit(detailUrl, {}, `${detailUrl}/test`);
  expect(sent.status).toBe(303);
  expect(sent.location).toBe(`${detailUrl}?notice=test_queued`);
  const [delivery] = await pollUntil(
    async () => receiver.received.filter((r) => r.path.includes(accountId)),
    (list) => list.length === 1,
    { what: 'the test event' },
  );
  expect(delivery!.json).toMatchObject({ type: 'webhook.test', data: { endpoint_id: row!.id } });
  expect(independentlyVerified(delivery!, secret!)).toBe(true);

  // The delivery log shows the attempt: status code, latency, attempt number, response snippet.
  const logged = await pollUntil(
    () => client.get(detailUrl),
    (page) => page.body.includes('data-attempt="1"'),
    { what: 'the logged attempt' },
  );
  const messageId = String(delivery!.headers['webhook-id']);
  expect(logged.body).toContain(`data-message="${messageId}"`);
  expect(logged.body).toMatch(/data-testid="status-code">200</);
  expect(text(logged.body)).toMatch(/\d+ ms/);
  expect(logged.body).toContain('{&quot;received&quot;:true}');

  // Redeliver: the same message again (same webhook-id), logged as attempt 2.
  const again = await client.submit(detailUrl, {}, `${detailUrl}/messages/${messageId}/redeliver`);
  expect(again.location).toBe(`${detailUrl}?notice=redelivering`);
  const received = await pollUntil(
    async () => receiver.received.filter((r) => r.path.includes(accountId)),
    (list) => list.length === 2,
    { what: 'the redelivery' },
  );
  expect(received[1]!.headers['webhook-id']).toBe(messageId);
  await pollUntil(
    () => client.get(detailUrl),
    (page) => page.body.includes('data-attempt="2"'),
    { what: 'attempt 2 in the log' },
  );

  // Rotate: a new secret, shown once; the old one still signs during the grace.
  const rotated = await client.submit(detailUrl, {}, `${detailUrl}/rotate`);
  const newSecret = /value="(whsec_[^"]+)"/.exec(rotated.body)?.[1];
  expect(newSecret).toMatch(/^whsec_/);
  expect(newSecret).not.toBe(secret);
  expect(text(rotated.body)).toContain('keeps signing alongside the new one');

  // Delete.
  const deleted = await client.submit(detailUrl, {}, `${detailUrl}/delete`);
  expect(deleted.location).toBe('/test/webhooks?notice=deleted');
  expect(await h.service.db.kysely.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', accountId).execute()).toEqual([]);
  expect((await client.get(detailUrl)).location).toBe('/test/webhooks?notice=missing');
});

test('a disabled endpoint is called out with a re-enable button; re-enabling resumes deliveries', async () => {
  const { client, email } = await signedUp(h, '10.9.0.2');
  const accountId = await accountIdOf(h, email);
  receiver.fallback = { status: 500, body: 'nope' };
  try {
    const url = `${receiver.url}?dash=${accountId}`;
    await client.submit('/test/webhooks', { url });
    const [row] = await h.service.db.kysely.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', accountId).execute();
    const detailUrl = `/test/webhooks/${row!.id}`;
    await client.submit(detailUrl, {}, `${detailUrl}/test`);
    const page = await pollUntil(
      () => client.get('/test/webhooks'),
      (p) => p.body.includes('data-status="disabled"'),
      { what: 'the endpoint to be disabled' },
    );
    expect(text(page.body)).toMatch(/Webhook endpoint .* is disabled since .*Every delivery failed/);
    expect(page.body).toContain(`data-testid="enable-${row!.id}"`);
    // The overview says so too, in either mode, with a link to the test webhooks page.
    for (const overviewPath of ['/test', '/']) {
      const overview = await client.get(overviewPath);
      expect(text(overview.body)).toContain(`A test webhook endpoint is disabled ( ${url} ): new events are not sent to it.`);
      expect(overview.body).toContain('<a href="/test/webhooks" data-testid="disabled-webhooks-test">');
      expect(overview.body).not.toContain('data-testid="disabled-webhooks-live"');
    }
    // Another user cannot touch it.
    const stranger = (await signedUp(h, '10.9.0.3')).client;
    expect((await stranger.submit('/test/webhooks', {}, `${detailUrl}/enable`)).location).toBe('/test/webhooks?notice=missing');
    expect((await stranger.get(detailUrl)).location).toBe('/test/webhooks?notice=missing');

    // While it is disabled nothing would be sent: redeliver and send test event refuse and say so,
    // and change nothing.
    const messagesOf = () => h.service.db.kysely.selectFrom('webhook_messages').selectAll().where('endpoint_id', '=', row!.id).execute();
    const before = await messagesOf();
    expect(before).toHaveLength(1);
    expect(before[0]!.status).toBe('failed');
    const refused = await client.submit(detailUrl, {}, `${detailUrl}/messages/${before[0]!.id}/redeliver`);
    expect(refused.location).toBe(`${detailUrl}?notice=disabled`);
    expect((await client.submit(detailUrl, {}, `${detailUrl}/test`)).location).toBe(`${detailUrl}?notice=disabled`);
    const told = text((await client.get(refused.location!)).body);
    expect(told).toContain('Nothing was sent: this endpoint is disabled. Re-enable the endpoint first');
    expect(told).not.toContain('being sent again');
    expect(await messagesOf()).toEqual(before);

    receiver.fallback = { status: 204 };
    const enabled = await client.submit('/test/webhooks', {}, `${detailUrl}/enable`);
    expect(enabled.location).toBe(`${detailUrl}?notice=enabled`);
    // Enabled again: the failed message can be redelivered, and a test event goes out.
    expect((await client.submit(detailUrl, {}, `${detailUrl}/messages/${before[0]!.id}/redeliver`)).location).toBe(`${detailUrl}?notice=redelivering`);
    await client.submit(detailUrl, {}, `${detailUrl}/test`);
    await pollUntil(
      () => h.service.db.kysely.selectFrom('webhook_attempts').selectAll().where('endpoint_id', '=', row!.id).where('outcome', '=', 'succeeded').execute(),
      (list) => list.length === 2,
      { what: 'the redelivery and a test event delivered after re-enabling' },
    );
    expect((await messagesOf()).map((m) => m.status)).toEqual(['succeeded', 'succeeded']);
    expect((await client.get('/test/webhooks')).body).not.toContain('data-status="disabled"');
    expect((await client.get('/test')).body).not.toContain('data-testid="disabled-webhooks-');
  } finally {
    receiver.fallback = { status: 200 };
  }
});

test('the overview calls out the disabled endpoints of each mode, linking to that mode’s webhooks page', async () => {
  const { client, email } = await signedUp(h, '10.9.0.5');
  const accountId = await accountIdOf(h, email);
  const db = h.service.db.kysely;
  // Listed oldest first: one millisecond apart, so that two endpoints made within the same
  // millisecond are not left to the tie-break on their random ids.
  let clock = Date.now();
  const add = async (mode: 'live' | 'test', url: string, disabled: boolean) => {
    const endpoint = await createEndpoint(db, { accountId, mode }, { url, events: ['*'], now: clock++ });
    if (disabled)
      await db
        .updateTable('webhook_endpoints')
        .set({ status: 'disabled', disabled_reason: 'The endpoint answered 410 Gone.', disabled_at: Date.now() })
        .where('id', '=', endpoint.id)
        .execute();
  };
  await add('test', 'http://127.0.0.1:9/fine', false);
  const none = await client.get('/');
  expect(none.status).toBe(200);
  expect(none.body).not.toContain('data-testid="disabled-webhooks-');

  await add('live', 'https://hooks.example.com/gone', true);
  await add('test', 'http://127.0.0.1:9/one', true);
  await add('test', 'http://127.0.0.1:9/two', true);
  // Another account's disabled endpoint is not this account's business.
  const other = await accountIdOf(h, (await signedUp(h, '10.9.0.6')).email);
  const foreign = await createEndpoint(db, { accountId: other, mode: 'live' }, { url: 'https://hooks.example.com/foreign', events: ['*'], now: Date.now() });
  await db.updateTable('webhook_endpoints').set({ status: 'disabled' }).where('id', '=', foreign.id).execute();

  for (const path of ['/', '/test']) {
    const page = await client.get(path);
    expect(page.status).toBe(200);
    const shown = text(page.body);
    expect(shown).toContain('A live webhook endpoint is disabled ( https://hooks.example.com/gone ): new events are not sent to it.');
    expect(shown).toContain('2 test webhook endpoints are disabled ( http://127.0.0.1:9/one , http://127.0.0.1:9/two ): new events are not sent to them.');
    expect(page.body).toContain('<a href="/webhooks" data-testid="disabled-webhooks-live">');
    expect(page.body).toContain('<a href="/test/webhooks" data-testid="disabled-webhooks-test">');
    expect(page.body).not.toContain('/fine');
    expect(page.body).not.toContain('foreign');
  }
});

test('every webhook form needs the session CSRF token', async () => {
  const { client, email } = await signedUp(h, '10.9.0.4');
  const accountId = await accountIdOf(h, email);
  for (const action of ['/test/webhooks', '/webhooks']) {
    const page = await client.post(action, { url: `${receiver.url}?dash=${accountId}` });
    expect(page.status).toBe(403);
  }
  expect(await h.service.db.kysely.selectFrom('webhook_endpoints').selectAll().where('account_id', '=', accountId).execute()).toEqual([]);
});
