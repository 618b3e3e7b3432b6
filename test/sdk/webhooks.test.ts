import { ConflictError, InvalidRequestError, NotFoundError, Starport, StarportError, verifyWebhook, type WebhookEvent } from '@starport/sdk';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { pollUntil, postOrder } from '../support/http.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

/** The SDK's webhook endpoint methods against a running service, and verifyWebhook on a real delivery. */

let h: Harness;
let receiver: Receiver;

beforeAll(async () => {
  h = await startHarness({ WEBHOOK_ALLOW_LOOPBACK: '1' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await h?.close();
});

async function rejection(promise: Promise<unknown>): Promise<StarportError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StarportError);
  return error as StarportError;
}

test('create, list, rotate and delete an endpoint; a delivery verifies with the secret', async () => {
  const account = await h.account({ test: '10' });
  const starport = new Starport({ apiKey: account.testKey, baseUrl: `${h.url}/api/v1` });
  const endpoint = await starport.createWebhookEndpoint({ url: receiver.url, events: ['order.delivered'] });
  expect(endpoint).toMatchObject({ url: receiver.url, events: ['order.delivered'], mode: 'test', status: 'enabled', secret: expect.stringMatching(/^whsec_/) });
  expect(endpoint.lastResponse.status).toBe(201);

  const listed = await starport.listWebhookEndpoints();
  expect(listed).toMatchObject({ object: 'list', has_more: false });
  expect(listed.data.map((e) => e.id)).toEqual([endpoint.id]);
  expect(listed.data[0]).not.toHaveProperty('secret');

  const order = await postOrder(h, account.testKey, { product: 'stars', recipient: '@sdkhooks', quantity: 50 });
  const [delivery] = await pollUntil(
    async () => [...receiver.received],
    (list) => list.length === 1,
    { what: 'the delivery' },
  );
  const event = await verifyWebhook<WebhookEvent>(delivery!.body, delivery!.headers as Record<string, string>, endpoint.secret);
  expect(event.type).toBe('order.delivered');
  expect(event.type === 'order.delivered' && event.data.order.id).toBe(order.body.id);

  const rotated = await starport.rotateWebhookEndpointSecret(endpoint.id);
  expect(rotated.secret).not.toBe(endpoint.secret);
  expect(rotated.id).toBe(endpoint.id);

  const deleted = await starport.deleteWebhookEndpoint(endpoint.id);
  expect({ id: deleted.id, deleted: deleted.deleted }).toEqual({ id: endpoint.id, deleted: true });
  expect((await starport.listWebhookEndpoints()).data).toEqual([]);
});

test('typed errors: invalid_url, invalid_events, webhook_endpoint_not_found, webhook_endpoint_limit', async () => {
  const account = await h.account();
  const live = new Starport({ apiKey: account.liveKey, baseUrl: `${h.url}/api/v1`, maxRetries: 0 });
  const test_ = new Starport({ apiKey: account.testKey, baseUrl: `${h.url}/api/v1`, maxRetries: 0 });
  const badUrl = await rejection(live.createWebhookEndpoint({ url: 'https://10.1.1.1/hooks' }));
  expect(badUrl).toBeInstanceOf(InvalidRequestError);
  expect({ code: badUrl.code, param: badUrl.param }).toEqual({ code: 'invalid_url', param: 'url' });
  const badEvents = await rejection(test_.createWebhookEndpoint({ url: receiver.url, events: ['order.nope'] }));
  expect({ code: badEvents.code, param: badEvents.param }).toEqual({ code: 'invalid_events', param: 'events' });
  const missing = await rejection(test_.deleteWebhookEndpoint('we_missing'));
  expect(missing).toBeInstanceOf(NotFoundError);
  expect(missing.code).toBe('webhook_endpoint_not_found');
  for (let i = 0; i < 16; i++) await test_.createWebhookEndpoint({ url: `${receiver.url}/${i}` });
  const full = await rejection(test_.createWebhookEndpoint({ url: receiver.url }));
  expect(full).toBeInstanceOf(ConflictError);
  expect(full.code).toBe('webhook_endpoint_limit');
});
