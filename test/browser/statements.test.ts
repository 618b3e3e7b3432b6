import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { CHROMIUM, HAVE_CHROMIUM, launchChromium } from '../support/browser.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PROJECT_ROOT } from '../support/cli.js';
import { testEngine } from '../support/database.js';
import { type Harness, startHarness } from '../support/harness.js';
import { seedYear } from '../support/statement-year.js';
import { accountIdOf, signedUp } from '../support/web.js';

/**
 * The Statements pages in Debian's Chromium (as the other browser suites): a month with every
 * kind of line fits 390 and 1280 px, the print button prints, and printed (print media, A4) the
 * page is the statement alone: no header, menu or buttons, one A4 page as a PDF.
 */
const ARTIFACTS = path.join(PROJECT_ROOT, 'test-artifacts', 'browser-statements', testEngine);

test.runIf(process.env.BROWSER_TESTS === '1' && !HAVE_CHROMIUM)('Chromium is installed (BROWSER_TESTS=1)', () => {
  throw new Error(`BROWSER_TESTS=1 but ${CHROMIUM} is missing`);
});

const FITS = `(() => {
  const problems = [];
  const root = document.scrollingElement || document.documentElement;
  if (root.scrollWidth > window.innerWidth) problems.push('page is ' + root.scrollWidth + 'px wide in a ' + window.innerWidth + 'px window');
  for (const box of Array.from(document.querySelectorAll('.table-wrap'))) {
    if (box.scrollWidth > box.clientWidth + 1) problems.push('table box scrolls ' + box.scrollWidth + 'px in ' + box.clientWidth + 'px');
  }
  for (const cell of Array.from(document.querySelectorAll('td, th'))) {
    if (cell.closest('.visually-hidden, caption, thead')) continue;
    if (cell.scrollWidth > cell.clientWidth + 1) problems.push('cell content cut: ' + (cell.textContent || '').trim().slice(0, 40));
  }
  return problems;
})()`;

describe.skipIf(!HAVE_CHROMIUM || testEngine === 'postgres')('statements in Chromium', { timeout: 180_000 }, () => {
  let h: Harness;
  let browser: Browser;
  let session: string;

  beforeAll(async () => {
    fs.rmSync(ARTIFACTS, { recursive: true, force: true });
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    h = await startHarness();
    const signed = await signedUp(h, '10.44.0.1');
    session = signed.client.session as string;
    // The signed-up account gets a year of activity, from January 2025.
    await seedYear(h.service.db, { accountId: await accountIdOf(h, signed.email) });
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  test('the list and a full month fit 390 and 1280 px; printed, the statement alone on one A4 page', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, deviceScaleFactor: 1, locale: 'en-US' });
    await context.addCookies([{ name: 'sp_session', value: session, url: h.url }]);
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    for (const url of ['/statements', '/statements/2025-02', '/test/statements/2025-01']) {
      for (const width of [390, 1280]) {
        await page.setViewportSize({ width, height: 860 });
        const response = await page.goto(`${h.url}${url}`);
        expect(response?.status(), url).toBe(200);
        expect((await page.evaluate(FITS)) as string[], `${url} at ${width}px`).toEqual([]);
        await page.screenshot({ path: path.join(ARTIFACTS, `${width}-${url.replace(/[^a-z0-9]+/gi, '-')}.png`), fullPage: true });
      }
    }
    await page.setViewportSize({ width: 1280, height: 860 });
    await page.goto(`${h.url}/statements/2025-02`);
    await expect(page.locator('[data-testid="statement"] h2').innerText()).resolves.toBe('Live balance statement, February 2025');
    // The print button appears with the script and calls window.print().
    await page.evaluate('window.__printed = 0; window.print = () => { window.__printed += 1; };');
    await page.locator('[data-print]').click();
    expect(await page.evaluate('window.__printed')).toBe(1);
    await page.emulateMedia({ media: 'print' });
    const shown = async (selector: string) => page.locator(selector).first().isVisible();
    expect([await shown('.topbar'), await shown('.mainnav'), await shown('.footer'), await shown('[data-print]'), await shown('.no-print')]).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
    expect(await shown('[data-testid="statement"]')).toBe(true);
    const pdf = await page.pdf({ preferCSSPageSize: true, printBackground: false });
    fs.writeFileSync(path.join(ARTIFACTS, 'statement-2025-02.pdf'), pdf);
    const text = pdf.toString('latin1');
    // One page, A4 (595 × 842 points).
    expect(text.match(/\/Type\s*\/Page[^s]/g)?.length).toBe(1);
    const box = /\/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]/.exec(text);
    expect([Math.round(Number(box?.[1])), Math.round(Number(box?.[2]))]).toEqual([595, 842]);
    expect(errors).toEqual([]);
    await context.close();
  });
});
