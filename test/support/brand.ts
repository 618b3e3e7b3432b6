import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { issuePasswordLink } from '../../src/accounts/dashboard-users.js';
import type { Harness } from './harness.js';
import { pollUntil } from './http.js';
import type { ReceivedMail, TestSmtpServer } from './smtp-server.js';
import { accountIdOf, newEmail, PASSWORD, WebClient } from './web.js';

/**
 * A branded installation for the branding suites (docs/operations.md "Branding"): the settings,
 * and the fixtures that make every client page exist (an order, a webhook endpoint, the one-time
 * links of the signed-out pages).
 */
export const BRAND = {
  name: 'Acme Stars',
  color: '#0b6e4f',
  /** The colour as getComputedStyle reports it. */
  rgb: 'rgb(11, 110, 79)',
  supportEmail: 'help@acme.example',
  supportUrl: 'https://acme.example/help',
  termsUrl: 'https://acme.example/terms',
  privacyUrl: 'https://acme.example/privacy',
};

export const LOGO_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="120" height="28" viewBox="0 0 120 28"><rect width="28" height="28" rx="6" fill="#0b6e4f"/><text x="36" y="20" font-size="16">Acme</text></svg>\n';

/** The environment of a branded service; the logo is written to a temporary file. */
export function brandEnv(smtp: TestSmtpServer): Record<string, string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brand-'));
  const logo = path.join(dir, 'logo.svg');
  fs.writeFileSync(logo, LOGO_SVG);
  return {
    BRAND_NAME: BRAND.name,
    BRAND_LOGO_FILE: logo,
    BRAND_COLOR: BRAND.color,
    SUPPORT_EMAIL: BRAND.supportEmail,
    SUPPORT_URL: BRAND.supportUrl,
    TERMS_URL: BRAND.termsUrl,
    PRIVACY_URL: BRAND.privacyUrl,
    SMTP_URL: smtp.url,
    MAIL_FROM: `${BRAND.name} <noreply@acme.example>`,
    DEPOSIT_ADDRESS: '0:2cf55953e92efbeadab7ba725c3f93a0b23f842cbba72d7b8e6f510a70e422e3',
    WEBHOOK_ALLOW_LOOPBACK: '1',
    NOTIFY_RETRY_DELAYS_MS: '200',
  };
}

/** Any spelling of the default name. */
export const UNBRANDED = /starport/i;

export interface BrandFixtures {
  owner: { email: string; client: WebClient };
  /** Signed-out pages, each with a live one-time link where it needs one. */
  signedOut: string[];
  /** Pages of the signed-in owner, test and live. */
  signedIn: string[];
  /** Every e-mail the fixtures caused. */
  mails: ReceivedMail[];
}

const mailTo = (smtp: TestSmtpServer, to: string, subject: RegExp) =>
  pollUntil(
    async () => smtp.mails.find((m) => m.to.includes(to) && subject.test(m.subject)),
    (mail) => mail !== undefined,
    { what: `an e-mail to ${to} (${subject})` },
  ) as Promise<ReceivedMail>;

const linkIn = (mail: ReceivedMail, route: string) => {
  const match = new RegExp(`https?://[^\\s]+(/${route}/[A-Za-z0-9_-]+)`).exec(mail.text);
  expect(match, `a /${route}/ link in "${mail.subject}"`).toBeTruthy();
  return (match as RegExpExecArray)[1] as string;
};

/**
 * An owner signed up through the dashboard, with a test order and a webhook endpoint; an
 * invitee, a forgotten password and a set-password link, so the signed-out pages of each
 * one-time link can be opened.
 */
export async function brandFixtures(h: Harness, smtp: TestSmtpServer): Promise<BrandFixtures> {
  const client = new WebClient(h);
  const email = newEmail('brand');
  const signup = await client.signUp(email);
  expect(signup.status, signup.body.slice(0, 300)).toBe(200);
  const testKey = /value="(sk_test_[0-9A-Za-z]+)"/.exec(signup.body)?.[1] as string;
  expect(testKey).toBeTruthy();
  const verification = await mailTo(smtp, email, /^Verify your e-mail address/);

  await h.credit(await accountIdOf(h, email), 'test', '10');
  const api = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await h.inject({
      method: 'POST',
      url: `/api/v1${url}`,
      headers: { authorization: `Bearer ${testKey}`, 'content-type': 'application/json', ...headers },
      payload: JSON.stringify(body),
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json() as { id: string };
  };
  const order = await api('/orders', { product: 'stars', recipient: '@brand_fan', quantity: 50 }, { 'idempotency-key': `brand-${Date.now()}` });
  const endpoint = await api('/webhook_endpoints', { url: 'http://127.0.0.1:9/hooks' });

  const invitee = newEmail('brand-invitee');
  const invited = await client.submit('/team', { email: invitee, role: 'developer' }, '/team/invite');
  expect(invited.status, invited.body.slice(0, 300)).toBeLessThan(400);
  const invite = await mailTo(smtp, invitee, /invited/);

  const forgetful = new WebClient(h);
  await forgetful.submit('/forgot-password', { email });
  const reset = await mailTo(smtp, email, /^Reset your/);

  const setPassword = await issuePasswordLink(h.service.db, email);
  const signedInPages = ['/', '/top-up', '/keys', '/keys/reissue?mode=test', '/orders', `/orders/${order.id}`, '/balance', '/webhooks', '/alerts', '/guide'];
  return {
    owner: { email, client },
    signedOut: [
      '/login',
      '/signup',
      '/forgot-password',
      `/set-password/${setPassword.token}`,
      linkIn(reset, 'reset-password'),
      linkIn(invite, 'invite'),
      linkIn(verification, 'verify-email'),
      '/no-such-page',
      '/docs',
    ],
    signedIn: [
      ...signedInPages.map((p) => (p === '/' ? '/test' : `/test${p}`)),
      ...signedInPages.filter((p) => !p.startsWith('/orders/')),
      `/test/webhooks/${endpoint.id}`,
      '/account',
      '/account/notifications',
      '/account/two-factor',
      '/team',
      '/activity',
    ],
    mails: [verification, invite, reset],
  };
}

export { PASSWORD };
