import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LOGIN_FAILURES_PER_EMAIL, LOGIN_FAILURES_PER_IP, SIGNUPS_PER_IP } from '../../src/accounts/auth-throttle.js';
import { type Harness, startHarness } from '../support/harness.js';
import { newEmail, PASSWORD, signedUp, WebClient } from '../support/web.js';

/**
 * Login throttling (kept in the database, table auth_attempts): per e-mail and per client IP,
 * over 15 minutes; unknown e-mails are throttled exactly like known ones. Sign-ups per IP.
 */
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const THROTTLED = 'Too many failed attempts.';

describe('login throttling per e-mail', () => {
  test(`after ${LOGIN_FAILURES_PER_EMAIL} failures the e-mail is refused, even with the right password and from another IP`, async () => {
    const { email } = await signedUp(h, '10.2.0.1');
    for (let i = 0; i < LOGIN_FAILURES_PER_EMAIL; i++) {
      const page = await new WebClient(h, `10.2.0.${10 + i}`).logIn(email, `wrong password ${i}`);
      expect(page.status).toBe(401);
    }
    const right = new WebClient(h, '10.2.0.50');
    const page = await right.logIn(email, PASSWORD);
    expect(page.status).toBe(429);
    expect(page.body).toContain(THROTTLED);
    expect(right.session).toBeUndefined();

    // Once the window has passed (the rows are aged here), the right password works again.
    await h.service.db.kysely
      .updateTable('auth_attempts')
      .set({ created_at: Date.now() - 16 * 60 * 1000 })
      .where('email', '=', email)
      .execute();
    const later = await right.logIn(email, PASSWORD);
    expect(later.status).toBe(303);
  });

  test('an unknown e-mail is throttled the same way (no account enumeration)', async () => {
    const unknown = newEmail('unknown');
    const statuses: number[] = [];
    for (let i = 0; i <= LOGIN_FAILURES_PER_EMAIL; i++) statuses.push((await new WebClient(h, `10.2.1.${i + 1}`).logIn(unknown, 'whatever password')).status);
    expect(statuses).toEqual([...Array(LOGIN_FAILURES_PER_EMAIL).fill(401), 429]);
  });

  test('a successful login clears the e-mail’s failures', async () => {
    const { email } = await signedUp(h, '10.2.2.1');
    for (let i = 0; i < LOGIN_FAILURES_PER_EMAIL - 1; i++) await new WebClient(h, '10.2.2.2').logIn(email, 'wrong password!');
    expect((await new WebClient(h, '10.2.2.2').logIn(email)).status).toBe(303);
    for (let i = 0; i < LOGIN_FAILURES_PER_EMAIL - 1; i++) expect((await new WebClient(h, '10.2.2.2').logIn(email, 'wrong password!')).status).toBe(401);
  });

  test('a throttled login is answered before any password hashing', async () => {
    const email = newEmail('fast');
    for (let i = 0; i < LOGIN_FAILURES_PER_EMAIL; i++) await new WebClient(h, '10.2.3.1').logIn(email, 'wrong password!');
    const started = performance.now();
    const page = await new WebClient(h, '10.2.3.2').logIn(email, 'wrong password!');
    expect(page.status).toBe(429);
    // Two requests (form + post) without argon2: well under one hash (~40 ms+) on any machine.
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('login throttling per IP', () => {
  test(`after ${LOGIN_FAILURES_PER_IP} failures from one IP (any e-mails) that IP is refused; other IPs are not`, async () => {
    const ip = '10.2.9.9';
    for (let i = 0; i < LOGIN_FAILURES_PER_IP; i++) {
      expect((await new WebClient(h, ip).logIn(newEmail('spray'), 'password spray')).status).toBe(401);
    }
    const { email } = await signedUp(h, '10.2.9.10');
    const blocked = await new WebClient(h, ip).logIn(email);
    expect(blocked.status).toBe(429);
    expect(blocked.body).toContain(THROTTLED);
    expect((await new WebClient(h, '10.2.9.11').logIn(email)).status).toBe(303);
  });
});

describe('sign-up throttling per IP', () => {
  test(`at most ${SIGNUPS_PER_IP} sign-ups per IP per hour`, async () => {
    const ip = '10.2.8.8';
    for (let i = 0; i < SIGNUPS_PER_IP; i++) expect((await new WebClient(h, ip).signUp()).status).toBe(200);
    const refused = await new WebClient(h, ip).signUp();
    expect(refused.status).toBe(429);
    expect(refused.body).toContain('Too many sign-ups');
    expect((await new WebClient(h, '10.2.8.9').signUp()).status).toBe(200);
  });
});
