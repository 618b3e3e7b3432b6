import { createHmac } from 'node:crypto';
import { safeEqual } from '../../accounts/secrets.js';

/**
 * CSRF tokens, stateless and tied to what the browser already holds: for a logged-in user,
 * HMAC(key, session id hash) — a synchronizer token that changes with every new session; on
 * the signed-out forms (log in, sign up, set password), HMAC(key, a random pre-session cookie)
 * — a signed double-submit token, so a cookie planted by another site cannot be paired with a
 * token without the key. The key is the dashboard's stored secret.
 */
export class CsrfTokens {
  constructor(private readonly key: Buffer) {}

  private sign(purpose: string, value: string): string {
    return createHmac('sha256', this.key).update(`${purpose}\0${value}`).digest('base64url');
  }

  forSession(sessionIdHash: string): string {
    return this.sign('session', sessionIdHash);
  }

  forPreSession(cookieValue: string): string {
    return this.sign('pre-session', cookieValue);
  }

  check(expected: string, given: unknown): boolean {
    return typeof given === 'string' && safeEqual(expected, given);
  }
}
