import { PermissionError, QuoteExpiredError, Starport, type StarportError } from '@starport/sdk';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.js';
import { type Harness, startHarness } from '../support/harness.js';
import { pollUntil, quiesce } from '../support/http.js';

/** The SDK's issue-6 methods against a real service over HTTP: lists, auto-pagination, test funding, quotes. */

let h: Harness;
const client = (apiKey: string) => new Starport({ apiKey, baseUrl: `${h.url}/api/v1`, initialRetryDelay: 10, maxRetryDelay: 50 });

beforeAll(async () => {
  h = await startHarness({ QUOTE_TTL_SECONDS: '1' });
});
afterAll(async () => {
  await h.close();
});

async function rejection(promise: Promise<unknown>): Promise<StarportError> {
  try {
    await promise;
  } catch (error) {
    return error as StarportError;
  }
  throw new Error('expected a rejection');
}

test('fundTestBalance, listOrders with filters, listAllOrders across pages, balanceHistory', async () => {
  const account = await h.account();
  const starport = client(account.testKey);
  const funded = await starport.fundTestBalance({ amount: '5' });
  expect(funded.balance).toEqual({ value: '5', reserved: '0', currency: 'TON' });
  expect(funded.entry.type).toBe('deposit');
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await starport.createOrder({ product: 'stars', recipient: '@durov', quantity: 50, external_id: `sdk-${i % 2}` })).id);
  const page = await starport.listOrders({ limit: 2 });
  expect(page.object).toBe('list');
  expect(page.data.map((o) => o.id)).toEqual([ids[4], ids[3]]);
  expect(page.has_more).toBe(true);
  expect(page.lastResponse.status).toBe(200);

  const all: string[] = [];
  for await (const order of starport.listAllOrders({ limit: 2 })) all.push(order.id);
  expect(all).toEqual([...ids].reverse());
  const filtered: string[] = [];
  for await (const order of starport.listAllOrders({ external_id: 'sdk-1', created: { gte: new Date(Date.now() - 60_000), lt: Math.ceil(Date.now() / 1000) + 60 } })) {
    filtered.push(order.id);
  }
  expect(filtered).toEqual([ids[3], ids[1]]);

  await quiesce(h);
  const entries = [];
  for await (const entry of starport.balanceHistory({ limit: 3 })) entries.push(entry);
  expect(entries.map((e) => e.type).sort()).toEqual(['debit', 'debit', 'debit', 'debit', 'debit', 'deposit', 'reserve', 'reserve', 'reserve', 'reserve', 'reserve']);
  const history = await starport.listBalanceHistory({ limit: 1 });
  expect(history.data[0]!.balance_after).toEqual({ ...(await starport.getBalance()).balance });
});

test('a live key cannot fund: PermissionError test_key_required, not retried', async () => {
  const account = await h.account();
  const error = await rejection(client(account.liveKey).fundTestBalance({ amount: '1' }));
  expect(error).toBeInstanceOf(PermissionError);
  expect(error.code).toBe('test_key_required');
});

test('getQuote id locks the price in createOrder; an expired quote is a QuoteExpiredError', async () => {
  const account = await h.account({ test: '10' });
  const starport = client(account.testKey);
  const quote = await starport.getQuote({ product: 'stars', quantity: 50 });
  expect(quote.id).toMatch(/^quo_/);
  h.setTonUsdRate('2');
  try {
    const order = await starport.createOrder({ product: 'stars', recipient: '@durov', quantity: 50, quote_id: quote.id });
    expect(order.amount.value).toBe(quote.amount.value);
  } finally {
    h.setTonUsdRate('3.0');
  }
  const expiring = await starport.getQuote({ product: 'stars', quantity: 50 });
  await pollUntil(
    async () => Date.now(),
    (now) => now > Date.parse(expiring.expires_at),
    { timeoutMs: 3000, intervalMs: 20, what: 'the quote to expire' },
  );
  const error = await rejection(starport.createOrder({ product: 'stars', recipient: '@durov', quantity: 50, quote_id: expiring.id }));
  expect(error).toBeInstanceOf(QuoteExpiredError);
  await quiesce(h);
  expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
});
