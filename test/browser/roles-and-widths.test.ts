import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PROJECT_ROOT } from '../support/cli.js';
import { testEngine } from '../support/database.js';
import { type Harness, startHarness } from '../support/harness.js';
import { MEASURE } from '../support/page-fit.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';
import { accountIdOf, newEmail, PASSWORD, WebClient } from '../support/web.js';

/**
 * Every dashboard page, as an owner, a developer and a viewer of one account, in Debian's
 * Chromium (as test/browser/dashboard.test.ts), with data on every page (orders with long
 * external ids, a webhook endpoint with deliveries, low-balance alerts in both modes, members).
 *
 * - What a role is shown, it may use. Every POST form on a page is submitted by the server's
 *   own rules: posted with a wrong CSRF token, a form the role may use is refused for the token
 *   ("This form has expired"), one it may not is refused for the role first (the guard runs
 *   before the token check; nothing changes either way). A form of the second kind on the page
 *   fails the test. Every link on the page is followed: none may answer 403.
 * - A page the role may not open is the dashboard's own 403 page, with the menu.
 * - Every page, /docs included, fits 390, 1280 and 1920 px: the page is no wider than the
 *   window, no table is wider than its box, no cell's content is cut, nothing sticks out of its
 *   card, and on phones every table cell carries its label.
 * - axe-core finds nothing serious on each page at 1280 px.
 */
const CHROMIUM = '/usr/bin/chromium';
const HAVE_CHROMIUM = fs.existsSync(CHROMIUM);
const ARTIFACTS = path.join(PROJECT_ROOT, 'test-artifacts', 'browser-roles', testEngine);
const AXE_SOURCE = HAVE_CHROMIUM ? fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8') : '';
const RAW_ADDRESS = '0:2cf55953e92efbeadab7ba725c3f93a0b23f842cbba72d7b8e6f510a70e422e3';
const WIDTHS = [1280, 390, 1920];
type Role = 'owner' | 'developer' | 'viewer';

