import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { chartData, CHART_DAYS } from '../../src/http/web/charts.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { type Harness, startHarness } from '../support/harness.js';
import { postOrder, waitForStatus } from '../support/http.js';
import { accountIdOf, signedUp } from '../support/web.js';

/**
 * The overview's chart data (src/http/web/charts.ts) from real orders and movements: per day
 * delivered and failed orders, TON spent, and the closing available balance; and the page
 * that carries it.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('overview charts', () => {
  test('an account with nothing: 30 empty days, balance 0', async () => {
    const account = await h.account();
    const data = await chartData(h.service.db, { accountId: account.accountId, mode: 'test' });
    expect(data.days).toHaveLength(CHART_DAYS);
    expect(data.days[CHART_DAYS - 1]).toBe(Math.floor(Date.now() / 86_400_000) * 86_400);
    expect(data.delivered).toEqual(new Array(CHART_DAYS).fill(0));
    expect(data.failed).toEqual(new Array(CHART_DAYS).fill(0));
    expect(new Set(data.spent)).toEqual(new Set(['0']));
    expect(new Set(data.balance)).toEqual(new Set(['0']));
    expect(data.totals).toEqual({ delivered: 0, failed: 0, spent: '0' });
  });

  test('delivered and failed orders of today, the spend and the balance; the other mode stays empty', async () => {
    const account = await h.account({ test: '10' });
    const delivered = [];
    for (const recipient of ['@chart_a', '@chart_b']) delivered.push(await postOrder(h, account.testKey, { product: 'stars', recipient, quantity: 50 }));
    const failed = await postOrder(h, account.testKey, { product: 'stars', recipient: '@test_failed', quantity: 100 });
    for (const order of delivered) await waitForStatus(h, account.testKey, order.body.id, ['delivered']);
    await waitForStatus(h, account.testKey, failed.body.id, ['failed']);

    const data = await chartData(h.service.db, { accountId: account.accountId, mode: 'test' });
    const today = CHART_DAYS - 1;
    expect(data.delivered[today]).toBe(2);
    expect(data.failed[today]).toBe(1);
    expect(data.spent[today]).toBe('0.5'); // two orders of 50 Stars at 0.25 TON
    expect(data.balance[today]).toBe('9.5'); // the failed order's reserve came back
    expect(data.delivered.slice(0, today).every((n) => n === 0)).toBe(true);
    expect(data.totals).toEqual({ delivered: 2, failed: 1, spent: '0.5' });

    const live = await chartData(h.service.db, { accountId: account.accountId, mode: 'live' });
    expect(live.totals).toEqual({ delivered: 0, failed: 0, spent: '0' });
  });

  test('the balance before the window opens it, and days without movements carry the last balance', async () => {
    const account = await h.account();
    const day = 86_400_000;
    const today = Math.floor(Date.now() / day);
    // Movements written as the ledger writes them, dated 40 days and 10 days ago.
    await adjustBalance(h.service.db, { accountId: account.accountId, mode: 'test', amount: 3_000_000_000n, reason: 'old' }, (today - 40) * day + 1000);
    await adjustBalance(h.service.db, { accountId: account.accountId, mode: 'test', amount: 2_000_000_000n, reason: 'recent' }, (today - 10) * day + 1000);
    const data = await chartData(h.service.db, { accountId: account.accountId, mode: 'test' });
    const tenDaysAgo = CHART_DAYS - 1 - 10;
    expect(data.balance[0]).toBe('3');
    expect(data.balance[tenDaysAgo - 1]).toBe('3');
    expect(data.balance[tenDaysAgo]).toBe('5');
    expect(data.balance[CHART_DAYS - 1]).toBe('5');
  });

  test('the overview carries the data and loads the chart library from our own origin', async () => {
    const { client, email } = await signedUp(h, '10.6.0.1');
    const accountId = await accountIdOf(h, email);
    await h.credit(accountId, 'test', '4');
    const page = await client.get('/test');
    expect(page.status).toBe(200);
    const attribute = /data-chart="([^"]+)"/.exec(page.body)?.[1] as string;
    const data = JSON.parse(attribute.replace(/&quot;/g, '"').replace(/&amp;/g, '&'));
    expect(data.balance[CHART_DAYS - 1]).toBe('4');
    const scripts = [...page.body.matchAll(/<script src="(\/assets\/[^"]+)"/g)].map((m) => m[1] as string);
    expect(scripts.some((s) => /^\/assets\/uPlot\.iife\.min\.[0-9a-f]{10}\.js$/.test(s))).toBe(true);
    for (const url of scripts) expect((await client.get(url)).status).toBe(200);
    expect(page.body).toContain('data-testid="chart-summary-orders">0 delivered, 0 failed<');
  });
});
