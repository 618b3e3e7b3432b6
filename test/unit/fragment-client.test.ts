import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { FragmentClient, type WalletAccount } from '../../src/live/fragment/client.js';
import { FragmentError, type FragmentErrorCode } from '../../src/live/fragment/errors.js';
import { Pacer } from '../../src/live/fragment/pacer.js';
import type { RecipientRefusal } from '../../src/domain/recipient-refusal.js';
import { payloadCell } from '../../src/live/wallet/signing-wallet.js';
import { commentOf, FAKE_SESSION, type Fault, FakeFragment, FRAGMENT_ADDRESS } from '../support/fragment/fake-fragment.js';

/** The Fragment client against the fake Fragment on loopback: every recorded shape and error. */

const ACCOUNT: WalletAccount = { address: `0:${'ab'.repeat(32)}`, publicKey: 'cd'.repeat(32), walletStateInit: 'te6cc' };

let fake: FakeFragment;
let session: string | undefined;
let client: FragmentClient;

beforeAll(async () => {
  fake = await FakeFragment.start();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.setSession(FAKE_SESSION);
  fake.kyc = true;
  fake.tonConnected = true;
  session = FAKE_SESSION;
  client = new FragmentClient({ baseUrl: fake.url, session: async () => session, pacer: new Pacer(1000), timeoutMs: 2000 });
  fake.setRecipient('durov', { name: 'Pavel Durov' });
});

async function failure(work: () => Promise<unknown>): Promise<FragmentError> {
  try {
    await work();
  } catch (error) {
    if (error instanceof FragmentError) return error;
    throw error;
  }
  throw new Error('expected a FragmentError');
}

