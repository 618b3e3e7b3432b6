// `npm run screenshots`: docs/screenshots/ taken from the running dashboard, never by hand, so
// they cannot drift from it. Starts the built service (run `npm run build` first) on a scratch
// SQLite database, signs up in Chromium (/usr/bin/chromium, driven by playwright-core) as the
// browser suite does (test/browser/dashboard.test.ts), adds test funds, creates orders with the
// test key (delivered and failed ones), and captures the main pages at 1280 px and the phone
// menu at 390 px; then the operator console's (scripts/console-screenshots.mjs, console-*.png).
// Images of the folder that this script does not make are removed.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { loadConfig } from '../dist/config.js';
import { createLogger } from '../dist/logger.js';
import { startService } from '../dist/service.js';
import { consoleScreenshots } from './console-screenshots.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'docs', 'screenshots');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'starport-screenshots-'));
const config = loadConfig({
  PORT: '0',
  DATA_DIR: dataDir,
  DEPOSIT_ADDRESS: '0:2cf55953e92efbeadab7ba725c3f93a0b23f842cbba72d7b8e6f510a70e422e3',
  TEST_FULFILMENT_DELAY_MS: '100',
  TON_API_URL: 'http://127.0.0.1:9/api/v2',
  OPERATOR_PORT: '0',
});
const service = await startService(config, createLogger('silent'));
const base = service.url;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu'] });
const made = [];
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, deviceScaleFactor: 1, locale: 'en-US' });
  const page = await context.newPage();
  const shot = async (name) => {
    await page.waitForLoadState('load');
    await page.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });
    made.push(`${name}.png`);
  };
  const api = async (method, url, key, body) => {
    const response = await fetch(`${base}/api/v1${url}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body && { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() }) },
      ...(body && { body: JSON.stringify(body) }),
    });
    return response.json();
  };
  fs.mkdirSync(out, { recursive: true });

  await page.goto(`${base}/signup`);
  await page.getByLabel('E-mail').fill('you@example.com');
  await page.getByLabel('Password').fill('a long screenshot passphrase');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByTestId('new-key-test').waitFor();
  const testKey = await page.getByTestId('new-key-test').inputValue();
  await shot('signup-keys');
  await page.getByRole('link', { name: 'I have saved them' }).click();

  await page.goto(`${base}/test/top-up`);
  await page.getByLabel('Amount in TON').fill('50');
  await page.getByRole('button', { name: 'Add test funds' }).click();
  await page.waitForURL(/notice=funds_added/);
  await shot('top-up-test');

  const orders = [];
  for (const [recipient, quantity, externalId] of [
    ['@durov', 50, 'invoice-1041'],
    ['@jane_doe', 100, 'invoice-1042'],
    ['@test_failed', 250, 'invoice-1043'],
  ]) {
    orders.push(await api('POST', '/orders', testKey, { product: 'stars', recipient, quantity, external_id: externalId }));
  }
  const deadline = Date.now() + 30_000;
  for (const order of orders) {
    for (;;) {
      const current = await api('GET', `/orders/${order.id}`, testKey);
      if (current.status === 'delivered' || current.status === 'failed') break;
      if (Date.now() > deadline) throw new Error(`order ${order.id} did not finish`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  await page.goto(`${base}/test`);
  await page.locator('.chart .uplot canvas').nth(2).waitFor();
  await shot('overview');
  await page.goto(`${base}/top-up?amount=25`);
  await shot('top-up');
  await page.goto(`${base}/test/keys`);
  await shot('keys');
  await page.getByTestId('reissue-test').click();
  await page.getByRole('button', { name: 'Reissue and reveal test key' }).click();
  await page.getByTestId('new-key').waitFor();
  await shot('keys-new-key');
  await page.goto(`${base}/test/orders`);
  await shot('orders');
  await page.goto(`${base}/test/orders/${orders[1].id}`);
  await shot('order-detail');
  await page.goto(`${base}/test/balance`);
  await shot('balance-history');
  await page.goto(`${base}/test/webhooks`);
  await shot('webhooks');
  await page.goto(`${base}/no-such-page`);
  await shot('not-found');

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`${base}/test/orders`);
  await page.getByRole('button', { name: 'Menu' }).click();
  await page.screenshot({ path: path.join(out, 'phone-menu.png') });
  made.push('phone-menu.png');

  await consoleScreenshots({
    browser,
    service,
    shotTo: async (consolePage, name) => {
      await consolePage.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });
      made.push(`${name}.png`);
    },
  });

  for (const file of fs.readdirSync(out)) if (file.endsWith('.png') && !made.includes(file)) fs.rmSync(path.join(out, file));
  console.log(`docs/screenshots/: ${made.join(', ')}`);
} finally {
  await browser.close();
  await service.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}
