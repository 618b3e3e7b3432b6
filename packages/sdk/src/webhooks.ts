import { WebhookVerificationError } from './errors.js';

/**
 * Webhook signatures, Standard Webhooks style (standardwebhooks.com, v1): the headers
 * `webhook-id`, `webhook-timestamp` (Unix seconds) and `webhook-signature` (space-separated
 * `v1,<base64 HMAC-SHA256>` entries) sign `${id}.${timestamp}.${rawBody}` with the endpoint
 * secret `whsec_<base64>`. Uses Web Crypto only, so it runs on Node 20+, Deno, Bun and edge
 * runtimes.
 */

export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** Reject timestamps further than this from now, in either direction. Default 300 (5 minutes). */
  toleranceSeconds?: number;
  /** The current time in ms (tests). */
  now?: number;
}

const encoder = new TextEncoder();

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(' ') : value;
}

function base64ToBytes(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

function secretBytes(secret: string): Uint8Array {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  try {
    const bytes = base64ToBytes(encoded);
    if (bytes.length === 0) throw new Error('empty');
    return bytes;
  } catch {
    throw new WebhookVerificationError('The webhook secret is not "whsec_" followed by base64.');
  }
}

function toBytes(body: string | Uint8Array): Uint8Array {
  return typeof body === 'string' ? encoder.encode(body) : body;
}

async function sign(secret: string, id: string, timestamp: string, body: string | Uint8Array): Promise<Uint8Array> {
  const key = await globalThis.crypto.subtle.importKey('raw', secretBytes(secret) as BufferSource, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const prefix = encoder.encode(`${id}.${timestamp}.`);
  const payload = toBytes(body);
  const content = new Uint8Array(prefix.length + payload.length);
  content.set(prefix, 0);
  content.set(payload, prefix.length);
  return new Uint8Array(await globalThis.crypto.subtle.sign('HMAC', key, content as BufferSource));
}

function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= (a[i] as number) ^ (b[i] as number);
  return difference === 0;
}

/**
 * Verifies a webhook delivery and returns its parsed JSON payload; throws
 * WebhookVerificationError otherwise. Pass the raw body exactly as received (before any JSON
 * parsing) and the request headers.
 *
 * ```ts
 * const event = await verifyWebhook(rawBody, request.headers, process.env.STARPORT_WEBHOOK_SECRET!);
 * ```
 */
export async function verifyWebhook<T = unknown>(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string, options: VerifyWebhookOptions = {}): Promise<T> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('Missing webhook-id, webhook-timestamp or webhook-signature header.');
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not Unix seconds.');
  const tolerance = options.toleranceSeconds ?? 300;
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  const age = now - Number(timestamp);
  if (age > tolerance) throw new WebhookVerificationError('The webhook timestamp is too old.');
  if (age < -tolerance) throw new WebhookVerificationError('The webhook timestamp is too far in the future.');

  const expected = await sign(secret, id, timestamp, rawBody);
  const matches = signatures
    .split(' ')
    .map((entry) => entry.split(','))
    .filter(([version, value]) => version === 'v1' && value !== undefined)
    .some(([, value]) => {
      try {
        return constantTimeEqual(base64ToBytes(value as string), expected);
      } catch {
        return false;
      }
    });
  if (!matches) throw new WebhookVerificationError('No webhook signature matches.');

  const text = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new WebhookVerificationError('The webhook body is not JSON.');
  }
}

/**
 * The headers a sender puts on a delivery: for your own tests, or to check a setup end to end.
 */
export async function signWebhook(
  rawBody: string | Uint8Array,
  secret: string,
  { id, timestamp = Math.floor(Date.now() / 1000) }: { id: string; timestamp?: number },
): Promise<{ 'webhook-id': string; 'webhook-timestamp': string; 'webhook-signature': string }> {
  const signature = await sign(secret, id, String(timestamp), rawBody);
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${bytesToBase64(signature)}` };
}
