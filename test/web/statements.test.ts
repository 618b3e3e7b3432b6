import { afterAll, beforeAll, expect, test } from 'vitest';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { fundTestBalance } from '../../src/ledger/test-funding.js';
import { type Harness, startHarness } from '../support/harness.js';
import { accountIdOf, signedUp, type WebClient } from '../support/web.js';

/** The dashboard's Statements: the months, a printable month, its CSV, and the months without one. */

let h: Harness;
let client: WebClient;
let accountId: string;
const now = new Date();
const current = `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;

beforeAll(async () => {
  h = await startHarness();
  const signed = await signedUp(h, '10.6.0.9');
  client = signed.client;
  accountId = await accountIdOf(h, signed.email);
  // Opened in January 2025: a live credit and debit in March, a test funding in May.
  await h.service.db.kysely
    .updateTable('accounts')
    .set({ created_at: Date.UTC(2025, 0, 15) })
    .where('id', '=', accountId)
    .execute();
  await adjustBalance(h.service.db, { accountId, mode: 'live', amount: 7_500_000_000n, reason: '=HYPERLINK("http://evil.example")' }, Date.UTC(2025, 2, 3));
  await adjustBalance(h.service.db, { accountId, mode: 'live', amount: -500_000_000n, reason: 'internal note' }, Date.UTC(2025, 2, 9));
  await fundTestBalance(h.service.db, { accountId, amount: 2_000_000_000n, reference: 'req_web' }, Date.UTC(2025, 4, 2));
});
afterAll(async () => {
  await h?.close();
});

test('the months since the account was opened, newest first, each with its CSV; the menu links it', async () => {
  const page = await client.get('/statements');
  expect(page.status).toBe(200);
  expect(page.body).toContain('href="/statements" aria-current="page"');
  const months = [...page.body.matchAll(/<a href="\/statements\/(\d{4}-\d{2})">/g)].map((m) => m[1]);
  expect(months[0]).toBe(current);
  expect(months.at(-1)).toBe('2025-01');
  expect(months).toContain('2025-03');
  expect(page.body).toContain('href="/statements/2025-03.csv" download');
  expect((await client.get('/test/statements')).body).toContain('href="/test/statements/2025-05"');
});

test('a month as a printable page, with the print button and no operator notes', async () => {
  const page = await client.get('/statements/2025-03');
  expect(page.status).toBe(200);
  expect(page.body).toContain('Live balance statement, March 2025');
  expect(page.body).toContain('data-print');
  expect(page.body).toMatch(/Adjustments: credits<\/th><td class="num"><\/td><td class="num" data-label="Amount">7\.5 TON/);
  expect(page.body).toMatch(/Adjustments: debits<\/th><td class="num"><\/td><td class="num" data-label="Amount">-0\.5 TON/);
  expect(page.body).toMatch(/Closing balance: available<\/th><td class="num"><\/td><td class="num" data-label="Amount">7 TON/);
  expect(page.body).not.toContain('HYPERLINK');
  expect(page.body).not.toContain('internal note');
  const april = await client.get('/statements/2025-04');
  expect(april.body).toMatch(/Opening balance: available<\/th><td class="num"><\/td><td class="num" data-label="Amount">7 TON/);
  const test = await client.get('/test/statements/2025-05');
  expect(test.body).toContain('Test balance statement, May 2025');
  expect(test.body).toMatch(/Deposits in TON<\/th><td class="num" data-label="Count">1<\/td><td class="num" data-label="Amount">2 TON/);
});

test('the CSV download', async () => {
  const csv = await client.get('/statements/2025-03.csv');
  expect(csv.status).toBe(200);
  expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
  expect(csv.headers['content-disposition']).toBe('attachment; filename="statement-live-2025-03.csv"');
  const lines = csv.body.split('\r\n');
  expect(lines[0]).toBe('section,item,date,count,quantity,amount_ton');
  expect(lines).toContain('adjustments,credits,,,,7.5');
  expect(lines).toContain('adjustment,operator adjustment,2025-03-09T00:00:00.000Z,1,,-0.5');
  expect(lines).toContain('closing balance,available,2025-04-01T00:00:00.000Z,,,7');
  expect(csv.body).not.toContain('HYPERLINK');
});

test('no statement before the account, for a month not begun, or at a malformed address: 404 with the reason', async () => {
  const before = await client.get('/statements/2024-12');
  expect(before.status).toBe(404);
  expect(before.body).toContain('No statement for 2024-12: the account did not exist yet');
  const future = await client.get('/statements/2099-01.csv');
  expect(future.status).toBe(404);
  expect(future.body).toContain('that month has not begun');
  const malformed = await client.get('/statements/2025-13');
  expect(malformed.status).toBe(404);
  expect(malformed.body).toContain('statements are addressed as YYYY-MM');
  const anonymous = await h.inject({ method: 'GET', url: '/statements/2025-03.csv' });
  expect(anonymous.statusCode).toBe(303);
});
