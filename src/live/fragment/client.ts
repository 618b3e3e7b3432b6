import { randomInt } from 'node:crypto';
import { MoneyFormatError, parseTon } from '../../domain/money.js';
import type { Product } from '../../domain/products.js';
import { decodeEntities, errorFromText, FragmentError } from './errors.js';
import type { Pacer } from './pacer.js';

/**
 * A client for fragment.com's web JSON API (docs/upstreams.md "Fragment: web JSON API", "Fragment: methods"): the page's
 * `POST /api?hash=…` RPC with form-encoded `method=…` calls, authenticated by the session
 * cookies of a logged-in, KYC-verified account with a connected TON wallet. No official API
 * exists: this copies what the page does, and every answer is checked before use.
 *
 * The session is read through `session()` on every call, so a session replaced at run time
 * (`starport fragment session set`) is used from the next call on; the page hash is scraped with
 * that session, kept per session, and re-scraped once when Fragment refuses it.
 */
export interface FragmentClientOptions {
  baseUrl: string;
  /** The Cookie header to send, or undefined when no session is configured. */
  session: () => Promise<string | undefined>;
  pacer: Pacer;
  timeoutMs: number;
}

export interface FoundRecipient {
  /** Fragment's opaque recipient token, passed to init. */
  token: string;
  /** Fragment's display name of the account. */
  name: string;
  myself: boolean;
}

export interface Invoice {
  reqId: string;
  /** What Fragment quoted at init, in nanotons. */
  amount: bigint;
}

/** The wallet that will pay, as TON Connect describes it (supplied by the paying side). */
export interface WalletAccount {
  /** Raw form `0:<64 hex>`. */
  address: string;
  /** Hex. */
  publicKey: string;
  /** base64 BOC of the wallet's StateInit. */
  walletStateInit: string;
}

interface TransactionMessage {
  address: string;
  amount: bigint;
  /** The payload BOC exactly as Fragment sent it (base64url, no padding). */
  payload: string;
}

export interface PaymentRequest {
  /** Unix seconds: the hard deadline of the invoice. */
  validUntil: number;
  from: string;
  message: TransactionMessage;
  /** Present when Fragment asks to be told about the signed message (confirmReq). */
  confirm?: { method: string; params: Record<string, unknown> };
}

export interface SessionCheck {
  /** The page answered with a logged-in marker (a /logout link or "My assets"). */
  loggedIn: boolean;
  /** The page carried an API hash. */
  hashFound: boolean;
  /** USD per TON from the page state (ajInit state.tonRate), when shown. */
  tonRate: string | undefined;
}

const PAGES: Record<Product, string> = { stars: '/stars/buy', premium: '/premium/gift' };
const METHODS = {
  stars: { search: 'searchStarsRecipient', state: 'updateStarsBuyState', init: 'initBuyStarsRequest', link: 'getBuyStarsLink', count: 'quantity' },
  premium: { search: 'searchPremiumGiftRecipient', state: 'updatePremiumState', init: 'initGiftPremiumRequest', link: 'getGiftPremiumLink', count: 'months' },
} as const;

/** A TON Connect DeviceInfo as Tonkeeper sends it (docs/upstreams.md "Fragment: methods"). */
const DEFAULT_DEVICE = {
  platform: 'linux',
  appName: 'Tonkeeper',
  appVersion: '4.0.0',
  maxProtocolVersion: 2,
  features: ['SendTransaction', { name: 'SendTransaction', maxMessages: 255 }],
};

const BROWSER_HEADERS = {
  'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
  Accept: 'application/json, text/javascript, */*; q=0.01',
  'X-Requested-With': 'XMLHttpRequest',
};

type Json = Record<string, unknown>;

export class FragmentClient {
  private hashes = new Map<string, string>();
  private hashSession: string | undefined;

  constructor(private readonly options: FragmentClientOptions) {}

  /** Looks a username up (stars: searchStarsRecipient; premium: searchPremiumGiftRecipient). */
  async searchRecipient(product: Product, username: string, quantity: number): Promise<FoundRecipient> {
    const m = METHODS[product];
    const reply = await this.call(product, m.search, { query: username, [m.count]: String(quantity) });
    const found = reply.found as Json | undefined;
    if (!found || typeof found.recipient !== 'string' || found.recipient === '') {
      throw new FragmentError('recipient_not_found', `Fragment found no account @${username}`);
    }
    return { token: found.recipient, name: typeof found.name === 'string' ? decodeEntities(found.name) : username, myself: found.myself === true };
  }

  /** Opens a purchase: the state call the page makes, then init (the binding TON quote). */
  async initBuy(product: Product, recipientToken: string, quantity: number): Promise<Invoice> {
    const m = METHODS[product];
    await this.call(product, m.state, { mode: 'new', lv: 'false', dh: String(randomInt(100_000_000, 2 ** 31 - 1)) });
    const reply = await this.call(product, m.init, { recipient: recipientToken, [m.count]: String(quantity), payment_method: 'ton' });
    if (reply.need_ton === true) throw new FragmentError('wallet_not_connected', 'Fragment: no TON wallet is connected to the session (need_ton)');
    if (typeof reply.req_id !== 'string' || reply.req_id === '') throw new FragmentError('bad_response', 'Fragment init returned no req_id');
    return { reqId: reply.req_id, amount: tonString(reply.amount, 'init amount') };
  }

