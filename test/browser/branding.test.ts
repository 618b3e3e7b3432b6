import type { Browser, Page } from 'playwright-core';
import { CHROMIUM, HAVE_CHROMIUM, launchChromium } from '../support/browser.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { BRAND, type BrandFixtures, brandEnv, brandFixtures } from '../support/brand.js';
import { testEngine } from '../support/database.js';
import { type Harness, startHarness } from '../support/harness.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';

/**
 * Branding in a real browser (docs/operations.md "Branding"): with BRAND_* set, Chromium visits
 * every client page, signed out (log in, sign up, forgotten password, the set-password, reset,
 * invite and verification links, a 404, /docs) and signed in as an owner (test and live), and
 * finds "Starport" in no rendered text, title or attribute; the logo is loaded and shown, and the
 * accent is the computed colour. Like test/browser/dashboard.test.ts: Debian's Chromium, skipped
 * without it unless BROWSER_TESTS=1, on SQLite only (test/web/branding.test.ts runs both engines).
 */
const REQUIRED = process.env.BROWSER_TESTS === '1';

test.runIf(REQUIRED && !HAVE_CHROMIUM)('Chromium is installed (BROWSER_TESTS=1)', () => {
  throw new Error(`BROWSER_TESTS=1 but ${CHROMIUM} is missing: apt-get install -y chromium`);
});

interface Seen {
  title: string;
  text: string;
  /** Every attribute of every element, head included (meta tags, alt texts, titles, labels). */
  attributes: string[];
  /** The logo: present, loaded, drawn with a size. */
  logo: { loaded: boolean; width: number; src: string } | null;
  /** The accent custom property and the colour of a primary button, if the page has one. */
  accent: string;
  button: string | null;
}

const SEE = `(() => {
  const logo = document.querySelector('img.brand-logo');
  const button = document.querySelector('.button-primary');
  return {
    title: document.title,
    text: document.body.innerText,
    attributes: Array.from(document.querySelectorAll('*')).flatMap((el) => Array.from(el.attributes).map((a) => a.name + '=' + a.value)),
    logo: logo ? { loaded: logo.complete && logo.naturalWidth > 0, width: logo.getBoundingClientRect().width, src: logo.getAttribute('src') } : null,
    accent: getComputedStyle(document.documentElement).getPropertyValue('--primary').trim(),
    button: button ? getComputedStyle(button).backgroundColor : null,
  };
})()`;

describe.skipIf(!HAVE_CHROMIUM || testEngine === 'postgres')('a branded dashboard in Chromium', { timeout: 180_000 }, () => {
  let smtp: TestSmtpServer;
  let h: Harness;
  let browser: Browser;
  let fixtures: BrandFixtures;
  const problems: string[] = [];

  beforeAll(async () => {
    smtp = await startSmtpServer();
    h = await startHarness(brandEnv(smtp));
    fixtures = await brandFixtures(h, smtp);
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
    await smtp?.close();
  });

  async function newPage(session?: string): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, locale: 'en-US' });
    if (session) await context.addCookies([{ name: 'sp_session', value: session, url: h.url }]);
    const page = await context.newPage();
    page.on('console', (message) => {
      // The 404 page is an error status Chromium reports as a failed resource: expected.
      if (message.type() === 'error' && !(/no-such-page/.test(page.url()) && /status of 404/.test(message.text())))
        problems.push(`console error on ${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error on ${page.url()}: ${error.message}`));
    page.on('request', (request) => {
      if (!request.url().startsWith(h.url) && !request.url().startsWith('data:')) problems.push(`request to another origin: ${request.url()}`);
    });
    return page;
  }

  async function visit(page: Page, url: string): Promise<Seen> {
    const response = await page.goto(`${h.url}${url}`);
    expect(response?.status(), url).toBeLessThan(url === '/no-such-page' ? 500 : 400);
    await page.waitForLoadState('load');
    const seen = (await page.evaluate(SEE)) as Seen;
    for (const [what, value] of [['title', seen.title], ['text', seen.text], ...seen.attributes.map((a) => ['attribute', a])] as [string, string][]) {
      expect(/starport/i.test(value) ? `${what}: ${value.slice(0, 300)}` : undefined, `"Starport" on ${url}`).toBeUndefined();
    }
    expect(seen.title, url).toContain(BRAND.name);
    return seen;
  }

  function branded(url: string, seen: Seen): void {
    expect(seen.logo, `the logo on ${url}`).toMatchObject({ loaded: true, src: expect.stringMatching(/^\/assets\/brand-logo\.[0-9a-f]{10}\.svg$/) });
    expect(seen.logo?.width, `the logo's width on ${url}`).toBeGreaterThan(10);
    expect(seen.accent, `--primary on ${url}`).toBe(BRAND.color);
    if (seen.button !== null) expect(seen.button, `a primary button on ${url}`).toBe(BRAND.rgb);
  }

  test('signed out: every page, and each one-time link, names the brand only', async () => {
    const page = await newPage();
    const buttons: string[] = [];
    for (const url of fixtures.signedOut) {
      const seen = await visit(page, url);
      if (url === '/docs') {
        expect(seen.text).toContain('Acme Stars API reference');
        continue;
      }
      branded(url, seen);
      if (seen.button) buttons.push(url);
      expect(seen.text, `the footer links on ${url}`).toMatch(/Support · Terms · Privacy/);
    }
    // The accent was seen on real buttons, not only in the custom property.
    expect(buttons).toEqual(expect.arrayContaining(['/login', '/signup', '/forgot-password']));
    await page.goto(`${h.url}/signup`);
    expect(await page.getByTestId('signup-terms').getAttribute('href')).toBe(BRAND.termsUrl);
    expect(await page.getByTestId('signup-privacy').getAttribute('href')).toBe(BRAND.privacyUrl);
    expect(await page.getByRole('link', { name: BRAND.name }).count()).toBe(1);
    expect(problems).toEqual([]);
  });

  test('signed in as an owner, test and live: every page names the brand only', async () => {
    const page = await newPage(fixtures.owner.client.session);
    let links = 0;
    for (const url of fixtures.signedIn) {
      const seen = await visit(page, url);
      branded(url, seen);
      expect(seen.text, `the footer on ${url}`).toContain(`${BRAND.name} · API reference · First order guide · Support · Terms · Privacy`);
      // A link in the accent: the footer's support link.
      const color = await page.getByTestId('support-link').evaluate((a: any) => (globalThis as any).getComputedStyle(a).color);
      expect(color, url).toBe(BRAND.rgb);
      links++;
    }
    expect(links).toBe(fixtures.signedIn.length);
    expect(await page.getByRole('link', { name: `${BRAND.name} overview` }).count()).toBe(1);
    expect(problems).toEqual([]);
  });
});
