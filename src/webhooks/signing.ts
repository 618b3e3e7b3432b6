import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signatures (standardwebhooks.com v1): HMAC-SHA256 over
 * `${webhook-id}.${webhook-timestamp}.${body}` keyed with the bytes of `whsec_<base64>`,
 * sent as `v1,<base64>`; several space-separated signatures while a rotated secret is in grace.
 */

/** A new endpoint secret: 32 random bytes (the spec asks for 24–64). */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The three Standard Webhooks headers for one attempt, signed with every secret given. */
export function signedHeaders(secrets: string[], id: string, timestamp: number, body: string): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => signature(secret, id, timestamp, body)).join(' '),
  };
}
