import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { mnemonicNew } from '@ton/crypto';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { storedFragmentSession } from '../../src/live/fragment/session-store.js';
import { PROJECT_ROOT } from '../support/cli.js';
import { signedInOperator, totpCode } from '../support/console.js';
import { testEngine } from '../support/database.js';
import { FAKE_SESSION, FakeFragment } from '../support/fragment/fake-fragment.js';
import { type Harness, startHarness } from '../support/harness.js';
import { FakeToncenter } from '../support/ton/fake-toncenter.js';
import { PASSWORD } from '../support/web.js';
import { fundedWallet } from '../live/wallet-support.js';

/**
 * The console's Live page in Debian's Chromium, at 1280 and 390 px: an admin signs in with the
 * password and the two-factor code, pastes the Fragment cookies and sees the check say "Logged
 * in", pauses live fulfilment with a reason and resumes it. At every step the page is no wider
 * than the window and axe-core finds nothing serious or critical.
 */
const CHROMIUM = '/usr/bin/chromium';
const HAVE_CHROMIUM = fs.existsSync(CHROMIUM);
const ARTIFACTS = path.join(PROJECT_ROOT, 'test-artifacts', 'browser-console-live', testEngine);
const AXE_SOURCE = HAVE_CHROMIUM ? fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8') : '';

if (!HAVE_CHROMIUM) {
  if (process.env.BROWSER_TESTS === '1') throw new Error(`BROWSER_TESTS=1 but ${CHROMIUM} is missing`);
  console.warn(`\n*** ${CHROMIUM} not found: the console Live browser tests are SKIPPED ***\n`);
}

/** Horizontal overflow of the page, or of any card, table box or form on it (a string: the tests compile without the DOM library). */
const OVERFLOW = `(() => {
  const problems = [];
  const root = document.scrollingElement || document.documentElement;
  if (root.scrollWidth > window.innerWidth) problems.push('page is ' + root.scrollWidth + 'px wide in a ' + window.innerWidth + 'px window');
  for (const box of Array.from(document.querySelectorAll('.card, .notice, .table-wrap, form, dl, main'))) {
    const r = box.getBoundingClientRect();
    if (r.width > 0 && r.right > window.innerWidth + 1) problems.push(box.tagName.toLowerCase() + '.' + box.className + ' ends at ' + Math.round(r.right) + 'px');
    if (box.scrollWidth > box.clientWidth + 1 && getComputedStyle(box).overflowX === 'visible') problems.push(box.tagName.toLowerCase() + '.' + box.className + ' content ' + box.scrollWidth + 'px in ' + box.clientWidth + 'px');
  }
  return problems.slice(0, 12);
})()`;

const AXE_RUN =
  'window.axe.run(document, { resultTypes: ["violations"] }).then(r => r.violations.filter(v => v.impact === "serious" || v.impact === "critical").map(v => ({ id: v.id, nodes: v.nodes.slice(0, 3).map(n => n.target.join(" ")) })))';

describe.skipIf(!HAVE_CHROMIUM || testEngine === 'postgres')('the console Live page in Chromium', { timeout: 180_000 }, () => {
  let h: Harness;
  let fragment: FakeFragment;
  let ton: FakeToncenter;
  let browser: Browser;
  let shot = 0;

  beforeAll(async () => {
    [fragment, ton] = await Promise.all([FakeFragment.start({ anyoneExists: true }), FakeToncenter.start()]);
    const mnemonic = (await mnemonicNew()).join(' ');
    await fundedWallet(ton, mnemonic);
    h = await startHarness({
      OPERATOR_PORT: '0',
      FRAGMENT_BASE_URL: fragment.url,
      FRAGMENT_COOKIES: FAKE_SESSION,
      FRAGMENT_MAX_RPS: '1000',
      WALLET_MNEMONIC: mnemonic,
      TON_API_URL: ton.url,
      LIVE_BREAKER_COOLDOWN_SECONDS: '1',
    });
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await Promise.all([fragment?.close(), ton?.close()]);
  });

  /** The page fits its window and axe-core finds nothing serious; a screenshot is kept for a failure's reader. */
  async function checkPage(page: Page, what: string) {
    await page.screenshot({ path: path.join(ARTIFACTS, `${String(++shot).padStart(2, '0')}-${what}.png`), fullPage: true });
    expect(await page.evaluate(OVERFLOW), `${what}: overflow`).toEqual([]);
    if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(AXE_SOURCE);
    expect(await page.evaluate(AXE_RUN), `${what}: axe`).toEqual([]);
  }

  for (const width of [1280, 390]) {
    test(`${width} px: sign in with two-factor, paste cookies and check, pause and resume`, async () => {
      const admin = await signedInOperator(h, 'admin');
      const consoleUrl = h.service.console?.url as string;
      const context = await browser.newContext({ viewport: { width, height: 900 }, deviceScaleFactor: 1, locale: 'en-US' });
      try {
        const page = await context.newPage();
        await page.goto(`${consoleUrl}/live`);
        expect(new URL(page.url()).pathname).toBe('/login');
        await page.fill('#email', admin.email);
        await page.fill('#password', PASSWORD);
        await Promise.all([page.waitForURL(/\/login\/code/), page.click('button[type="submit"]')]);
        // The enrolment used the current step: sign-in takes the next one.
        await page.fill('#code', await totpCode(admin.secret, 1));
        await Promise.all([page.waitForURL((url) => url.pathname === '/live'), page.click('main button[type="submit"]')]);
        await checkPage(page, `${width}-live`);

        // Fragment has logged the old session out; the admin pastes the new one.
        const renewed = `stel_ssid=browser-${width}; stel_dt=-180; stel_token=browser-token-${width}; stel_ton_token=browser-ton-${width}`;
        fragment.setSession(renewed);
        await page.fill('#cookies', renewed);
        await Promise.all([page.waitForURL(/\/live\/check\?notice=session_set$/), page.click('[data-testid="session-form"] button[type="submit"]')]);
        expect(await page.textContent('[data-testid="check-session"]')).toContain('Logged in');
        expect(await page.textContent('[data-testid="check-verdict"]')).toContain('Live trading can run.');
        expect(await page.inputValue('#cookies')).toBe('');
        expect(await page.content()).not.toContain(`browser-token-${width}`);
        expect((await storedFragmentSession(h.service.db.kysely))?.header).toBe(renewed);
        await checkPage(page, `${width}-check`);

        await page.fill('#pause-reason', `maintenance at ${width} px`);
        await Promise.all([page.waitForURL(/\/live\?notice=paused$/), page.click('[data-testid="pause-form"] button[type="submit"]')]);
        expect(await page.textContent('[data-testid="live-state"]')).toContain(`Paused by operator: maintenance at ${width} px`);
        expect((await h.inject({ method: 'GET', url: '/readyz' })).json().live).toMatchObject({ status: 'paused', paused_by: 'operator' });
        await checkPage(page, `${width}-paused`);

        await Promise.all([page.waitForURL(/\/live\?notice=resumed$/), page.click('[data-testid="resume-form"] button[type="submit"]')]);
        expect(await page.textContent('[data-testid="live-state"]')).toBe('Available');
        await checkPage(page, `${width}-resumed`);
      } finally {
        await context.close();
      }
    });
  }
});
