import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CHROMIUM, HAVE_CHROMIUM, launchChromium } from '../support/browser.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PROJECT_ROOT } from '../support/cli.js';
import { testEngine } from '../support/database.js';
import { type Harness, startHarness } from '../support/harness.js';

/**
 * The dashboard in a real browser: Debian's Chromium (/usr/bin/chromium, never a downloaded
 * one) driven by playwright-core, against a real service on a loopback port. One user's whole
 * journey: sign up, log out, log in, add test funds, the live top-up page, reveal a test key,
 * create an order with that key from the test, watch the order page reach `delivered`, reissue
 * the key and see the old one refused by the API, and log out. On every page axe-core must find
 * no serious or critical violation, the browser must log no error (a CSP violation is one), and
 * a screenshot is saved under test-artifacts/. docs/screenshots/ is made by `npm run screenshots`
 * (scripts/screenshots.mjs), from the same pages.
 *
 * Without Chromium the suite is skipped with a loud warning — unless BROWSER_TESTS=1 (CI, set
 * by .ci/run), where a missing browser is a failure.
 */
const REQUIRED = process.env.BROWSER_TESTS === '1';
if (!HAVE_CHROMIUM) {
  const bar = '!'.repeat(88);
  console.warn(
    `\n${bar}\n!! BROWSER TESTS ${REQUIRED ? 'FAIL' : 'SKIPPED'}: Chromium is not installed at ${CHROMIUM}.\n` +
      `!! Install Debian's package with: apt-get install -y chromium   (.ci/run does this and sets BROWSER_TESTS=1)\n${bar}\n`,
  );
}

const RAW_ADDRESS = '0:2cf55953e92efbeadab7ba725c3f93a0b23f842cbba72d7b8e6f510a70e422e3';
const ARTIFACTS = path.join(PROJECT_ROOT, 'test-artifacts', 'browser', testEngine);
const AXE_SOURCE = HAVE_CHROMIUM ? fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8') : '';
const PASSWORD = 'a long browser passphrase';

test.runIf(REQUIRED && !HAVE_CHROMIUM)('Chromium is installed (BROWSER_TESTS=1)', () => {
  throw new Error(`BROWSER_TESTS=1 but ${CHROMIUM} is missing: apt-get install -y chromium`);
});

