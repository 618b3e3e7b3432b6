import { createHmac, randomBytes } from 'node:crypto';
import { signWebhook, verifyWebhook, WebhookVerificationError } from '@starport/sdk';
import { describe, expect, test } from 'vitest';

/** Standard Webhooks signatures (standardwebhooks.com v1), checked against an independent HMAC. */

const secret = `whsec_${randomBytes(32).toString('base64')}`;
const body = JSON.stringify({ id: 'evt_1', type: 'order.delivered', created_at: '2026-11-25T21:30:03.207Z', data: { order: { id: 'ord_1' }, amount: '0.25' } });
const now = Date.UTC(2026, 10, 25, 21, 30, 5);
const timestamp = String(Math.floor(now / 1000));

/** The signature computed with node:crypto straight from the spec, not with the SDK. */
function reference(id: string, ts: string, payload: string, key = secret): string {
  return createHmac('sha256', Buffer.from(key.slice('whsec_'.length), 'base64'))
    .update(`${id}.${ts}.${payload}`)
    .digest('base64');
}

const headers = (overrides: Record<string, string> = {}) => ({
  'webhook-id': 'msg_2b9f',
  'webhook-timestamp': timestamp,
  'webhook-signature': `v1,${reference('msg_2b9f', timestamp, body)}`,
  ...overrides,
});

describe('verifyWebhook', () => {
  test('accepts a valid signature and returns the parsed payload', async () => {
    await expect(verifyWebhook(body, headers(), secret, { now })).resolves.toEqual(JSON.parse(body));
    // Raw bytes, a Headers object, and several signatures (secret rotation) work too.
    const many = new Headers(
      headers({ 'webhook-signature': `v1,${reference('msg_2b9f', timestamp, body, `whsec_${randomBytes(32).toString('base64')}`)} v1,${reference('msg_2b9f', timestamp, body)}` }),
    );
    await expect(verifyWebhook(new TextEncoder().encode(body), many, secret, { now })).resolves.toMatchObject({ id: 'evt_1' });
  });

  test('accepts a timestamp within the tolerance either side', async () => {
    await expect(verifyWebhook(body, headers(), secret, { now: now + 299_000 })).resolves.toBeDefined();
    await expect(verifyWebhook(body, headers(), secret, { now: now - 299_000 })).resolves.toBeDefined();
  });

  test.each([
    ['a tampered body', () => verifyWebhook(body.replace('0.25', '25'), headers(), secret, { now })],
    ['a wrong secret', () => verifyWebhook(body, headers(), `whsec_${randomBytes(32).toString('base64')}`, { now })],
    ['an old timestamp (over 300 s)', () => verifyWebhook(body, headers(), secret, { now: now + 301_000 })],
    ['a timestamp from the future', () => verifyWebhook(body, headers(), secret, { now: now - 301_000 })],
    ['a signature for another id', () => verifyWebhook(body, headers({ 'webhook-id': 'msg_other' }), secret, { now })],
    ['a replayed signature with a fresh timestamp', () => verifyWebhook(body, headers({ 'webhook-timestamp': String(Number(timestamp) + 10) }), secret, { now })],
    ['another signature version only', () => verifyWebhook(body, headers({ 'webhook-signature': `v1a,${reference('msg_2b9f', timestamp, body)}` }), secret, { now })],
    ['a missing signature header', () => verifyWebhook(body, { 'webhook-id': 'msg_2b9f', 'webhook-timestamp': timestamp }, secret, { now })],
    ['a non-numeric timestamp', () => verifyWebhook(body, headers({ 'webhook-timestamp': 'yesterday' }), secret, { now })],
    ['garbage in the signature', () => verifyWebhook(body, headers({ 'webhook-signature': 'v1,!!!' }), secret, { now })],
  ])('rejects %s', async (_name, verify) => {
    const error = await verify().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect(error).toMatchObject({ code: 'webhook_invalid' });
  });

  test('a custom tolerance', async () => {
    await expect(verifyWebhook(body, headers(), secret, { now: now + 60_000, toleranceSeconds: 30 })).rejects.toBeInstanceOf(WebhookVerificationError);
  });

  test('signWebhook produces what the spec says and verifyWebhook accepts', async () => {
    const signed = await signWebhook(body, secret, { id: 'msg_2b9f', timestamp: Number(timestamp) });
    expect(signed).toEqual(headers());
    await expect(verifyWebhook(body, signed, secret, { now })).resolves.toBeDefined();
  });
});
