import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.js';
import { type Harness, startHarness } from '../support/harness.js';
import { balanceOf, expectError, expectOk, expectOrderRejected, expectRejected, getQuote, newKey, pollUntil, postOrder, quiesce, STARS_50 } from '../support/http.js';

/** Price-locked quotes: GET /quote's id, POST /orders quote_id. */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});
afterEach(() => h.setTonUsdRate('3.0'));

async function quote(key: string, query = '?product=stars&quantity=50') {
  const res = await getQuote(h, key, query);
  expectOk(res);
  expect(res.body.id).toMatch(/^quo_[0-9A-Za-z]{63}$/);
  return res.body as { id: string; amount: { value: string }; expires_at: string };
}

describe('the locked price', () => {
  test('holds when TON_USD_RATE changes between the quote and the order', async () => {
    const a = await h.account({ test: '10' });
    const locked = await quote(a.testKey);
    expect(locked.amount.value).toBe('0.25');
    h.setTonUsdRate('1.5'); // TON halves in USD: fresh prices double
    expect((await quote(a.testKey)).amount.value).toBe('0.5');
    const withQuote = await postOrder(h, a.testKey, { ...STARS_50, quote_id: locked.id });
    expectOk(withQuote, 201);
    expect(withQuote.body.amount).toEqual({ value: '0.25', currency: 'TON' });
    const fresh = await postOrder(h, a.testKey, STARS_50);
    expect(fresh.body.amount).toEqual({ value: '0.5', currency: 'TON' });
    expect(await balanceOf(h, a.testKey)).toMatchObject({ value: '9.25' });
    // The rate going the other way: the quote holds too (it is a lock, not a cap).
    const second = await quote(a.testKey, '?product=premium&quantity=3');
    h.setTonUsdRate('6');
    const order = await postOrder(h, a.testKey, { product: 'premium', recipient: 'durov', quantity: 3, quote_id: second.id });
    expect(order.body.amount.value).toBe(second.amount.value);
  });

  test('a quote prices one order; the same request replayed is fine', async () => {
    const a = await h.account({ test: '10' });
    const q = await quote(a.testKey);
    const key = newKey();
    const first = await postOrder(h, a.testKey, { ...STARS_50, quote_id: q.id }, key);
    expectOk(first, 201);
    const replay = await postOrder(h, a.testKey, { ...STARS_50, quote_id: q.id }, key);
    expectOk(replay, 201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.id).toBe(first.body.id);
    await expectOrderRejected(h, a.testKey, { ...STARS_50, quote_id: q.id }, 400, 'quote_mismatch', 'quote_id');
  });

  test('two orders racing for one quote: exactly one gets it', async () => {
    const a = await h.account({ test: '10' });
    const q = await quote(a.testKey);
    const results = await Promise.all([1, 2, 3].map(() => postOrder(h, a.testKey, { ...STARS_50, quote_id: q.id })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 400, 400]);
    for (const r of results.filter((r) => r.status === 400)) expectError(r, 400, 'quote_mismatch', 'quote_id');
  });

  test('quote_id is part of the idempotency fingerprint', async () => {
    const a = await h.account({ test: '10' });
    const q1 = await quote(a.testKey);
    const q2 = await quote(a.testKey);
    const key = newKey();
    expectOk(await postOrder(h, a.testKey, { ...STARS_50, quote_id: q1.id }, key), 201);
    expectError(await postOrder(h, a.testKey, { ...STARS_50, quote_id: q2.id }, key), 409, 'idempotency_conflict');
    expectError(await postOrder(h, a.testKey, STARS_50, key), 409, 'idempotency_conflict');
    // Without a quote, null and absent are the same request.
    const plain = newKey();
    expectOk(await postOrder(h, a.testKey, STARS_50, plain), 201);
    const again = await postOrder(h, a.testKey, { ...STARS_50, quote_id: null }, plain);
    expectOk(again, 201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    // The unused quote q2 is still good.
    expectOk(await postOrder(h, a.testKey, { ...STARS_50, quote_id: q2.id }), 201);
  });

  test('an order refused for its balance does not use up the quote', async () => {
    const a = await h.account();
    const q = await quote(a.testKey);
    await expectRejected(h, () => postOrder(h, a.testKey, { ...STARS_50, quote_id: q.id }), 402, 'insufficient_balance', 'quantity');
    await h.credit(a.accountId, 'test', '1');
    const res = await postOrder(h, a.testKey, { ...STARS_50, quote_id: q.id });
    expectOk(res, 201);
    expect(res.body.amount.value).toBe('0.25');
  });
});

describe('mismatches → 400 quote_mismatch, malformed → 400 invalid_request; nothing written, key not bound', () => {
  test('another quantity, product, account or mode; an unknown id', async () => {
    const a = await h.account({ test: '10', live: '10' });
    const other = await h.account({ test: '10' });
    const q = await quote(a.testKey);
    await expectOrderRejected(h, a.testKey, { ...STARS_50, quantity: 51, quote_id: q.id }, 400, 'quote_mismatch', 'quote_id');
    const premium = await quote(a.testKey, '?product=premium&quantity=3');
    await expectOrderRejected(h, a.testKey, { ...STARS_50, quote_id: premium.id }, 400, 'quote_mismatch', 'quote_id');
    await expectOrderRejected(h, other.testKey, { ...STARS_50, quote_id: q.id }, 400, 'quote_mismatch', 'quote_id');
    const liveQuote = await quote(a.liveKey);
    await expectOrderRejected(h, a.testKey, { ...STARS_50, quote_id: liveQuote.id }, 400, 'quote_mismatch', 'quote_id');
    await expectOrderRejected(h, a.testKey, { ...STARS_50, quote_id: 'quo_000000000000000000000000000000000000000000000000000000000000000' }, 400, 'quote_mismatch', 'quote_id');
    // Still usable by its own account for the right order.
    expectOk(await postOrder(h, a.testKey, { ...STARS_50, quote_id: q.id }), 201);
  });

  test.each([123, '', 'abc', 'ord_7hQ2mZ0bV4nC8xK1pL5sWd', 'quo_with space', true, {}])('quote_id %j', async (quoteId) => {
    const a = await h.account({ test: '10' });
    await expectOrderRejected(h, a.testKey, { ...STARS_50, quote_id: quoteId }, 400, 'invalid_request', 'quote_id');
  });

  test('field order: external_id before quote_id, quote_id before unknown fields', async () => {
    const a = await h.account({ test: '10' });
    await expectOrderRejected(h, a.testKey, { ...STARS_50, external_id: '', quote_id: 1 }, 400, 'invalid_external_id', 'external_id');
    await expectOrderRejected(h, a.testKey, { ...STARS_50, quote_id: 1, zzz: 1 }, 400, 'invalid_request', 'quote_id');
  });

  test('quote checks come before live_unavailable', async () => {
    const a = await h.account({ test: '10', live: '10' });
    const q = await quote(a.testKey);
    await expectRejected(h, () => postOrder(h, a.liveKey, { ...STARS_50, quote_id: q.id }), 400, 'quote_mismatch', 'quote_id');
    const liveQuote = await quote(a.liveKey);
    await expectRejected(h, () => postOrder(h, a.liveKey, { ...STARS_50, quote_id: liveQuote.id }), 503, 'live_unavailable');
  });
});

describe('expiry (QUOTE_TTL_SECONDS=1)', () => {
  let short: Harness;
  beforeAll(async () => {
    short = await startHarness({ QUOTE_TTL_SECONDS: '1' });
  });
  afterAll(async () => {
    await short.close();
  });

  test('an expired quote → 409 quote_expired; a replay of the order that used it still answers 201', async () => {
    const a = await short.account({ test: '10' });
    const q1 = (await getQuote(short, a.testKey, '?product=stars&quantity=50')).body;
    const q2 = (await getQuote(short, a.testKey, '?product=stars&quantity=50')).body;
    const key = newKey();
    const used = await postOrder(short, a.testKey, { ...STARS_50, quote_id: q1.id }, key);
    expectOk(used, 201);
    expect(Date.parse(q2.expires_at) - Date.now()).toBeLessThanOrEqual(1000);
    // Wait until the quote's expires_at has passed (bounded: 1 s of TTL).
    await pollUntil(
      async () => Date.now(),
      (now) => now > Date.parse(q2.expires_at),
      { timeoutMs: 3000, intervalMs: 20, what: 'the quote to expire' },
    );
    await expectOrderRejected(short, a.testKey, { ...STARS_50, quote_id: q2.id }, 409, 'quote_expired', 'quote_id');
    const replay = await postOrder(short, a.testKey, { ...STARS_50, quote_id: q1.id }, key);
    expectOk(replay, 201);
    expect(replay.body.id).toBe(used.body.id);
    // Mismatch is reported before expiry.
    await expectOrderRejected(short, a.testKey, { ...STARS_50, quantity: 60, quote_id: q2.id }, 400, 'quote_mismatch', 'quote_id');
    await quiesce(short);
    expect(await verifyLedger(short.service.db.kysely)).toEqual([]);
  });
});

test('GET /quote writes nothing; only an order records its quote, and a tampered or forged id is no quote', async () => {
  const a = await h.account({ test: '10' });
  const { kysely } = h.service.db;
  const count = async () => (await kysely.selectFrom('quotes').select('id').where('account_id', '=', a.accountId).execute()).length;
  const quotes = [];
  for (let i = 0; i < 5; i++) quotes.push(await quote(a.testKey));
  expect(new Set(quotes.map((q) => q.id)).size).toBe(5);
  expect(await count()).toBe(0);
  // One character changed anywhere breaks the signature.
  const valid = quotes[0]!.id;
  for (const at of [4, 30, valid.length - 1]) {
    const tampered = valid.slice(0, at) + (valid[at] === 'A' ? 'B' : 'A') + valid.slice(at + 1);
    await expectOrderRejected(h, a.testKey, { ...STARS_50, quote_id: tampered }, 400, 'quote_mismatch', 'quote_id');
  }
  await expectOrderRejected(h, a.testKey, { ...STARS_50, quote_id: `quo_${'z'.repeat(63)}` }, 400, 'quote_mismatch', 'quote_id');
  expectOk(await postOrder(h, a.testKey, { ...STARS_50, quote_id: valid }), 201);
  expect(await count()).toBe(1);
});

test('the journal and balances stay consistent (ledger verify)', async () => {
  await quiesce(h);
  expect(await verifyLedger(h.service.db.kysely)).toEqual([]);
});
