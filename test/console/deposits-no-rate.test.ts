import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { signedInOperator, totpCode } from '../support/console.js';
import { seedDeposit } from '../support/console-data.js';
import { type Harness, startHarness } from '../support/harness.js';
import { balanceOf } from '../support/http.js';

/**
 * A USDT deposit is converted at the TON/USD rate of the moment it is assigned: while the rate
 * feed (here a tonapi-shaped server answering 503) has no fresh rate, the console's assign is a
 * temporary failure (503, Retry-After) that moves nothing and leaves the two-factor code unspent;
 * once the feed answers, the same code assigns it at that rate.
 */
let h: Harness;
let feed: http.Server;
/** The USD/TON rate the feed serves, or undefined: HTTP 503. */
let served: string | undefined;
beforeAll(async () => {
  feed = http.createServer((_request, response) => {
    if (served === undefined) response.writeHead(503).end('{}');
    else response.writeHead(200, { 'content-type': 'application/json' }).end(`{"rates":{"TON":{"prices":{"USD":${served}}}}}`);
  });
  await new Promise<void>((resolve) => feed.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(feed.address() as AddressInfo).port}/v2/rates`;
  h = await startHarness({ OPERATOR_PORT: '0', RATE_FEED: 'tonapi', RATE_FEED_URL: url });
});
afterAll(async () => {
  await h?.close();
  await new Promise((resolve) => feed?.close(resolve));
});

test('no fresh rate: a USDT assign answers 503 with Retry-After and moves nothing; then it converts', async () => {
  const { id } = await seedDeposit(h, { amount: 50_000_000n, asset: 'USDT', jetton_amount: '10000000', jetton_wallet: 'our-usdt-wallet' });
  const account = await h.account({ live: '1' });
  const admin = await signedInOperator(h, 'admin', '10.44.5.7');
  const page = await admin.client.get(`/deposits/${id}`);
  const form = { account: account.accountId, reason: 'USDT without memo', _csrf: page.csrf as string };
  const code = await totpCode(admin.secret, 1);
  const refused = await admin.client.post(`/deposits/${id}/assign`, { ...form, code });
  expect(refused.status).toBe(503);
  expect(refused.headers['retry-after']).toMatch(/^\d+$/);
  expect(refused.body).toContain('no fresh rate');
  expect((await balanceOf(h, account.liveKey)).value).toBe('1');
  expect((await h.service.db.kysely.selectFrom('deposits').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status).toBe('unmatched');
  // The code was not spent (the rate is asked first): once the feed answers, the same code assigns it.
  served = '2.5';
  const assigned = await admin.client.post(`/deposits/${id}/assign`, { ...form, code });
  expect(assigned.location).toBe(`/deposits/${id}?notice=assigned`);
  // 10 USDT less 1 % at 2.5 USD/TON: 3.96 TON.
  expect((await balanceOf(h, account.liveKey)).value).toBe('4.96');
});
