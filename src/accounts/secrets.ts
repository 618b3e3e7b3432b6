import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** Random secrets handed to a browser (session ids, link tokens): 256 bits, base64url, 43 characters. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

const SECRET_FORMAT = /^[A-Za-z0-9_-]{43}$/;

/** Cheap shape check before any database lookup. */
export function isSecretFormat(value: unknown): value is string {
  return typeof value === 'string' && SECRET_FORMAT.test(value);
}

/** What the database stores instead of a secret: a leaked table cannot be replayed as cookies or links. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