describe('the purchase flow', () => {
  test('stars: search → init → transaction, payload passed through byte-exact', async () => {
    const found = await client.searchRecipient('stars', 'durov', 50);
    expect(found).toMatchObject({ name: 'Pavel Durov', myself: false });
    const invoice = await client.initBuy('stars', found.token, 50);
    expect(invoice.amount).toBe(245_000_000n);
    const request = await client.getTransaction('stars', invoice.reqId, ACCOUNT);
    const issued = fake.invoices.get(invoice.reqId);
    expect(request.message).toEqual({ address: FRAGMENT_ADDRESS, amount: 245_000_000n, payload: issued?.payload });
    expect(request.from).toBe(ACCOUNT.address);
    expect(request.validUntil).toBe(issued?.validUntil);
    expect(request.confirm).toEqual({ method: 'confirmReq', params: { id: invoice.reqId } });
    // At 33 bytes this comment fits in the root cell (the fake, like Fragment, splits after 35
    // bytes of text); the premium comments below are longer and span two cells.
    expect(payloadCell(request.message.payload).refs).toHaveLength(0);
    expect(commentOf(request.message.payload)).toMatch(/^50 Telegram Stars \n\nRef#[A-Za-z0-9]{9}$/);
    // The state call the page makes comes before init.
    const methods = fake.calls.slice(-4).map((c) => c.method);
    expect(methods).toEqual(['searchStarsRecipient', 'updateStarsBuyState', 'initBuyStarsRequest', 'getBuyStarsLink']);
    await client.confirm('stars', invoice.reqId, 'te6boc', ACCOUNT);
    expect(fake.invoices.get(invoice.reqId)?.confirmed).toBe(true);
  });

  test.each([3, 6, 12])('premium %i months', async (months) => {
    const found = await client.searchRecipient('premium', '@durov', months);
    const invoice = await client.initBuy('premium', found.token, months);
    const request = await client.getTransaction('premium', invoice.reqId, ACCOUNT);
    expect(request.message.amount).toBe(fake.premiumNanotons[months as 3 | 6 | 12]);
    // The comment spans two cells (35 bytes in the root, the rest in a child) and is read whole.
    expect(payloadCell(request.message.payload).refs).toHaveLength(1);
    expect(commentOf(request.message.payload)).toMatch(new RegExp(`^Telegram Premium for ${months === 12 ? '1 year' : `${months} months`} \\n\\nRef#`));
    expect(fake.calls.at(-1)?.fields).toMatchObject({ id: invoice.reqId, transaction: '1' });
    expect(JSON.parse(fake.calls.at(-1)?.fields.account ?? '')).toEqual({ ...ACCOUNT, chain: '-239' });
  });

  test('prices: stars from updateStarsPrices, premium from the page', async () => {
    expect(await client.starsPrice(1000)).toBe(4_900_000_000n);
    expect(await client.premiumPrices()).toEqual({ 3: 3_900_000_000n, 6: 5_300_000_000n, 12: 9_600_000_000n });
  });

  test('checkSession: logged in, hash, tonRate; logged out after expiry', async () => {
    expect(await client.checkSession()).toEqual({ loggedIn: true, hashFound: true, tonRate: '3.02' });
    fake.expireSession();
    expect((await client.checkSession()).loggedIn).toBe(false);
  });
});

describe('error texts and signals → typed errors', () => {
  const cases: [string, () => void, (c: FragmentClient) => Promise<unknown>, FragmentErrorCode, string][] = [
    ['not found', () => fake.setRecipient('ghost', { outcome: 'not_found' }), (c) => c.searchRecipient('stars', 'ghost', 50), 'recipient_not_found', 'recipient'],
    ['a channel', () => fake.setRecipient('chan', { outcome: 'not_user' }), (c) => c.searchRecipient('stars', 'chan', 50), 'recipient_not_user', 'recipient'],
    [
      'cannot receive',
      () => fake.setRecipient('blocked', { outcome: 'cannot_receive' }),
      (c) => c.searchRecipient('stars', 'blocked', 50),
      'recipient_cannot_receive',
      'recipient',
    ],
    [
      'premium already active',
      () => fake.setRecipient('prem', { outcome: 'premium_active' }),
      async (c) => c.initBuy('premium', (await c.searchRecipient('premium', 'prem', 3)).token, 3),
      'premium_already_active',
      'recipient',
    ],
    [
      'need_ton',
      () => (fake.tonConnected = false),
      async (c) => c.initBuy('stars', (await c.searchRecipient('stars', 'durov', 50)).token, 50),
      'wallet_not_connected',
      'unavailable',
    ],
    [
      'need_verify',
      () => (fake.kyc = false),
      async (c) => c.getTransaction('stars', (await c.initBuy('stars', (await c.searchRecipient('stars', 'durov', 50)).token, 50)).reqId, ACCOUNT),
      'kyc_required',
      'unavailable',
    ],
    ['session expired (Access denied)', () => fake.expireSession(), (c) => c.searchRecipient('stars', 'durov', 50), 'access_denied', 'unavailable'],
    ['no session configured', () => (session = undefined), (c) => c.searchRecipient('stars', 'durov', 50), 'session_expired', 'unavailable'],
  ];
  test.each(cases)('%s', async (_name, arrange, act, code, kind) => {
    arrange();
    const error = await failure(() => act(client));
    expect({ code: error.code, kind: error.kind }).toEqual({ code, kind });
    expect(error.message).not.toContain('fake-token');
  });

  const faults: [string, string, Fault, FragmentErrorCode, string][] = [
    ['HTTP 429', 'searchStarsRecipient', { status: 429 }, 'rate_limited', 'transient'],
    ['HTTP 403 Cloudflare', 'searchStarsRecipient', { status: 403, body: '<title>Just a moment...</title>' }, 'blocked', 'unavailable'],
    ['HTTP 403', 'searchStarsRecipient', { status: 403 }, 'access_denied', 'unavailable'],
    ['HTTP 502', 'searchStarsRecipient', { status: 502 }, 'http_error', 'transient'],
    ['network error', 'searchStarsRecipient', 'network', 'network', 'transient'],
    ['bad JSON', 'searchStarsRecipient', 'bad_json', 'bad_response', 'transient'],
    ['JSON array', 'searchStarsRecipient', { json: [] as unknown as Record<string, unknown> }, 'bad_response', 'transient'],
    ['price changed', 'initBuyStarsRequest', { error: 'Price was changed, please try again.' }, 'price_changed', 'transient'],
    ['unknown error text', 'initBuyStarsRequest', { error: 'Something odd happened' }, 'upstream_error', 'transient'],
    ['init without req_id', 'initBuyStarsRequest', { json: { ok: true, amount: '0.245' } }, 'bad_response', 'transient'],
    ['init with an unreadable amount', 'initBuyStarsRequest', { json: { req_id: 'x', amount: '1e3' } }, 'bad_response', 'transient'],
    ['expired invoice', 'getBuyStarsLink', { json: { ok: false, error: 'expired' } }, 'expired', 'transient'],
    ['a "not found" text at the link step is not a recipient problem', 'getBuyStarsLink', { error: 'Request not found' }, 'upstream_error', 'transient'],
    ['need_verify with an error text', 'getBuyStarsLink', { json: { ok: false, need_verify: true, error: 'Please verify' } }, 'kyc_required', 'unavailable'],
    ['no messages', 'getBuyStarsLink', { json: { ok: true, transaction: { validUntil: 1, messages: [] } } }, 'bad_response', 'transient'],
    [
      'two messages',
      'getBuyStarsLink',
      {
        json: {
          ok: true,
          transaction: {
            validUntil: 1,
            messages: [
              { address: 'a', amount: '1', payload: 'p' },
              { address: 'a', amount: '1', payload: 'p' },
            ],
          },
        },
      },
      'bad_response',
      'transient',
    ],
    [
      'amount not nanotons',
      'getBuyStarsLink',
      { json: { ok: true, transaction: { validUntil: 1, messages: [{ address: 'a', amount: 0.5, payload: 'p' }] } } },
      'bad_response',
      'transient',
    ],
  ];
  // docs/upstreams.md "Fragment: errors": each recipient answer is a refusal reason of docs/api.md.
  const refusals: [string, string, Fault, RecipientRefusal][] = [
    ['"No Telegram users found." at search', 'searchStarsRecipient', { error: 'No Telegram users found.' }, 'not_found'],
    ['search without found.recipient', 'searchStarsRecipient', { json: { ok: true } }, 'not_found'],
    ['"Please enter a username assigned to a user." (a bot, channel or group)', 'searchStarsRecipient', { error: 'Please enter a username assigned to a user.' }, 'not_a_user'],
    [
      '"You can&#39;t gift Telegram Stars to this account at this moment."',
      'searchStarsRecipient',
      { error: 'You can&#39;t gift Telegram Stars to this account at this moment.' },
      'not_eligible',
    ],
    [
      '"This account is already subscribed to Telegram Premium." at init',
      'initBuyStarsRequest',
      { error: 'This account is already subscribed to Telegram Premium.' },
      'already_premium',
    ],
    ['"User already has premium" at init', 'initBuyStarsRequest', { error: 'User already has premium' }, 'already_premium'],
  ];
  test.each(refusals)('refusal: %s → %s', async (_name, method, fault, refusal) => {
    fake.failNext(method, fault);
    const error = await failure(async () => {
      const found = await client.searchRecipient('stars', 'durov', 50);
      await client.initBuy('stars', found.token, 50);
    });
    expect({ kind: error.kind, refusal: error.refusal }).toEqual({ kind: 'recipient', refusal });
  });

  test('errors that are not about the recipient carry no refusal', async () => {
    fake.failNext('getBuyStarsLink', { error: 'Request not found' });
    const error = await failure(async () => {
      const found = await client.searchRecipient('stars', 'durov', 50);
      const invoice = await client.initBuy('stars', found.token, 50);
      await client.getTransaction('stars', invoice.reqId, ACCOUNT);
    });
    expect({ code: error.code, refusal: error.refusal }).toEqual({ code: 'upstream_error', refusal: undefined });
  });

  test.each(faults)('%s', async (_name, method, fault, code, kind) => {
    fake.failNext(method, fault);
    const error = await failure(async () => {
      const found = await client.searchRecipient('stars', 'durov', 50);
      const invoice = await client.initBuy('stars', found.token, 50);
      await client.getTransaction('stars', invoice.reqId, ACCOUNT);
    });
    expect({ code: error.code, kind: error.kind }).toEqual({ code, kind });
  });

  test('an expired invoice (validUntil passed) answers "expired"', async () => {
    fake.invoiceTtlSeconds = -1;
    try {
      const invoice = await client.initBuy('stars', (await client.searchRecipient('stars', 'durov', 50)).token, 50);
      expect((await failure(() => client.getTransaction('stars', invoice.reqId, ACCOUNT))).code).toBe('expired');
    } finally {
      fake.invoiceTtlSeconds = 600;
    }
  });
});

describe('page hash and session', () => {
  test('the hash is scraped once per session and re-scraped when Fragment refuses it', async () => {
    await client.searchRecipient('stars', 'durov', 50);
    const pages = fake.pages;
    await client.searchRecipient('stars', 'durov', 50);
    expect(fake.pages).toBe(pages);
    fake.rotateHash();
    await client.searchRecipient('stars', 'durov', 50);
    expect(fake.pages).toBe(pages + 1);
  });

  test('"Unknown error" at get*Link means the session or hash expired: the hash is re-scraped once, then session_expired', async () => {
    // docs/upstreams.md "Fragment: errors": Fragment's bare "Unknown error" at getBuyStarsLink is a stale session or hash.
    const invoice = await client.initBuy('stars', (await client.searchRecipient('stars', 'durov', 50)).token, 50);
    fake.failNext('getBuyStarsLink', { json: { ok: false, error: 'Unknown error' } });
    let pages = fake.pages;
    const request = await client.getTransaction('stars', invoice.reqId, ACCOUNT);
    expect(request.message.amount).toBe(245_000_000n);
    expect(fake.pages, 'one re-scrape, then the retry succeeds').toBe(pages + 1);

    fake.failNext('getBuyStarsLink', { json: { ok: false, error: 'Unknown error' } }, 2);
    pages = fake.pages;
    const error = await failure(() => client.getTransaction('stars', invoice.reqId, ACCOUNT));
    expect({ code: error.code, kind: error.kind }).toEqual({ code: 'session_expired', kind: 'unavailable' });
    expect(fake.pages, 'the hash is re-scraped once, not in a loop').toBe(pages + 1);
    expect(fake.count('getBuyStarsLink')).toBeGreaterThanOrEqual(3);
  });

  test('a new session is used on the very next call, with a fresh hash', async () => {
    await client.searchRecipient('stars', 'durov', 50);
    const renewed = 'stel_ssid=new; stel_dt=-180; stel_token=new; stel_ton_token=new';
    fake.setSession(renewed);
    expect((await failure(() => client.searchRecipient('stars', 'durov', 50))).code).toBe('access_denied');
    session = renewed;
    const pages = fake.pages;
    await client.searchRecipient('stars', 'durov', 50);
    expect(fake.pages).toBe(pages + 1);
    expect(fake.calls.at(-1)?.cookie).toBe(renewed);
  });

  test('a slow Fragment is cut off after the timeout (transient network error)', async () => {
    const impatient = new FragmentClient({ baseUrl: fake.url, session: async () => session, pacer: new Pacer(1000), timeoutMs: 100 });
    fake.latencyMs = 400;
    try {
      const error = await failure(() => impatient.searchRecipient('stars', 'durov', 50));
      expect({ code: error.code, kind: error.kind }).toEqual({ code: 'network', kind: 'transient' });
      expect(error.message).toMatch(/no answer in 100 ms/);
    } finally {
      fake.latencyMs = 0;
    }
  });

  test('FRAGMENT_MAX_RPS paces calls', async () => {
    const paced = new FragmentClient({ baseUrl: fake.url, session: async () => session, pacer: new Pacer(20), timeoutMs: 2000 });
    const started = performance.now();
    await Promise.all(Array.from({ length: 6 }, () => paced.searchRecipient('stars', 'durov', 50)));
    // 7 requests (one page + 6 calls) at 20/s: at least 6 intervals of 50 ms.
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  });
});