  /** Asks for the TON Connect transaction that pays the request (get*Link with transaction=1). */
  async getTransaction(product: Product, reqId: string, account: WalletAccount, device: object = DEFAULT_DEVICE): Promise<PaymentRequest> {
    const reply = await this.call(product, METHODS[product].link, {
      id: reqId,
      transaction: '1',
      show_sender: '0',
      account: JSON.stringify({ address: account.address, publicKey: account.publicKey, chain: '-239', walletStateInit: account.walletStateInit }),
      device: JSON.stringify(device),
    });
    if (reply.need_verify === true) throw new FragmentError('kyc_required', 'Fragment: the account must pass identity verification (need_verify)');
    const transaction = reply.transaction as Json | undefined;
    const messages = transaction?.messages;
    if (!transaction || !Array.isArray(messages)) throw new FragmentError('bad_response', 'Fragment returned no transaction');
    // Every known client pays exactly one message; anything else is not a shape we understand.
    if (messages.length !== 1) throw new FragmentError('bad_response', `Fragment returned ${messages.length} messages, expected 1`);
    const message = messages[0] as Json;
    if (typeof message.address !== 'string' || typeof message.payload !== 'string' || message.payload === '') {
      throw new FragmentError('bad_response', 'Fragment returned a message without address or payload');
    }
    if (typeof message.amount !== 'string' || !/^\d{1,20}$/.test(message.amount) || BigInt(message.amount) === 0n) {
      throw new FragmentError('bad_response', 'Fragment returned a message without a nanoton amount');
    }
    if (typeof transaction.validUntil !== 'number' || !Number.isSafeInteger(transaction.validUntil)) {
      throw new FragmentError('bad_response', 'Fragment returned a transaction without validUntil');
    }
    const confirm = typeof reply.confirm_method === 'string' ? { method: reply.confirm_method, params: (reply.confirm_params as Json | undefined) ?? { id: reqId } } : undefined;
    return {
      validUntil: transaction.validUntil,
      from: typeof transaction.from === 'string' ? transaction.from : account.address,
      message: { address: message.address, amount: BigInt(message.amount), payload: message.payload },
      ...(confirm ? { confirm } : {}),
    };
  }

  /** Tells Fragment about the signed external message (confirmReq; optional in the flow). */
  async confirm(product: Product, reqId: string, boc: string, account: WalletAccount, device: object = DEFAULT_DEVICE): Promise<void> {
    await this.call(product, 'confirmReq', {
      id: reqId,
      boc,
      account: JSON.stringify({ address: account.address, publicKey: account.publicKey, chain: '-239', walletStateInit: account.walletStateInit }),
      device: JSON.stringify(device),
    });
  }

  /** The current TON price of `quantity` stars (updateStarsPrices' cur_price HTML). */
  async starsPrice(quantity: number): Promise<bigint> {
    const reply = await this.call('stars', 'updateStarsPrices', { stars: '', quantity: String(quantity), dh: String(randomInt(100_000_000, 2 ** 31 - 1)) });
    if (typeof reply.cur_price !== 'string') throw new FragmentError('bad_response', 'Fragment returned no cur_price');
    const [first] = tonValues(reply.cur_price);
    if (first === undefined) throw new FragmentError('bad_response', 'Fragment cur_price holds no TON value');
    return first;
  }

