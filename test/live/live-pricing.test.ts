import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mnemonicNew } from '@ton/crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { decimalFromJson } from '../../src/live/pricing/rate-feed.js';
import { FAKE_SESSION, FakeFragment } from '../support/fragment/fake-fragment.js';
import { type Harness, startHarness } from '../support/harness.js';
import { call, expectError, expectOk, expectRejected, getQuote, pollUntil, postOrder } from '../support/http.js';
import { definePricePlan, parseMarkupPercent, parseTierSpec } from '../../src/domain/price-plan.js';
import { assignPlan, definePlan } from '../../src/plans/plan-store.js';

/**
 * Live pricing: PRICE_SOURCE=usd with an HTTP rate feed (tonapi and CoinGecko shapes, served by
 * a fake feed on loopback) and its staleness limit, and PRICE_SOURCE=fragment (the fake
 * Fragment's TON prices × markup). Test mode keeps the configured TON_USD_RATE.
 */

/** A rate feed on loopback: answers `body()` (or `status`) and counts requests. */
class FakeFeed {
  body: () => unknown = () => ({});
  status = 200;
  requests = 0;
  url = '';
  private server = http.createServer((_req, res) => {
    this.requests++;
    res.writeHead(this.status, { 'content-type': 'application/json' }).end(JSON.stringify(this.body()));
  });

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

const tonapi = (usd: number | string) => ({ rates: { TON: { prices: { USD: usd }, diff_24h: { USD: '-1.2%' } } } });
const coingecko = (usd: number, updated = Math.floor(Date.now() / 1000)) => ({ 'the-open-network': { usd, last_updated_at: updated } });

let feed: FakeFeed;
let fragment: FakeFragment;
let mnemonic: string;
const harnesses: Harness[] = [];

beforeAll(async () => {
  feed = await new FakeFeed().start();
  fragment = await FakeFragment.start();
  mnemonic = (await mnemonicNew()).join(' ');
});
afterAll(async () => {
  for (const h of harnesses) await h.close();
  await feed.close();
  await fragment.close();
});

async function harness(env: Record<string, string>): Promise<Harness> {
  const h = await startHarness(env);
  harnesses.push(h);
  return h;
}

async function quote(h: Harness, key: string, query: string): Promise<string> {
  const res = await getQuote(h, key, query);
  expectOk(res);
  return res.body.amount.value;
}

test('JSON numbers become exact decimals', () => {
  expect(decimalFromJson(2.87)).toEqual({ units: 287n, scale: 2 });
  expect(decimalFromJson(1e-7)).toEqual({ units: 1n, scale: 7 });
  expect(decimalFromJson(1.5e21)).toEqual({ units: 1_500_000_000_000_000_000_000n, scale: 0 });
  expect(decimalFromJson('3.125')).toEqual({ units: 3125n, scale: 3 });
  expect(decimalFromJson(-1)).toBeUndefined();
  expect(decimalFromJson('abc')).toBeUndefined();
});

describe('PRICE_SOURCE=usd with a rate feed', () => {
  test('tonapi /v2/rates: live prices follow the feed (cached), test prices keep TON_USD_RATE', async () => {
    feed.status = 200;
    feed.body = () => tonapi(2.5);
    const h = await harness({ RATE_FEED: 'tonapi', RATE_FEED_URL: `${feed.url}/v2/rates?tokens=ton&currencies=usd`, RATE_REFRESH_SECONDS: '60' });
    const a = await h.account();
    expect(await quote(h, a.liveKey, '?product=stars&quantity=50')).toBe('0.3');
    expect(await quote(h, a.liveKey, '?product=premium&quantity=3')).toBe('4.796');
    expect(feed.requests, 'one feed request serves the refresh interval').toBe(1);
    expect(await quote(h, a.testKey, '?product=stars&quantity=50')).toBe('0.25');
  });

  test('CoinGecko simple/price; a rate older than RATE_MAX_AGE_SECONDS → 503 price_unavailable, nothing reserved', async () => {
    feed.status = 200;
    feed.body = () => coingecko(3.75);
    const h = await harness({
      RATE_FEED: 'coingecko',
      RATE_FEED_URL: `${feed.url}/api/v3/simple/price`,
      RATE_REFRESH_SECONDS: '1',
      RATE_MAX_AGE_SECONDS: '2',
      // Live fulfilment configured, so that POST /orders gets as far as pricing.
      FRAGMENT_BASE_URL: fragment.url,
      FRAGMENT_COOKIES: FAKE_SESSION,
      WALLET_MNEMONIC: mnemonic,
    });
    const a = await h.account({ live: '10' });
    expect(await quote(h, a.liveKey, '?product=stars&quantity=50')).toBe('0.2');
    // The feed breaks: the last rate is served until it is too old, then prices are refused.
    feed.status = 500;
    const res = await pollUntil(
      () => getQuote(h, a.liveKey, '?product=stars&quantity=50'),
      (r) => r.status !== 200,
      { what: 'the rate to go stale', timeoutMs: 10_000 },
    );
    expectError(res, 503, 'price_unavailable');
    await expectRejected(h, () => postOrder(h, a.liveKey, { product: 'stars', recipient: 'durov', quantity: 50 }), 503, 'price_unavailable');
    expect(await quote(h, a.testKey, '?product=stars&quantity=50')).toBe('0.25');
    // A feed that answers again brings prices back.
    feed.status = 200;
    expect(await quote(h, a.liveKey, '?product=stars&quantity=50')).toBe('0.2');
  });

  test('a feed whose own timestamp is too old is stale at once', async () => {
    feed.status = 200;
    feed.body = () => coingecko(3.75, Math.floor(Date.now() / 1000) - 3600);
    const h = await harness({ RATE_FEED: 'coingecko', RATE_FEED_URL: feed.url, RATE_MAX_AGE_SECONDS: '600' });
    const a = await h.account();
    expectError(await getQuote(h, a.liveKey, '?product=stars&quantity=50'), 503, 'price_unavailable');
  });

  test('an unusable answer (no rate, zero) is never used', async () => {
    feed.status = 200;
    feed.body = () => tonapi(0);
    const h = await harness({ RATE_FEED: 'tonapi', RATE_FEED_URL: feed.url });
    const a = await h.account();
    expectError(await getQuote(h, a.liveKey, '?product=stars&quantity=50'), 503, 'price_unavailable');
  });
});

describe('PRICE_SOURCE=fragment', () => {
  test("Fragment's TON price × markup, rounded up; premium from the page", async () => {
    const h = await harness({ PRICE_SOURCE: 'fragment', PRICE_MARKUP_PERCENT: '10', FRAGMENT_BASE_URL: fragment.url, FRAGMENT_COOKIES: FAKE_SESSION, WALLET_MNEMONIC: mnemonic });
    const a = await h.account({ live: '10' });
    expect(await quote(h, a.liveKey, '?product=stars&quantity=50')).toBe('0.2695');
    expect(await quote(h, a.liveKey, '?product=stars&quantity=1234')).toBe('6.65126');
    expect(await quote(h, a.liveKey, '?product=premium&quantity=3')).toBe('4.29');
    expect(await quote(h, a.liveKey, '?product=premium&quantity=12')).toBe('10.56');
    // The order reserves the same live price.
    const order = await postOrder(h, a.liveKey, { product: 'stars', recipient: 'durov', quantity: 50 });
    expectOk(order, 201);
    expect(order.body.amount.value).toBe('0.2695');
    // Test mode: the USD list with the same markup at TON_USD_RATE.
    expect(await quote(h, a.testKey, '?product=stars&quantity=50')).toBe('0.275');
  });

  test("a price plan: its markup replaces PRICE_MARKUP_PERCENT over Fragment's price; its USD prices go at the rate feed", async () => {
    const h = await harness({ PRICE_SOURCE: 'fragment', PRICE_MARKUP_PERCENT: '10', FRAGMENT_BASE_URL: fragment.url, FRAGMENT_COOKIES: FAKE_SESSION, WALLET_MNEMONIC: mnemonic });
    const [marked, priced] = [await h.account({ live: '10' }), await h.account({ live: '10' })];
    const now = Date.now();
    await definePlan(h.service.db, definePricePlan('flat', 'markup', [{ fromNanotons: 0n, markupPercent: parseMarkupPercent('0') }]), { actor: 'test', now });
    await definePlan(h.service.db, definePricePlan('usd', 'prices', [parseTierSpec('prices', '0:star=0.012,premium3=9,premium6=15,premium12=27', undefined)]), {
      actor: 'test',
      now,
    });
    await assignPlan(h.service.db, { accountId: marked.accountId, plan: 'flat', actor: 'test', reason: 'test', now });
    await assignPlan(h.service.db, { accountId: priced.accountId, plan: 'usd', actor: 'test', reason: 'test', now });
    // Fragment's own price (0.2695 and 4.29 with 10% above), without markup.
    expect(await quote(h, marked.liveKey, '?product=stars&quantity=50')).toBe('0.245');
    expect(await quote(h, marked.liveKey, '?product=premium&quantity=3')).toBe('3.9');
    // 50 × 0.012 USD and 9 USD at TON_USD_RATE 3 (RATE_FEED=fixed).
    expect(await quote(h, priced.liveKey, '?product=stars&quantity=50')).toBe('0.2');
    expect(await quote(h, priced.liveKey, '?product=premium&quantity=3')).toBe('3');
    const order = await postOrder(h, marked.liveKey, { product: 'stars', recipient: 'durov', quantity: 50 });
    expectOk(order, 201);
    expect(order.body.amount.value).toBe('0.245');
    const prices = await call(h, { path: '/prices', key: priced.liveKey });
    expectOk(prices);
    expect(prices.body.prices.map((line: { unit_price: { value: string } }) => line.unit_price.value)).toEqual(['0.004', '3', '5', '9']);
  });

  test('without a Fragment session → 503 price_unavailable', async () => {
    const h = await harness({ PRICE_SOURCE: 'fragment', FRAGMENT_BASE_URL: fragment.url });
    const a = await h.account();
    expectError(await getQuote(h, a.liveKey, '?product=stars&quantity=50'), 503, 'price_unavailable');
  });
});
