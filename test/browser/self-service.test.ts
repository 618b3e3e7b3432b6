import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { generate, generateSecret } from 'otplib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CHROMIUM, HAVE_CHROMIUM, launchChromium } from '../support/browser.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { issuePasswordLink } from '../../src/accounts/dashboard-users.js';
import { PROJECT_ROOT } from '../support/cli.js';
import { testEngine } from '../support/database.js';
import { type Harness, startHarness } from '../support/harness.js';
import { pollUntil } from '../support/http.js';
import { type ReceivedMail, startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';

/**
 * Self-service sign-in in Chromium against a real SMTP server (smtp-server, mails parsed with
 * mailparser): sign-up → the verification mail → its link → "Verified", with
 * SIGNUP_VERIFY=required refusing the live key (403 email_unverified) until then; forgot
 * password → the mail → a new password → the other browser's session is gone → sign-in asks
 * for the two-factor code; an invite e-mailed and accepted in a second browser context; a
 * revoked invite's link refuses. axe-core on each new page must find nothing serious.
 */
const ARTIFACTS = path.join(PROJECT_ROOT, 'test-artifacts', 'browser-self-service', testEngine);
const AXE_SOURCE = HAVE_CHROMIUM ? fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8') : '';
const PASSWORD = 'a long browser passphrase';

if (!HAVE_CHROMIUM) {
  if (process.env.BROWSER_TESTS === '1') throw new Error(`BROWSER_TESTS=1 but ${CHROMIUM} is missing`);
  console.warn(`\n*** ${CHROMIUM} not found: the self-service browser tests are SKIPPED ***\n`);
}

describe.skipIf(!HAVE_CHROMIUM || testEngine === 'postgres')('self-service sign-in in Chromium', { timeout: 180_000 }, () => {
  let h: Harness;
  let smtp: TestSmtpServer;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  let shot = 0;

  beforeAll(async () => {
    fs.rmSync(ARTIFACTS, { recursive: true, force: true });
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    smtp = await startSmtpServer();
    h = await startHarness({ SMTP_URL: smtp.url, MAIL_FROM: 'Starport <noreply@example.com>', SIGNUP_VERIFY: 'required' });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await smtp?.close();
  });

  async function newPage(): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US' });
    contexts.push(context);
    return context.newPage();
  }

  async function check(page: Page, name: string): Promise<void> {
    await page.waitForLoadState('load');
    if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(AXE_SOURCE);
    const violations = (await page.evaluate(
      'window.axe.run(document, { resultTypes: ["violations"] }).then(r => r.violations.map(v => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ")) })))',
    )) as { id: string; impact: string }[];
    const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious, `axe on ${name}: ${JSON.stringify(serious)}`).toEqual([]);
    await page.screenshot({ path: path.join(ARTIFACTS, `${String(++shot).padStart(2, '0')}-${name}.png`), fullPage: true });
  }

  /** The link (path and query from our origin) in the newest mail to `to` whose subject matches. */
  async function mailedLink(to: string, subject: RegExp): Promise<{ mail: ReceivedMail; url: string }> {
    const mails = await pollUntil(
      async () => smtp.mails.filter((m) => m.to.includes(to) && subject.test(m.subject)),
      (found) => found.length > 0,
      { what: `a mail to ${to} (${subject})`, timeoutMs: 20_000 },
    );
    const mail = mails.at(-1) as ReceivedMail;
    const url = new RegExp(`${h.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/[a-z-]+/[A-Za-z0-9_-]{43}`).exec(mail.text)?.[0];
    expect(url, mail.text).toBeTruthy();
    // The HTML part carries the same link.
    expect(mail.html).toContain(url as string);
    return { mail, url: url as string };
  }

  async function logIn(page: Page, email: string, password = PASSWORD): Promise<void> {
    await page.goto(`${h.url}/login`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
  }

  const balance = (key: string) => fetch(`${h.url}/api/v1/balance`, { headers: { authorization: `Bearer ${key}` } });

  test('sign-up → verification mail → link → verified; the live key waits for it', async () => {
    const email = `verify-${Date.now()}@example.com`;
    const page = await newPage();
    await page.goto(`${h.url}/signup`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    const liveKey = await page.getByTestId('new-key-live').inputValue();
    const refused = await balance(liveKey);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('email_unverified');

    await page.goto(`${h.url}/test`);
    await page.getByTestId('verify-banner').waitFor();
    await check(page, 'verify-banner');
    const { url } = await mailedLink(email, /Verify your e-mail address/);
    await page.goto(url);
    await check(page, 'verify-link');
    await page.getByRole('button', { name: 'Verify my address' }).click();
    await page.waitForURL(`${h.url}/account?notice=email_verified`);
    expect(await page.getByTestId('email-status').innerText()).toBe('Verified');
    expect(await page.getByTestId('verify-banner').count()).toBe(0);
    await check(page, 'verified');
    expect((await balance(liveKey)).status).toBe(200);
  });

  test('forgot password → mail → new password → other sessions gone → sign-in with two-factor', async () => {
    const email = `reset-${Date.now()}@example.com`;
    await createAccount(h.service.db, email);
    const link = await issuePasswordLink(h.service.db, email);
    const secret = generateSecret();
    // Set the first password through the operator's link (the fallback), then turn two-factor on.
    const first = await newPage();
    await first.goto(`${h.url}/set-password/${link.token}`);
    await first.getByLabel('New password', { exact: true }).fill(PASSWORD);
    await first.getByLabel('Repeat the new password').fill(PASSWORD);
    await first.getByRole('button', { name: 'Set password and log in' }).click();
    await first.waitForURL(/\/\?notice=password_set$/);
    await h.service.db.kysely.updateTable('people').set({ totp_secret: secret, totp_enabled_at: Date.now() }).where('email', '=', email).execute();

    const other = await newPage();
    await other.goto(`${h.url}/login`);
    await other.getByRole('link', { name: 'Forgot your password?' }).click();
    await other.waitForURL(`${h.url}/forgot-password`);
    await check(other, 'forgot-password');
    await other.getByLabel('E-mail').fill(email);
    await other.getByRole('button', { name: 'Send me a link' }).click();
    await other.getByTestId('reset-sent').waitFor();
    await check(other, 'reset-sent');
    const { url } = await mailedLink(email, /Reset your Starport password/);
    await other.goto(url);
    await check(other, 'reset-form');
    await other.getByLabel('New password', { exact: true }).fill('the new browser passphrase');
    await other.getByLabel('Repeat the new password').fill('the new browser passphrase');
    await other.getByRole('button', { name: 'Set the new password' }).click();
    await other.waitForURL(`${h.url}/login?notice=password_reset`);

    // The first browser's session ended.
    await first.goto(`${h.url}/orders`);
    await first.waitForURL(/\/login\?/);
    // The notice arrived; the link works once.
    await pollUntil(
      async () => smtp.mails.filter((m) => m.to.includes(email) && /password was changed/.test(m.subject)),
      (found) => found.length === 1,
      { what: 'the "password changed" notice', timeoutMs: 20_000 },
    );
    await other.goto(url);
    expect(await other.locator('main').innerText()).toMatch(/already used/);

    // Two-factor is still asked.
    await logIn(other, email, 'the new browser passphrase');
    await other.waitForURL(`${h.url}/login/code`);
    await other.getByLabel('Code').fill(await generate({ secret, epoch: Math.floor(Date.now() / 1000) }));
    await other.getByRole('button', { name: 'Continue' }).click();
    await other.waitForURL(`${h.url}/`);
  });

  test('invite by e-mail → accepted in a second browser context; a revoked invite refuses', async () => {
    const ownerEmail = `owner-${Date.now()}@example.com`;
    await createAccount(h.service.db, ownerEmail);
    const link = await issuePasswordLink(h.service.db, ownerEmail);
    const owner = await newPage();
    await owner.goto(`${h.url}/set-password/${link.token}`);
    await owner.getByLabel('New password', { exact: true }).fill(PASSWORD);
    await owner.getByLabel('Repeat the new password').fill(PASSWORD);
    await owner.getByRole('button', { name: 'Set password and log in' }).click();
    await owner.waitForURL(/\/\?notice=password_set$/);

    const invite = async (email: string) => {
      await owner.goto(`${h.url}/team`);
      await owner.getByLabel('E-mail').fill(email);
      await owner.getByLabel('Role', { exact: true }).selectOption('developer');
      await owner.getByRole('button', { name: 'Send invite' }).click();
      await owner.getByTestId('invite-mailed').waitFor();
    };
    const teammate = `mate-${Date.now()}@example.com`;
    await invite(teammate);
    await check(owner, 'invite-mailed');
    const { mail, url } = await mailedLink(teammate, /invited to a Starport account/);
    expect(mail.text).toContain(`${ownerEmail} invites you to join the Starport account ${ownerEmail} as developer.`);
    const mate = await newPage();
    await mate.goto(url);
    await mate.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await mate.getByLabel('Repeat the password').fill(PASSWORD);
    await mate.getByRole('button', { name: 'Join and log in' }).click();
    await mate.waitForURL(`${h.url}/?notice=joined`);
    expect(await mate.getByTestId('current-account').innerText()).toContain(ownerEmail);

    const revoked = `revoked-${Date.now()}@example.com`;
    await invite(revoked);
    const sent = await mailedLink(revoked, /invited to a Starport account/);
    await owner.goto(`${h.url}/team`);
    await owner.getByTestId(`revoke-${revoked}`).click();
    await owner.waitForURL(`${h.url}/team?notice=invite_revoked`);
    const stranger = await newPage();
    const answer = await stranger.goto(sent.url);
    expect(answer?.status()).toBe(404);
    expect(await stranger.locator('main').innerText()).toMatch(/This invite was revoked\. .*revoked it\./);
    await check(stranger, 'invite-revoked');
  });
});