/** A condition polled until true, with a deadline (no sleeps for timing). */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe.skipIf(!HAVE_CHROMIUM || testEngine === 'postgres')('each role sees what it may do, on pages that fit', { timeout: 480_000 }, () => {
  let h: Harness;
  let receiver: Receiver;
  let browser: Browser;
  const clients = new Map<Role, WebClient>();
  const ids: Record<string, string> = {};

  async function join(owner: WebClient, email: string, role: string, ip: string): Promise<WebClient> {
    const page = await owner.submit('/team', { email, role }, '/team/invite');
    const invitePath = new URL(/id="invite-link"[^>]*>([^<]+)</.exec(page.body)?.[1] as string).pathname;
    const client = new WebClient(h, ip);
    const form = await client.get(invitePath);
    expect((await client.post(invitePath, { password: PASSWORD, password_again: PASSWORD, _csrf: form.csrf as string })).status).toBe(303);
    return client;
  }

  beforeAll(async () => {
    fs.rmSync(ARTIFACTS, { recursive: true, force: true });
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    h = await startHarness({ DEPOSIT_ADDRESS: RAW_ADDRESS, WEBHOOK_ALLOW_LOOPBACK: '1' });
    receiver = await startReceiver();
    receiver.fallback = { status: 204 };
    // The owner, with both keys from sign-up, and a developer and a viewer who joined by invite.
    const owner = new WebClient(h, '10.43.0.1');
    const ownerEmail = newEmail('owner');
    const signup = await owner.signUp(ownerEmail);
    const testKey = /value="(sk_test_[0-9A-Za-z]+)"/.exec(signup.body)?.[1] as string;
    expect(testKey).toBeTruthy();
    clients.set('owner', owner);
    clients.set('developer', await join(owner, newEmail('developer-with-a-rather-long-address'), 'developer', '10.43.0.2'));
    clients.set('viewer', await join(owner, newEmail('viewer'), 'viewer', '10.43.0.3'));
    // An invite not yet used; its expiry reads like every time on the dashboard, not as ISO.
    const invited = await owner.submit('/team', { email: newEmail('pending'), role: 'viewer' }, '/team/invite');
    expect(invited.body).toMatch(/It works once, until <time datetime="[^"]+">\d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} UTC<\/time>/);
    const accountId = await accountIdOf(h, ownerEmail);
    // Test funds, orders (long external ids, a long recipient), a low-balance alert in each mode.
    expect((await owner.submit('/test/top-up', { amount: '100' })).status).toBe(303);
    const order = async (recipient: string, externalId: string) => {
      const response = await fetch(`${h.url}/api/v1/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${testKey}`, 'content-type': 'application/json', 'idempotency-key': `roles-${externalId}` },
        body: JSON.stringify({ product: 'stars', recipient, quantity: 1500, external_id: externalId }),
      });
      expect(response.status).toBe(201);
      return ((await response.json()) as { id: string }).id;
    };
    ids.order = await order('@a_rather_long_username_of_32_ch', 'checkout-2024-000000000000000000000001');
    await order('@durov', 'checkout-2024-000000000000000000000002');
    await order('@test_failed', 'checkout-2024-000000000000000000000003');
    expect((await owner.submit('/test/alerts', { threshold: '1000000' })).status).toBe(303);
    expect((await owner.submit('/alerts', { threshold: '25' })).status).toBe(303);
    // A webhook endpoint with a delivered test event in its log.
    expect((await owner.submit('/test/webhooks', { url: `${receiver.url}/hooks/starport/a-fairly-long-path-for-the-receiver` })).status).toBe(200);
    ids.endpoint = (await h.service.db.kysely.selectFrom('webhook_endpoints').select('id').where('account_id', '=', accountId).executeTakeFirstOrThrow()).id;
    const endpointPage = `/test/webhooks/${ids.endpoint}`;
    expect((await owner.submit(endpointPage, {}, `${endpointPage}/test`)).status).toBe(303);
    await until('a delivery attempt in the log', async () => (await owner.get(endpointPage)).body.includes('data-attempt='));
    await until('every test order final', async () => !/data-status="(processing|fulfillment_pending)"/.test((await owner.get('/test/orders')).body));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    await h?.close();
  });

  async function pageAs(role: Role): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, deviceScaleFactor: 1, locale: 'en-US' });
    const session = clients.get(role)?.session as string;
    await context.addCookies([{ name: 'sp_session', value: session, url: h.url }]);
    return context.newPage();
  }

  const pages = () => [
    '/',
    '/test',
    '/top-up',
    '/top-up?asset=usdt',
    '/test/top-up',
    '/keys',
    '/test/keys',
    '/keys/reissue?mode=live',
    '/test/keys/reissue?mode=test',
    '/orders',
    '/test/orders',
    `/test/orders/${ids.order}`,
    '/balance',
    '/test/balance',
    '/statements',
    `/statements/${new Date().toISOString().slice(0, 7)}`,
    '/test/statements',
    `/test/statements/${new Date().toISOString().slice(0, 7)}`,
    '/webhooks',
    '/test/webhooks',
    `/test/webhooks/${ids.endpoint}`,
    '/alerts',
    '/test/alerts',
    '/guide',
    '/test/guide',
    '/account',
    '/team',
    '/activity',
    '/docs',
  ];

  /** Whether the server refuses `role` this form: posted with a wrong token, the role check answers first. */
  async function refusedForRole(page: Page, action: string): Promise<boolean> {
    const response = await page.request.post(`${h.url}${action}`, { form: { _csrf: 'not-the-token' }, maxRedirects: 0 });
    const text = await response.text();
    expect(response.status(), `${action} with a wrong token`).toBe(403);
    return text.includes('Not available to your role');
  }

  test.each(['viewer', 'developer', 'owner'] as Role[])('%s', async (role) => {
    const page = await pageAs(role);
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(`page error on ${page.url()}: ${error.message}`));
    const followed = new Map<string, number>();
    const probed = new Map<string, boolean>();
    let shot = 0;
    let axed403 = false;
    for (const url of pages()) {
      // Each width loads the page afresh, as a phone or a wide screen would.
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 860 });
        const response = await page.goto(`${h.url}${url}`);
        await page.waitForLoadState('load');
        const status = response?.status();
        expect([200, 403], `${role} ${url}: ${status}`).toContain(status);
        const measured = (await page.evaluate(MEASURE)) as string[];
        for (const p of measured) problems.push(`${role} ${url} at ${width}px: ${p}`);
        // Screenshots of the phone pages (not /docs: a very tall page, slow to capture) and of the 403 page.
        if ((role === 'owner' && width === 390 && url !== '/docs') || (status === 403 && width === 1280)) {
          const name = `${String(++shot).padStart(3, '0')}-${role}-${width}-${url.replace(/[^a-z0-9]+/gi, '-').replace(/^-|-$/g, '') || 'overview'}.png`;
          await page.screenshot({ path: path.join(ARTIFACTS, name), fullPage: true });
        }
        if (width !== 1280) continue;

        if (status === 403) {
          // The dashboard's own page: the menu, and the reason.
          expect(await page.locator('h1').innerText()).toBe('Not available to your role');
          expect(await page.locator('.mainnav a').count(), `${role} ${url}: the 403 page has the menu`).toBeGreaterThan(0);
          expect(await page.locator('main').innerText()).toContain(`Your role on this account is ${role}`);
        }
        // Every form on the page is one the server takes from this role.
        const forms = (await page
          .locator('form[method="post"]')
          .evaluateAll((list) =>
            list.map((form) => ({ action: form.getAttribute('action') ?? '', label: (form.textContent ?? '').trim().replace(/\s+/g, ' ').slice(0, 60) })),
          )) as { action: string; label: string }[];
        for (const form of forms) {
          if (form.action === '/logout') continue;
          if (!probed.has(form.action)) probed.set(form.action, await refusedForRole(page, form.action));
          if (probed.get(form.action)) problems.push(`${role} ${url}: "${form.label}" posts to ${form.action}, which the server refuses this role`);
        }
        // Every link leads to a page this role may open.
        const links = (await page.locator('a[href^="/"]').evaluateAll((list) => list.map((a) => a.getAttribute('href') ?? ''))) as string[];
        for (const link of links) {
          if (!followed.has(link)) {
            const linked = await page.request.get(`${h.url}${link}`, { maxRedirects: 0, headers: { accept: 'text/html' } });
            followed.set(link, linked.status());
          }
          if (followed.get(link) === 403) problems.push(`${role} ${url}: links to ${link}, which answers 403`);
        }
        // axe on every page (the 403 page once).
        if (status === 200 || !axed403) {
          axed403 ||= status === 403;
          if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(AXE_SOURCE);
          const violations = (await page.evaluate(
            'window.axe.run(document, { resultTypes: ["violations"] }).then(r => r.violations.filter(v => v.impact === "serious" || v.impact === "critical").map(v => ({ id: v.id, nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ")) })))',
          )) as unknown[];
          if (violations.length) problems.push(`${role} ${url}: axe: ${JSON.stringify(violations)}`);
        }
      }
    }
    expect(problems, problems.join('\n')).toEqual([]);
  });
});
