import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createEndpoint } from '../../src/webhooks/endpoints.js';
import { fitProblems, HAVE_CHROMIUM, launchChromium } from '../support/browser.js';
import { type SignedInOperator, signedInOperator } from '../support/console.js';
import { testEngine } from '../support/database.js';
import { seedDeposit } from '../support/console-data.js';
import { type Harness, startHarness } from '../support/harness.js';
import { seedLiveOrder } from '../support/http.js';

/**
 * The console's account page in Debian's Chromium (as test/browser/roles-and-widths.test.ts
 * does the dashboard's pages): with a key revoked, an order, a deposit, journal entries, a
 * webhook endpoint with a long URL and a member, it fits 390, 1280 and 1920 px for an admin
 * (every form) and for support: no table wider than its box, no cell cut, every cell labelled
 * on a phone.
 */
const WIDTHS = [390, 1280, 1920];

describe.skipIf(!HAVE_CHROMIUM || testEngine === 'postgres')('the console account page fits', { timeout: 120_000 }, () => {
  let h: Harness;
  let browser: Browser;
  let accountId: string;
  const operators: SignedInOperator[] = [];

  beforeAll(async () => {
    h = await startHarness({ OPERATOR_PORT: '0' });
    const account = await h.account({ live: '10', test: '3' });
    accountId = account.accountId;
    await seedLiveOrder(h, accountId, { idempotencyKey: 'fit-1', product: 'premium', username: 'a_rather_long_username_of_32_ch', quantity: 12 });
    await seedDeposit(h, { amount: 2_500_000_000n, status: 'credited', reason: null, account_id: accountId, credited_at: Date.now(), credited_by: 'watcher' });
    await createEndpoint(
      h.service.db.kysely,
      { accountId, mode: 'live' },
      { url: 'https://hooks.example.com/starport/a-fairly-long-path-for-the-receiver/and-some-more', events: ['order.delivered', 'order.failed'], now: Date.now() },
    );
    await h.service.db.kysely.updateTable('api_keys').set({ revoked_at: Date.now() }).where('account_id', '=', accountId).where('mode', '=', 'test').execute();
    operators.push(await signedInOperator(h, 'admin'), await signedInOperator(h, 'support'));
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  test('at 390, 1280 and 1920 px, for admin and support', async () => {
    const url = h.service.console?.url as string;
    const problems: string[] = [];
    for (const operator of operators) {
      const context = await browser.newContext();
      await context.addCookies([...operator.client.cookies].map(([name, value]) => ({ name, value, url })));
      const page = await context.newPage();
      for (const width of WIDTHS) {
        await page.setViewportSize({ width, height: 900 });
        const response = await page.goto(`${url}/accounts/${accountId}`);
        expect(response?.status()).toBe(200);
        expect(await page.locator('h2').allInnerTexts()).toEqual(expect.arrayContaining(['API keys', 'Webhook endpoints']));
        for (const p of await fitProblems(page)) problems.push(`${operator.email.split('-')[0]} at ${width}px: ${p}`);
      }
      await context.close();
    }
    expect(problems).toEqual([]);
  });
});