  /** TON prices of the Premium gift periods, from the /premium/gift page's radio items. */
  async premiumPrices(): Promise<Partial<Record<number, bigint>>> {
    const html = await this.page('premium');
    const prices: Partial<Record<number, bigint>> = {};
    for (const item of html.split(/class="tm-form-radio-item/).slice(1)) {
      const months = /name="months"\s+value="(\d+)"/.exec(item)?.[1];
      const [price] = tonValues(item);
      if (months && price !== undefined) prices[Number(months)] = price;
    }
    return prices;
  }

  /** Whether the session is logged in (the page's markers); makes one page request. */
  async checkSession(): Promise<SessionCheck> {
    const html = await this.page('stars');
    return {
      loggedIn: /href="\/logout|My assets/.test(html),
      hashFound: HASH.test(html),
      tonRate: /"tonRate"\s*:\s*"?(\d+(?:\.\d+)?)/.exec(html)?.[1],
    };
  }

  /**
   * One API method. Only search and init can say something about the recipient: a
   * recipient-like text from any other method (e.g. "Request not found" at get*Link) is an
   * upstream error, never a reason to fail the order as a refused recipient.
   */
  private async call(product: Product, method: string, fields: Record<string, string>): Promise<Json> {
    const recipientErrors = method.startsWith('search') || method.startsWith('init');
    for (let attempt = 0; ; attempt++) {
      const session = await this.session();
      const hash = await this.hash(product, session);
      const reply = await this.request(`/api?hash=${hash}`, product, session, {
        method: 'POST',
        body: new URLSearchParams({ ...fields, method }).toString(),
        headers: { 'Content-Type': 'application/x-www-form-urlencoded; charset=UTF-8' },
      });
      const json = parseJson(reply);
      if (typeof json.error === 'string' && json.error !== '') {
        const error = errorFromText(json.error);
        // A refused hash: scrape the page again once, then give up (the session is gone).
        if (error.code === 'session_expired' && attempt === 0) {
          this.hashes.clear();
          continue;
        }
        if (json.need_verify === true) throw new FragmentError('kyc_required', error.message);
        if (error.kind === 'recipient' && !recipientErrors) throw new FragmentError('upstream_error', error.message);
        throw error;
      }
      return json;
    }
  }

  private async session(): Promise<string> {
    const session = await this.options.session();
    if (!session) throw new FragmentError('session_expired', 'no Fragment session is configured (FRAGMENT_COOKIES or `starport fragment session set`)');
    if (session !== this.hashSession) {
      // A new session: hashes scraped with the old one may be tied to it.
      this.hashes.clear();
      this.hashSession = session;
    }
    return session;
  }

  private async hash(product: Product, session: string): Promise<string> {
    const known = this.hashes.get(product);
    if (known) return known;
    const html = await this.fetchPage(product, session);
    const hash = HASH.exec(html)?.[1];
    if (!hash) throw new FragmentError('session_expired', 'the Fragment page carries no API hash (session expired or page changed)');
    this.hashes.set(product, hash);
    return hash;
  }

  private async page(product: Product): Promise<string> {
    return this.fetchPage(product, await this.session());
  }

  private async fetchPage(product: Product, session: string): Promise<string> {
    return this.request(PAGES[product], product, session, { method: 'GET', headers: { Accept: 'text/html' } });
  }

  /** One paced HTTP exchange; transport trouble becomes a typed error. Never includes the cookies in a message. */
  private async request(path: string, product: Product, session: string, init: { method: string; body?: string; headers: Record<string, string> }): Promise<string> {
    await this.options.pacer.wait();
    const page = `${this.options.baseUrl}${PAGES[product]}`;
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${this.options.baseUrl}${path}`, {
        method: init.method,
        body: init.body,
        headers: { ...BROWSER_HEADERS, Origin: this.options.baseUrl, Referer: page, 'x-aj-referer': page, Cookie: session, ...init.headers },
        signal: AbortSignal.timeout(this.options.timeoutMs),
        redirect: 'manual',
      });
      text = await response.text();
    } catch (error) {
      const name = (error as Error).name;
      throw new FragmentError('network', `Fragment did not answer (${name === 'TimeoutError' ? `no answer in ${this.options.timeoutMs} ms` : (error as Error).message})`);
    }
    if (response.status === 200) return text;
    if (response.status === 429) throw new FragmentError('rate_limited', 'Fragment rate-limited the request (HTTP 429)');
    if (response.status === 403) {
      if (/just a moment|cf-browser-verification|cloudflare/i.test(text)) throw new FragmentError('blocked', 'Fragment (Cloudflare) blocked the request (HTTP 403)');
      throw new FragmentError('access_denied', 'Fragment refused the request (HTTP 403)');
    }
    if (response.status === 401 || (response.status >= 300 && response.status < 400)) {
      throw new FragmentError('session_expired', `Fragment answered HTTP ${response.status} (session expired?)`);
    }
    throw new FragmentError('http_error', `Fragment answered HTTP ${response.status}`);
  }
}

const HASH = /\/api\?hash=([a-f0-9]+)/;

function parseJson(text: string): Json {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new FragmentError('bad_response', 'Fragment answered with something that is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new FragmentError('bad_response', 'Fragment answered with JSON that is not an object');
  return value as Json;
}

function tonString(value: unknown, what: string): bigint {
  if (typeof value !== 'string' && typeof value !== 'number') throw new FragmentError('bad_response', `Fragment returned no ${what}`);
  try {
    const amount = parseTon(String(value).trim());
    if (amount <= 0n) throw new MoneyFormatError('zero');
    return amount;
  } catch {
    throw new FragmentError('bad_response', `Fragment returned an unreadable ${what}`);
  }
}

/**
 * TON values in Fragment's price HTML: `<div class="tm-value icon-before icon-ton">44<span
 * class="mini-frac">.6172</span></div>` (thousands may be separated by commas).
 */
function tonValues(html: string): bigint[] {
  const values: bigint[] = [];
  const pattern = /class="tm-value[^"]*icon-ton[^"]*">\s*([\d,]+)\s*(?:<span class="mini-frac">\s*(\.\d+)\s*<\/span>)?/g;
  for (const match of html.matchAll(pattern)) {
    try {
      values.push(parseTon(`${(match[1] ?? '').replace(/,/g, '')}${match[2] ?? ''}`));
    } catch {
      // a value with more than 9 decimals is not one we can pay: skip it
    }
  }
  return values;
}
