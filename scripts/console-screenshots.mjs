// The operator console's part of `npm run screenshots` (scripts/screenshots.mjs): seeds what an
// operator works on (accounts with live funds, a live order held for review with its wallet
// message, unmatched deposits), signs an admin in through the real pages as the browser suite
// does (test/browser/console.test.ts: set-password link, two-factor enrolment), credits an
// account so the audit log has an entry, and captures the main pages at 1280 px.
import { randomBytes } from 'node:crypto';
import { generate } from 'otplib';
import { createAccount } from '../dist/accounts/accounts.js';
import { depositMemo } from '../dist/accounts/deposit-memo.js';
import { loadConfig } from '../dist/config.js';
import { parseTon } from '../dist/domain/money.js';
import { adjustBalance } from '../dist/ledger/adjust.js';
import { storePayment } from '../dist/live/live-payments.js';
import { insertMessage } from '../dist/live/wallet/wallet-store.js';
import { createOperator } from '../dist/operator/operators.js';
import { createOrder } from '../dist/orders/create-order.js';
import { IdempotencyGate } from '../dist/orders/idempotency-gate.js';
import { transitionOrder } from '../dist/orders/transitions.js';
import { FixedRateFeed, ListPriceSource } from '../dist/providers/pricing/list-price-source.js';

const hex = () => randomBytes(32).toString('hex');
const PASSWORD = 'a long screenshot passphrase';
/** The paying wallet, stored in raw form as the service stores it (linked on tonviewer). */
const PAYING_WALLET = `0:${'5a'.repeat(32)}`;

/** A live order bought and paid, its wallet message gone from the chain: held for review. */
async function heldOrder(service, accountId, username, quantity, seqno) {
  const config = loadConfig({});
  const prices = new ListPriceSource(config.prices, new FixedRateFeed(config.tonUsdRate));
  const deps = { db: service.db, prices, gate: new IdempotencyGate(), liveAvailable: () => true, onCreated: () => undefined };
  // The worker would take a live order up at once (and fail it: no Fragment session here).
  await service.worker?.stop();
  try {
    const { order } = await createOrder(deps, { accountId, mode: 'live', externalId: `invoice-${seqno}`, idempotencyKey: hex(), product: 'stars', username, quantity });
    const db = service.db.kysely;
    const now = Date.now();
    await db.updateTable('orders').set({ next_run_at: null }).where('id', '=', order.id).execute();
    await transitionOrder(db, order, { to: 'processing', nextRunAt: null, now });
    const paid = order.amount - 10_000_000n;
    const fragmentReqId = `${hex().slice(0, 8)}-${hex().slice(0, 4)}`;
    await storePayment(db, {
      orderId: order.id,
      fragmentReqId,
      recipientName: username,
      quotedAmount: paid,
      destination: 'EQBAjaOyi2wGWlk-EDkSabqqnF-MrrwMadnwqrurKpkla9nE',
      amount: paid,
      payload: 'payload',
      validUntil: now + 600_000,
      createdAt: now,
    });
    const hash = hex();
    await insertMessage(db, { hash, wallet: PAYING_WALLET, seqno, validUntil: now + 60_000, boc: 'boc', total: order.amount, now }, [
      { orderId: order.id, destination: 'EQBAjaOyi2wGWlk-EDkSabqqnF-MrrwMadnwqrurKpkla9nE', amount: paid, bodyHash: hex() },
    ]);
    await db.updateTable('wallet_messages').set({ state: 'held' }).where('hash', '=', hash).execute();
    await db.updateTable('wallet_message_orders').set({ outcome: 'held' }).where('message_hash', '=', hash).execute();
    return order;
  } finally {
    service.worker?.start();
  }
}