// The browser drives the UI once, on SQLite: every page and form it uses is also tested over
// HTTP on both engines (test/web), and a second browser pass cost CI 40 s for nothing new.
describe.skipIf(!HAVE_CHROMIUM || testEngine === 'postgres')('the dashboard in Chromium', { timeout: 180_000 }, () => {
  let h: Harness;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];
  let shot = 0;

  beforeAll(async () => {
    fs.rmSync(ARTIFACTS, { recursive: true, force: true });
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    // Slow enough fulfilment that the order page is seen before delivery and follows it there.
    h = await startHarness({ DEPOSIT_ADDRESS: RAW_ADDRESS, TEST_FULFILMENT_DELAY_MS: '5000' });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 860 }, deviceScaleFactor: 1, locale: 'en-US' });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.url });
    page = await context.newPage();
    page.on('console', (message) => {
      // A wrong password (401) and a dead link (404) are error statuses Chromium reports as failed resources: expected.
      const expected =
        (/\/login$/.test(page.url()) && /status of 401/.test(message.text())) || (/\/(set-password\/|no-such-page)/.test(page.url()) && /status of 404/.test(message.text()));
      if (message.type() === 'error' && !expected) problems.push(`console error on ${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error on ${page.url()}: ${error.message}`));
    // Everything the dashboard loads must come from the dashboard itself.
    page.on('request', (request) => {
      const url = request.url();
      if (!url.startsWith(h.url) && !url.startsWith('data:')) problems.push(`request to another origin: ${url}`);
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  /** axe-core on the current page, then a screenshot. axe is evaluated over CDP, which the page's CSP does not govern. */
  async function check(name: string): Promise<void> {
    await page.waitForLoadState('load');
    const hasAxe = await page.evaluate('typeof window.axe !== "undefined"');
    if (!hasAxe) await page.evaluate(AXE_SOURCE);
    const violations = (await page.evaluate(
      'window.axe.run(document, { resultTypes: ["violations"] }).then(r => r.violations.map(v => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ")) })))',
    )) as { id: string; impact: string; help: string; nodes: string[] }[];
    const serious = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious, `axe on ${name} (${page.url()}): ${JSON.stringify(serious, null, 2)}`).toEqual([]);
    const file = `${String(++shot).padStart(2, '0')}-${name}.png`;
    await page.screenshot({ path: path.join(ARTIFACTS, file), fullPage: true });
  }

  const api = async (method: string, url: string, key: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${h.url}/api/v1${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body !== undefined && { 'content-type': 'application/json' }), ...headers },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  const email = `browser-${testEngine}-${Date.now()}@example.com`;

  /**
   * The header at one width: the element at the centre of every navigation link, of the
   * test-mode switch and of "Log out" is that control (nothing covers it), nothing in the header
   * scrolls or sticks out of the window, and the signed-in e-mail is visible in full. On a
   * phone the navigation is behind the "Menu" button, which opens it.
   */
  async function checkHeader(width: number): Promise<void> {
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${h.url}/test/orders`);
    const toggle = page.getByRole('button', { name: 'Menu' });
    if (width < 760) {
      expect(await page.locator('.mainnav').isVisible(), `${width}px: the menu starts closed`).toBe(false);
      await toggle.click();
      await expect.poll(() => page.locator('.mainnav').isVisible()).toBe(true);
      expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    } else {
      expect(await toggle.isVisible(), `${width}px: no menu button`).toBe(false);
    }
    // In-page code is a string: the tests compile without the DOM library.
    const report = (await page.evaluate(`(() => {
      const controls = Array.from(document.querySelectorAll('.mainnav a, .mode-switch, .logout-form button'));
      const covered = [];
      for (const control of controls) {
        const r = control.getBoundingClientRect();
        const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
        if (!hit || !control.contains(hit)) covered.push(\`\${(control.textContent ?? '').trim()} is under \${hit ? hit.outerHTML.slice(0, 80) : 'nothing'}\`);
      }
      const scrolling = [];
      const outside = [];
      for (const el of Array.from(document.querySelectorAll('.chrome, .chrome *'))) {
        const style = getComputedStyle(el);
        if (/auto|scroll/.test(style.overflowX) && el.scrollWidth > el.clientWidth) scrolling.push(el.className || el.tagName);
        const r = el.getBoundingClientRect();
        if (r.width > 1 && (r.left < 0 || r.right > window.innerWidth + 0.5)) outside.push(el.className || el.tagName);
      }
      const account = document.querySelector('.account-email');
      const box = account?.getBoundingClientRect();
      return {
        controls: controls.length,
        covered,
        scrolling,
        outside,
        account: account && box ? { text: account.textContent ?? '', shown: box.width > 0 && box.right <= window.innerWidth, cut: account.scrollWidth > account.clientWidth } : null,
      };
})()`)) as { controls: number; covered: string[]; scrolling: string[]; outside: string[]; account: { text: string; shown: boolean; cut: boolean } | null };
    expect(report.controls, `${width}px: 10 links, the switch, Log out`).toBe(12);
    expect(report.covered, `${width}px: controls covered`).toEqual([]);
    expect(report.scrolling, `${width}px: header parts that scroll`).toEqual([]);
    expect(report.outside, `${width}px: header parts outside the window`).toEqual([]);
    expect(report.account?.text, `${width}px: the account`).toContain(email);
    expect(report.account?.shown && !report.account.cut, `${width}px: the e-mail is visible in full`).toBe(true);
    await check(`header-${width}`);
  }

  /** No page is wider than the window, and no table is wider than its box (nothing cut, nothing to scroll). */
  async function checkFits(name: string): Promise<void> {
    const overflow = (await page.evaluate(`(() => {
      const wide = [];
      if (document.documentElement.scrollWidth > window.innerWidth) wide.push(\`page \${document.documentElement.scrollWidth}px\`);
      for (const wrap of Array.from(document.querySelectorAll('.table-wrap'))) {
        if (wrap.scrollWidth > wrap.clientWidth) wide.push(\`table \${wrap.scrollWidth}px in \${wrap.clientWidth}px\`);
      }
      return wide;
})()`)) as string[];
    expect(overflow, `${name} at ${page.viewportSize()?.width}px`).toEqual([]);
  }

  /** Reissue a test key through the UI; returns the key shown once. */
  async function reissueTestKey(name: string): Promise<string> {
    await page.goto(`${h.url}/test/keys`);
    await page.getByTestId('reissue-test').click();
    await page.waitForURL(/\/test\/keys\/reissue\?mode=test$/);
    await expect.poll(() => page.locator('main').innerText()).toContain('stops working immediately');
    await check(`${name}-confirm`);
    await page.getByRole('button', { name: 'Reissue and reveal test key' }).click();
    await page.getByTestId('new-key').waitFor();
    const key = await page.getByTestId('new-key').inputValue();
    expect(key).toMatch(/^sk_test_[0-9A-Za-z]{38}$/);
    await check(name);
    return key;
  }

  test('sign up, log in, fund, key, order, reissue, log out', async () => {
    // ---- Sign up ----
    await page.goto(`${h.url}/signup`);
    await check('signup');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    // ---- Both new keys, once, and each works against the API ----
    await page.getByTestId('new-key-test').waitFor();
    const signupKeys = { live: await page.getByTestId('new-key-live').inputValue(), test: await page.getByTestId('new-key-test').inputValue() };
    expect(signupKeys.live).toMatch(/^sk_live_[0-9A-Za-z]{38}$/);
    expect(signupKeys.test).toMatch(/^sk_test_[0-9A-Za-z]{38}$/);
    for (const mode of ['live', 'test'] as const) {
      const balance = await api('GET', '/balance', signupKeys[mode]);
      expect(balance.status, mode).toBe(200);
      expect(balance.body.mode).toBe(mode);
    }
    await page.getByRole('button', { name: 'Copy the test key' }).click();
    await expect.poll(() => page.evaluate('navigator.clipboard.readText()')).toBe(signupKeys.test);
    await check('signup-keys');
    await page.getByRole('link', { name: 'I have saved them' }).click();
    await page.waitForURL(`${h.url}/test?notice=welcome`);
    expect(await page.content()).not.toContain(signupKeys.test);
    await expect.poll(() => page.locator('.notice-success').innerText()).toContain('Your account is ready.');
    await expect.poll(() => page.locator('.test-banner').isVisible()).toBe(true);
    // Keyboard: the first Tab lands on the skip link.
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement && document.activeElement.className')).toBe('skip-link');
    await check('overview-test-welcome');

    // ---- Log out, then log in ----
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(`${h.url}/login?notice=logged_out`);
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill('not my password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.locator('.notice-error').innerText()).toContain('Incorrect e-mail or password.');
    await check('login-error');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${h.url}/`);
    // The charts with no orders at all: drawn, empty.
    await expect.poll(() => page.locator('.chart .uplot canvas').count()).toBe(3);
    expect(await page.getByTestId('chart-summary-orders').innerText()).toBe('0 delivered, 0 failed');
    await check('overview-live-empty');

    // ---- Add test funds: switch to test mode with the toggle, then Top up ----
    await page.locator('.mode-switch').click();
    await page.waitForURL(`${h.url}/test`);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Top up' }).click();
    await page.waitForURL(`${h.url}/test/top-up`);
    await page.getByLabel('Amount in TON').fill('50');
    await page.getByRole('button', { name: 'Add test funds' }).click();
    await page.waitForURL(`${h.url}/test/top-up?notice=funds_added`);
    expect(await page.getByTestId('test-available').innerText()).toBe('50 TON');
    await check('top-up-test');

    // ---- Live top-up: the amount updates the link and the QR code as you type ----
    await page.goto(`${h.url}/top-up`);
    const memo = (await page.locator('#deposit-memo').innerText()).trim();
    expect(memo).toMatch(/^[A-HJ-NP-Z2-9]{11}$/);
    expect((await page.locator('#deposit-address').innerText()).trim()).toBe('UQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi41-E');
    await page.getByLabel(/Amount in TON/).fill('12.5');
    await expect
      .poll(() => page.locator('#transfer-link').getAttribute('href'))
      .toBe(`ton://transfer/UQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi41-E?amount=12500000000&text=${memo}`);
    await expect.poll(() => page.locator('#transfer-qr').getAttribute('src')).toBe('/top-up/qr.svg?amount=12.5');
    await expect.poll(() => page.locator('#transfer-qr').evaluate((img: any) => img.complete && img.naturalWidth > 0)).toBe(true);
    await page.getByLabel(/Amount in TON/).fill('abc');
    await expect.poll(() => page.locator('#amount-error').isVisible()).toBe(true);
    // A wrong amount leaves none in the link and the QR code, not the last valid one.
    await expect.poll(() => page.locator('#transfer-link').getAttribute('href')).toBe(`ton://transfer/UQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi41-E?text=${memo}`);
    expect(await page.locator('#transfer-uri').innerText()).toBe(`ton://transfer/UQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi41-E?text=${memo}`);
    expect(await page.locator('#transfer-qr').getAttribute('src')).toBe('/top-up/qr.svg');
    expect(new URL(page.url()).searchParams.has('amount')).toBe(false);
    await page.getByLabel(/Amount in TON/).fill('12.5');
    await expect.poll(() => page.locator('#amount-error').isVisible()).toBe(false);
    await page.getByRole('button', { name: 'Copy comment' }).click();
    await expect.poll(() => page.evaluate('navigator.clipboard.readText()')).toBe(memo);
    await check('top-up');

    // ---- USDT: the amount in USDT builds the jetton transfer link and its QR code as you type ----
    await page.getByRole('link', { name: 'Send USDT' }).click();
    await page.waitForURL(`${h.url}/top-up?asset=usdt`);
    await page.getByLabel(/Amount in USDT/).fill('25.5');
    await expect
      .poll(() => page.locator('#transfer-link').getAttribute('href'))
      .toBe(`ton://transfer/UQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi41-E?jetton=EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs&amount=25500000&text=${memo}`);
    await expect.poll(() => page.locator('#transfer-qr').getAttribute('src')).toBe('/top-up/qr.svg?asset=usdt&amount=25.5');
    await expect.poll(() => page.locator('#transfer-qr').evaluate((img: any) => img.complete && img.naturalWidth > 0)).toBe(true);
    await page.getByLabel(/Amount in USDT/).fill('1.0000001');
    await expect.poll(() => page.locator('#amount-error').innerText()).toBe('Enter an amount in USDT, like 25 or 12.5, with at most 6 decimal places.');
    expect(await page.locator('[data-usdt-terms]').innerText()).toContain('less 1');

    // ---- From the live keys page, the test key's reissue is a test-mode page ----
    await page.goto(`${h.url}/keys`);
    await page.getByTestId('reissue-test').click();
    await page.waitForURL(`${h.url}/test/keys/reissue?mode=test`);
    expect(await page.locator('body').getAttribute('class')).toBe('mode-test');
    expect(await page.locator('.test-banner').isVisible()).toBe(true);

    // ---- Reissue the test key (as after losing the one shown at sign-up) ----
    const firstKey = await reissueTestKey('keys-new-key');
    await page.getByRole('button', { name: 'Copy the new test key' }).click();
    await expect.poll(() => page.evaluate('navigator.clipboard.readText()')).toBe(firstKey);
    await page.getByRole('link', { name: 'I have saved it' }).click();
    await page.waitForURL(`${h.url}/test/keys`);
    expect(await page.content()).not.toContain(firstKey);
    expect(await page.getByTestId('test-key-prefix').innerText()).toBe(`${firstKey.slice(0, 12)}…`);
    await check('keys');

    // ---- Use the key against the API, from the test ----
    const created = await api(
      'POST',
      '/orders',
      firstKey,
      { product: 'stars', recipient: '@durov', quantity: 50, external_id: 'browser-order-1' },
      { 'idempotency-key': `browser-${Date.now()}` },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const orderId = created.body.id as string;

    // ---- Its page, straight away: followed by the page itself until delivered ----
    await page.goto(`${h.url}/test/orders/${orderId}`);
    const statusOnArrival = await page.locator('[data-testid="order-status"] [data-status]').getAttribute('data-status');
    // No reloads from here: the page refreshes itself while the order is in progress; poll its DOM.
    await expect.poll(() => page.locator('[data-testid="order-status"] [data-status]').getAttribute('data-status'), { timeout: 20_000, interval: 100 }).toBe('delivered');
    expect(statusOnArrival, 'the order was seen before it was delivered').not.toBe('delivered');
    const timeline = await page.locator('.timeline').innerText();
    expect(timeline).toContain('Order created');
    expect(timeline).toContain('Processing');
    expect(timeline).toContain('Delivered');
    expect(await page.locator('main .badge').count(), 'the order page shows its status once').toBe(1);
    expect(await page.locator('dl.details dt', { hasText: /^Status$/ }).count()).toBe(0);
    await check('order-detail');

    // ---- The orders list: the order, then a search for its external_id ----
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Orders' }).click();
    await page.waitForURL(`${h.url}/test/orders`);
    const row = page.locator('tr', { has: page.getByRole('link', { name: orderId }) });
    expect(await row.innerText()).toContain('browser-order-1');
    expect(await row.innerText()).toContain('50 Stars');
    expect(await row.innerText()).toContain('Delivered');
    await check('orders');
    await page.getByLabel('Search').fill('browser-order-1');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/q=browser-order-1/);
    expect(await page.locator('tbody tr').count()).toBe(1);
    await check('orders-search');
    await page.getByRole('link', { name: orderId }).click();
    await page.waitForURL(`${h.url}/test/orders/${orderId}`);

    // ---- Overview with the order, in test mode ----
    await page.goto(`${h.url}/test`);
    expect(await page.getByTestId('test-available').innerText()).toBe('49.75 TON');
    // The charts, from this order: one delivered today, 0.25 TON spent, 49.75 TON available.
    await expect.poll(() => page.locator('.chart .uplot canvas').count()).toBe(3);
    expect(await page.getByTestId('chart-summary-orders').innerText()).toBe('1 delivered, 0 failed');
    expect(await page.getByTestId('chart-summary-spent').innerText()).toBe('0.25 TON on delivered orders');
    const chartData = JSON.parse((await page.getByTestId('charts').getAttribute('data-chart')) as string);
    expect([chartData.delivered.at(-1), chartData.spent.at(-1), chartData.balance.at(-1)]).toEqual([1, '0.25', '49.75']);
    // uPlot drew the bar: the orders chart's canvas has green pixels (the delivered colour).
    const drawn = await page.evaluate(`(() => {
      const canvas = document.querySelector('[data-series="orders"] canvas');
      const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
      let green = 0;
      for (let i = 0; i < pixels.length; i += 4) if (pixels[i + 1] > pixels[i] + 40 && pixels[i + 1] > pixels[i + 2] + 20) green++;
      return green;
    })()`);
    expect(drawn, 'delivered bar pixels').toBeGreaterThan(20);
    await check('overview');

    // ---- Balance history: the funding and the order's reserve and debit, with a CSV export ----
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Balance history' }).click();
    await page.waitForURL(`${h.url}/test/balance`);
    const historyTypes = await page.locator('tbody [data-type]').evaluateAll((cells) => cells.map((c) => c.getAttribute('data-type')));
    // Test funds are a deposit, as through the API's POST /test_helpers/fund.
    expect(historyTypes).toEqual(['debit', 'reserve', 'deposit']);
    expect(await page.locator('tbody tr').first().innerText()).toContain('49.75 TON');
    const download = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).click()]).then(([d]) => d);
    expect(download.suggestedFilename()).toMatch(/^starport-test-balance-history-\d{4}-\d{2}-\d{2}\.csv$/);
    await check('balance-history');
    await page.goto(`${h.url}/test/guide`);
    expect(await page.locator('#step-key').innerText()).toContain(firstKey.slice(0, 12));
    await check('guide');

    // ---- Reissue: the old key is refused at once, the new one works ----
    const secondKey = await reissueTestKey('keys-reissued');
    expect(secondKey).not.toBe(firstKey);
    const old = await api('GET', '/balance', firstKey);
    expect(old.status).toBe(401);
    expect(old.body.error.code).toBe('api_key_revoked');
    const fresh = await api('GET', '/balance', secondKey);
    expect(fresh.status).toBe(200);
    expect(fresh.body.balance.value).toBe('49.75');

    // ---- The header at every width; every page fits 1280 px (tables included) ----
    for (const width of [390, 1024, 1280, 1440, 1920]) await checkHeader(width);
    await page.setViewportSize({ width: 1280, height: 860 });
    const pages = [
      ['overview', '/test'],
      ['top-up-test', '/test/top-up'],
      ['top-up', '/top-up?amount=5'],
      ['keys', '/test/keys'],
      ['orders', '/test/orders'],
      ['order-detail', `/test/orders/${orderId}`],
      ['balance-history', '/test/balance'],
      ['webhooks', '/test/webhooks'],
      ['guide', '/test/guide'],
    ] as const;
    for (const [name, url] of pages) {
      await page.goto(`${h.url}${url}`);
      await checkFits(name);
    }

    // ---- A phone-sized screen: no sideways scrolling, the test-mode banner still there ----
    await page.setViewportSize({ width: 390, height: 844 });
    for (const [name, url] of pages) {
      await page.goto(`${h.url}${url}`);
      await checkFits(`phone-${name}`);
      if (['overview', 'orders', 'order-detail', 'balance-history', 'top-up'].includes(name)) await check(`phone-${name}`);
    }
    expect(await page.locator('.test-banner').isVisible()).toBe(true);
    await page.setViewportSize({ width: 1280, height: 860 });

    // ---- Log out: the session is gone ----
    await page.goto(`${h.url}/test`);
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(`${h.url}/login?notice=logged_out`);
    await check('logged-out');
    await page.goto(`${h.url}/test/orders`);
    await page.waitForURL(/\/login\?next=%2Ftest%2Forders/);

    // ---- A mistyped URL: the dashboard's own page for a browser, the JSON error for an API client ----
    const missing = await page.goto(`${h.url}/no-such-page`);
    expect(missing?.status()).toBe(404);
    expect(await page.locator('h1').innerText()).toBe('Page not found');
    expect(await page.getByRole('link', { name: 'Go to the overview' }).getAttribute('href')).toBe('/');
    await check('not-found');
    const json = await fetch(`${h.url}/no-such-page`);
    expect(json.status).toBe(404);
    expect(((await json.json()) as any).error.code).toBe('not_found');

    // ---- A set-password link that does not work ----
    await page.goto(`${h.url}/set-password/${'A'.repeat(43)}`);
    expect(await page.locator('h1').innerText()).toBe('This link does not work');
    await check('link-invalid');

    expect(problems, problems.join('\n')).toEqual([]);
  });
});
