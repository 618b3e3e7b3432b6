import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { axeProblems, CHROMIUM, fitProblems, HAVE_CHROMIUM, launchChromium } from '../support/browser.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { storedFragmentSession } from '../../src/live/fragment/session-store.js';
import { PROJECT_ROOT } from '../support/cli.js';
import { signedInOperator, totpCode } from '../support/console.js';
import { testEngine } from '../support/database.js';
import type { FakeFragment } from '../support/fragment/fake-fragment.js';
import { type Harness, startHarness } from '../support/harness.js';
import { type LiveFakes, startLiveFakes } from '../support/live-fakes.js';
import { PASSWORD } from '../support/web.js';

/**
 * The console's Live page in Debian's Chromium, at 1280 and 390 px: an admin signs in with the
 * password and the two-factor code, pastes the Fragment cookies and sees the check say "Logged
 * in", pauses live fulfilment with a reason and resumes it. At every step the page is no wider
 * than the window and axe-core finds nothing serious or critical.
 */
const ARTIFACTS = path.join(PROJECT_ROOT, 'test-artifacts', 'browser-console-live', testEngine);

if (!HAVE_CHROMIUM) {
  if (process.env.BROWSER_TESTS === '1') throw new Error(`BROWSER_TESTS=1 but ${CHROMIUM} is missing`);
  console.warn(`\n*** ${CHROMIUM} not found: the console Live browser tests are SKIPPED ***\n`);
}

describe.skipIf(!HAVE_CHROMIUM || testEngine === 'postgres')('the console Live page in Chromium', { timeout: 180_000 }, () => {
  let h: Harness;
  let fragment: FakeFragment;
  let fakes: LiveFakes;
  let browser: Browser;
  let shot = 0;

  beforeAll(async () => {
    fakes = await startLiveFakes();
    fragment = fakes.fragment;
    h = await startHarness({ ...fakes.env, OPERATOR_PORT: '0' });
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await fakes?.close();
  });

  /** The page fits its window and axe-core finds nothing serious; a screenshot is kept for a failure's reader. */
  async function checkPage(page: Page, what: string) {
    await page.screenshot({ path: path.join(ARTIFACTS, `${String(++shot).padStart(2, '0')}-${what}.png`), fullPage: true });
    expect(await fitProblems(page), `${what}: fit`).toEqual([]);
    expect(await axeProblems(page), `${what}: axe`).toEqual([]);
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