/** A deposit the watcher could not match, as it records one. */
async function unmatchedDeposit(service, n, reason, ton, comment) {
  const now = Date.now() - n * 3_600_000;
  await service.db.kysely
    .insertInto('deposits')
    .values({
      id: `dep_screenshot${n}`,
      tx_hash: hex(),
      lt: now * 1000,
      address: 'deposit-wallet',
      sender: 'EQsender',
      amount: parseTon(ton),
      comment,
      status: 'unmatched',
      reason,
      account_id: null,
      chain_time: now,
      created_at: now,
      credited_at: null,
      credited_by: null,
    })
    .execute();
}

export async function consoleScreenshots({ browser, service, shotTo }) {
  const base = service.console.url;
  const db = service.db;
  const client = await createAccount(db, 'shop@example.com');
  await adjustBalance(db, { accountId: client.accountId, mode: 'live', amount: parseTon('120'), reason: 'first top-up' });
  const other = await createAccount(db, 'games@example.net');
  await adjustBalance(db, { accountId: other.accountId, mode: 'live', amount: parseTon('40'), reason: 'first top-up' });
  const held = await heldOrder(service, client.accountId, 'jane_doe', 500, 1041);
  await heldOrder(service, other.accountId, 'durov', 250, 1042);
  await unmatchedDeposit(service, 1, 'memo_unknown', '12.5', 'SP-QX7M-2RJA');
  await unmatchedDeposit(service, 2, 'no_comment', '3', null);
  await unmatchedDeposit(service, 3, 'memo_invalid', '20', 'SP-4KW9-TQ2X');

  const link = await createOperator(db, { email: 'ops@example.com', role: 'admin', actor: 'screenshots' });
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, deviceScaleFactor: 1, locale: 'en-US' });
  const page = await context.newPage();
  const shot = async (name) => {
    await page.waitForLoadState('load');
    await shotTo(page, name);
  };
  await page.goto(`${base}/set-password?token=${link.token}`);
  await page.locator('#password').fill(PASSWORD);
  await page.locator('#password-again').fill(PASSWORD);
  await page.getByRole('button', { name: 'Set password' }).click();
  await page.waitForURL(/\/enrol$/);
  const secret = (await page.getByTestId('totp-secret').textContent()).trim();
  await page.locator('#code').fill(await generate({ secret, epoch: Math.floor(Date.now() / 1000) - 30 }));
  await page.getByRole('button', { name: 'Turn on and continue' }).click();
  await page.waitForURL(`${base}/`);

  // A credit through the account page, so the audit log shows a console action.
  await page.goto(`${base}/accounts?q=${encodeURIComponent(await depositMemo(db, client.accountId))}`);
  await page.locator('#amount').fill('5');
  await page.locator('#reason').fill('goodwill: order 1039 delivered late');
  await page.locator('#code').fill(await generate({ secret }));
  await page.getByRole('button', { name: 'Adjust the balance' }).click();
  await page.waitForURL(/notice=credited/);

  // A mistyped memo's deposit credited to its account, so the deposits page has a settled one
  // (a code of the next 30-second step: each code works once).
  await page.goto(`${base}/deposits/dep_screenshot3`);
  await page.locator('#account').fill('shop@example.com');
  await page.locator('#reason').fill('the client sent the transaction hash by e-mail');
  await page.locator('#code').fill(await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }));
  await page.getByRole('button', { name: 'Credit the live balance' }).click();
  await page.waitForURL(/notice=assigned/);

  await page.goto(`${base}/`);
  await page.locator('.chart .uplot canvas').nth(1).waitFor();
  await shot('console-home');
  await page.goto(`${base}/accounts/${client.accountId}`);
  await shot('console-account');
  await page.goto(`${base}/orders?held=1`);
  await shot('console-orders-held');
  await page.goto(`${base}/orders/${held.id}`);
  await shot('console-order-evidence');
  await page.goto(`${base}/deposits`);
  await shot('console-deposits');
  await page.goto(`${base}/audit`);
  await shot('console-audit');
  await page.goto(`${base}/live`);
  await shot('console-live');
  await context.close();
}
