import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { generate } from 'otplib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { HAVE_CHROMIUM, launchChromium } from '../support/browser.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PROJECT_ROOT } from '../support/cli.js';
import { testEngine } from '../support/database.js';
import { type Harness, startHarness } from '../support/harness.js';

/**
 * Teams and two-factor sign-in in a real browser (Debian's Chromium, as test/browser/dashboard.test.ts):
 * an owner turns on TOTP by computing codes from the secret the page shows, signs in with a code
 * and with a recovery code, is throttled after wrong codes; invites a developer and a viewer, who
 * each accept in their own browser and are walked through what they may and may not do (a
 * forbidden form posted directly answers 403 and changes nothing); the owner removes the viewer,
 * whose session cookie then no longer works; the activity log names each actor. axe-core on
 * every new page must find nothing serious.
 */
const ARTIFACTS = path.join(PROJECT_ROOT, 'test-artifacts', 'browser-team', testEngine);
const AXE_SOURCE = HAVE_CHROMIUM ? fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8') : '';
const PASSWORD = 'a long browser passphrase';

describe.skipIf(!HAVE_CHROMIUM || testEngine === 'postgres')('teams and two-factor in Chromium', { timeout: 180_000 }, () => {
  let h: Harness;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  let shot = 0;

  beforeAll(async () => {
    fs.rmSync(ARTIFACTS, { recursive: true, force: true });
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    h = await startHarness();
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
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
    )) as {
      id: string;
      impact: string;
    }[];
    const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious, `axe on ${name}: ${JSON.stringify(serious)}`).toEqual([]);
    await page.screenshot({ path: path.join(ARTIFACTS, `${String(++shot).padStart(2, '0')}-${name}.png`), fullPage: true });
  }

  let lastStep = 0;
  /** A TOTP code for a later time step than any used before (the server takes each step once). */
  const code = async (secret: string): Promise<string> => {
    const now = Math.floor(Date.now() / 30_000);
    lastStep = Math.max(lastStep + 1, now - 1);
    expect(lastStep).toBeLessThanOrEqual(now + 1);
    return generate({ secret, epoch: lastStep * 30 });
  };

  async function logIn(page: Page, email: string): Promise<void> {
    await page.goto(`${h.url}/login`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
  }

  /** Posts a form directly (no page offers it), with the session's CSRF token: what a crafted request would do. */
  async function postDirect(page: Page, url: string, form: Record<string, string>): Promise<number> {
    const token = await page.locator('input[name="_csrf"]').first().getAttribute('value');
    const response = await page.request.post(`${h.url}${url}`, { form: { ...form, _csrf: token ?? '' } });
    return response.status();
  }

  test('two-factor, invites, roles, removal and the activity log', async () => {
    const ownerEmail = `owner-${Date.now()}@example.com`;
    const owner = await newPage();
    await owner.goto(`${h.url}/signup`);
    await owner.getByLabel('E-mail').fill(ownerEmail);
    await owner.getByLabel('Password').fill(PASSWORD);
    await owner.getByRole('button', { name: 'Create account' }).click();
    await owner.getByTestId('new-key-test').waitFor();

    // ---- Enrol: the QR code and the secret; the code computed from the secret ----
    await owner.goto(`${h.url}/account`);
    await check(owner, 'account');
    await owner.getByTestId('enable-two-factor').click();
    await owner.waitForURL(`${h.url}/account/two-factor`);
    expect(await owner.locator('img.qr').evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(0);
    await check(owner, 'two-factor-enrol');
    const secret = (await owner.locator('#totp-secret').innerText()).trim();
    await owner.getByLabel('6-digit code').fill(await code(secret));
    await owner.getByRole('button', { name: 'Turn on' }).click();
    const codes = (await owner.getByTestId('recovery-codes').locator('code').allInnerTexts()).map((c) => c.trim());
    expect(codes).toHaveLength(10);
    await check(owner, 'recovery-codes');

    // ---- Sign in with a code ----
    await owner.goto(`${h.url}/account`);
    await owner.getByRole('button', { name: 'Log out' }).click();
    await logIn(owner, ownerEmail);
    await owner.waitForURL(`${h.url}/login/code`);
    await check(owner, 'login-code');
    await owner.getByLabel('Code').fill('000000');
    await owner.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => owner.getByRole('alert').innerText()).toContain('not right');
    await owner.getByLabel('Code').fill(await code(secret));
    await owner.getByRole('button', { name: 'Continue' }).click();
    await owner.waitForURL(`${h.url}/`);

    // ---- Sign in with a recovery code; the same one again is refused ----
    await owner.getByRole('button', { name: 'Log out' }).click();
    await logIn(owner, ownerEmail);
    await owner.getByLabel('Code').fill(codes[0] as string);
    await owner.getByRole('button', { name: 'Continue' }).click();
    await owner.waitForURL(`${h.url}/`);

    // ---- Invite a developer and a viewer ----
    const invite = async (email: string, role: string) => {
      await owner.goto(`${h.url}/team`);
      await owner.getByLabel('E-mail').fill(email);
      await owner.getByLabel('Role', { exact: true }).selectOption(role);
      await owner.getByRole('button', { name: 'Send invite' }).click();
      return (await owner.locator('#invite-link').innerText()).trim();
    };
    const devEmail = `dev-${Date.now()}@example.com`;
    const viewerEmail = `viewer-${Date.now()}@example.com`;
    const devLink = await invite(devEmail, 'developer');
    await check(owner, 'team-invite');
    const viewerLink = await invite(viewerEmail, 'viewer');

    const accept = async (link: string) => {
      const page = await newPage();
      await page.goto(link);
      await check(page, `invite-${shot}`);
      await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
      await page.getByLabel('Repeat the password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Join and log in' }).click();
      await page.waitForURL(`${h.url}/?notice=joined`);
      return page;
    };
    const developer = await accept(devLink);
    const viewer = await accept(viewerLink);

    // ---- The developer: keys, webhooks, test funds; not the team ----
    await developer.goto(`${h.url}/test/keys`);
    expect(await developer.locator('h1').innerText()).toBe('API keys');
    await developer.goto(`${h.url}/test/top-up`);
    await developer.getByLabel('Amount').fill('7');
    await developer.getByRole('button', { name: /Add test funds/ }).click();
    await developer.waitForURL(/notice=funds_added/);
    const team = await developer.goto(`${h.url}/team`);
    expect(team?.status()).toBe(403);
    await check(developer, 'developer-forbidden');
    await developer.goto(`${h.url}/`);
    expect(await postDirect(developer, '/team/invite', { email: 'sneaky@example.com', role: 'owner' })).toBe(403);

    // ---- The viewer: reads, never a key, no form works ----
    await viewer.goto(`${h.url}/test/orders`);
    expect(await viewer.locator('h1').innerText()).toContain('Orders');
    expect(await viewer.locator('.mainnav a', { hasText: 'API keys' }).count()).toBe(0);
    expect((await viewer.goto(`${h.url}/test/keys`))?.status()).toBe(403);
    await viewer.goto(`${h.url}/test/top-up`);
    const accountId = (await h.service.db.kysely.selectFrom('accounts').select('id').where('email', '=', ownerEmail).executeTakeFirstOrThrow()).id;
    const balance = async () =>
      (await h.service.db.kysely.selectFrom('balances').select('available').where('account_id', '=', accountId).where('mode', '=', 'test').executeTakeFirstOrThrow()).available;
    const before = await balance();
    expect(await postDirect(viewer, '/test/top-up', { amount: '100' })).toBe(403);
    expect(await postDirect(viewer, '/test/keys/reissue', { mode: 'test', replaces: '' })).toBe(403);
    expect(await balance()).toBe(before);

    // ---- Remove the viewer: their cookie stops working at once ----
    await owner.goto(`${h.url}/team`);
    await owner.getByTestId(`remove-${viewerEmail}`).click();
    await owner.waitForURL(`${h.url}/team?notice=removed`);
    await viewer.goto(`${h.url}/test/orders`);
    await viewer.waitForURL(/\/login/);

    // ---- Throttled: wrong codes count like wrong passwords ----
    const third = await newPage();
    await logIn(third, ownerEmail);
    for (let i = 0; i < 5; i++) {
      await third.getByLabel('Code').fill('111111');
      await third.getByRole('button', { name: 'Continue' }).click();
      await third.getByRole('alert').waitFor();
    }
    await third.getByLabel('Code').fill(await code(secret));
    await third.getByRole('button', { name: 'Continue' }).click();
    await expect.poll(() => third.getByRole('alert').innerText()).toContain('Too many failed attempts');

    // ---- The activity log: each step with its actor ----
    await owner.goto(`${h.url}/activity`);
    await check(owner, 'activity');
    const rows = await owner
      .locator('tbody tr')
      .evaluateAll((trs) =>
        trs.map(
          (tr) =>
            `${(tr as unknown as { dataset: { action: string } }).dataset.action} ${(tr.querySelector('[data-testid="actor"]') as unknown as { textContent: string }).textContent.trim()}`,
        ),
      );
    for (const expected of [
      `two_factor.enable ${ownerEmail}`,
      `dashboard.sign_in ${ownerEmail}`,
      `dashboard.sign_in_failed ${ownerEmail}`,
      `team.invite ${ownerEmail}`,
      `team.join ${devEmail}`,
      `team.join ${viewerEmail}`,
      `dashboard.test_funds ${devEmail}`,
      `team.remove ${ownerEmail}`,
    ]) {
      expect(rows, expected).toContain(expected);
    }
  });
});
