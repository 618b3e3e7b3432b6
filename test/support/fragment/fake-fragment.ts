import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { beginCell, Cell } from '@ton/core';
import { formatTon } from '../../../src/domain/money.js';

/**
 * A fake fragment.com on loopback speaking the shapes of docs/upstreams.md "Fragment: methods":
 * the pages (`/stars/buy`, `/premium/gift`) carrying `ajInit({"apiUrl":"/api?hash=…"})` and
 * a logged-in marker, and the `POST /api?hash=…` JSON methods for stars and premium (search,
 * state, prices, init, get*Link with transaction=1, confirmReq), answering HTTP 200 with
 * `{error}` for logical errors the way Fragment does.
 *
 * What a test controls:
 * - the session: only requests carrying `session` as their Cookie header are logged in
 *   (`setSession`, `expireSession`); others get `{"error":"Access denied"}`;
 * - the page hash (`rotateHash`: the old one then answers `{"error":"Bad request"}`);
 * - recipients and their outcome (`setRecipient`; unknown usernames are not found unless
 *   `anyoneExists`);
 * - prices (`starNanotons` per star, `premiumNanotons` per period), KYC (`kyc: false` → get*Link
 *   answers need_verify), a connected TON wallet (`tonConnected: false` → init answers need_ton),
 *   invoice lifetime (`invoiceTtlSeconds`), latency (`latencyMs`);
 * - one-shot faults per method (`failNext`): an HTTP status, an `{error}` text, any JSON, a body
 *   that is not JSON, or a dropped connection.
 *
 * What a test reads: every call (`calls`, `count`), every invoice by req_id and by Ref
 * (`invoices`, `invoiceByRef`) with how many times its transaction was asked for, and payments
 * reported by a fake chain per Ref (`recordPayment`, `paymentsByRef`). Payload BOCs are real
 * snake-comment cells split after 35 bytes of text, so a decoder that slices bytes breaks.
 */
export type RecipientOutcome = 'ok' | 'not_found' | 'not_user' | 'cannot_receive' | 'premium_active';

export interface FakeRecipient {
  name: string;
  outcome: RecipientOutcome;
}

export type Fault = { status: number; body?: string } | { error: string } | { json: Record<string, unknown> } | 'bad_json' | 'network';

export interface FakeFragmentOptions {
  /** The Cookie header of the valid session. */
  session?: string;
  latencyMs?: number;
  /** TON per star in nanotons (default 0.0049: 50 stars = 0.245 TON, under the default list price). */
  starNanotons?: bigint;
  premiumNanotons?: Record<3 | 6 | 12, bigint>;
  invoiceTtlSeconds?: number;
  kyc?: boolean;
  tonConnected?: boolean;
  /** Every well-formed username exists and can receive (name = the username). */
  anyoneExists?: boolean;
}

export interface FakeInvoice {
  reqId: string;
  ref: string;
  product: 'stars' | 'premium';
  quantity: number;
  username: string;
  amount: bigint;
  /** Unix seconds. */
  validUntil: number;
  /** The payload BOC (base64url) handed out for this invoice. */
  payload: string;
  comment: string;
  /** How many times get*Link was answered with the transaction. */
  links: number;
  confirmed: boolean;
}

export const FRAGMENT_ADDRESS = 'EQCFJEP4WZ_mpdo0_kMEmsTgvrMHG7K_tWY16pQhKHwoOoy2';
export const FAKE_SESSION = 'stel_ssid=fake-ssid; stel_dt=-180; stel_token=fake-token; stel_ton_token=fake-ton-token';

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const randomText = (n: number) => Array.from(randomBytes(n), (b) => ALNUM[b % ALNUM.length]).join('');

/** Fragment's comment cell: opcode 0 and the first 35 bytes in the root, the rest in a child ref. */
export function commentPayload(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  const head = bytes.subarray(0, 35);
  const tail = bytes.subarray(35);
  const root = beginCell().storeUint(0, 32).storeBuffer(head);
  if (tail.length > 0) root.storeRef(beginCell().storeBuffer(tail).endCell());
  return root.endCell().toBoc().toString('base64url');
}

/** The comment text of a payload BOC (snake string across refs). */
export function commentOf(payload: string): string {
  const slice = Cell.fromBase64(Buffer.from(payload, 'base64url').toString('base64')).beginParse();
  if (slice.loadUint(32) !== 0) throw new Error('not a text comment');
  return slice.loadStringTail();
}

export function premiumTitle(months: number): string {
  return `Telegram Premium for ${months === 12 ? '1 year' : `${months} months`}`;
}

/** Fragment shows TON with 4 decimals; amounts are rounded up to 0.0001 TON like its quotes. */
const roundQuote = (nanotons: bigint) => ((nanotons + 99_999n) / 100_000n) * 100_000n;

export class FakeFragment {
  session: string;
  hash = randomBytes(9).toString('hex');
  readonly recipients = new Map<string, FakeRecipient>();
  readonly invoices = new Map<string, FakeInvoice>();
  readonly paymentsByRef = new Map<string, number>();
  readonly calls: { method: string; fields: Record<string, string>; cookie: string | undefined }[] = [];
  pages = 0;
  latencyMs: number;
  starNanotons: bigint;
  premiumNanotons: Record<3 | 6 | 12, bigint>;
  invoiceTtlSeconds: number;
  kyc: boolean;
  tonConnected: boolean;
  anyoneExists: boolean;
  private faults: { method: string; fault: Fault }[] = [];
  private server: http.Server | undefined;
  url = '';

  constructor(options: FakeFragmentOptions = {}) {
    this.session = options.session ?? FAKE_SESSION;
    this.latencyMs = options.latencyMs ?? 0;
    this.starNanotons = options.starNanotons ?? 4_900_000n;
    this.premiumNanotons = options.premiumNanotons ?? { 3: 3_900_000_000n, 6: 5_300_000_000n, 12: 9_600_000_000n };
    this.invoiceTtlSeconds = options.invoiceTtlSeconds ?? 600;
    this.kyc = options.kyc ?? true;
    this.tonConnected = options.tonConnected ?? true;
    this.anyoneExists = options.anyoneExists ?? false;
  }

  static async start(options: FakeFragmentOptions = {}): Promise<FakeFragment> {
    const fake = new FakeFragment(options);
    await fake.listen();
    return fake;
  }

  async listen(): Promise<void> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  setRecipient(username: string, recipient: Partial<FakeRecipient> = {}): void {
    this.recipients.set(username.toLowerCase(), { name: recipient.name ?? username, outcome: recipient.outcome ?? 'ok' });
  }

  /** The next `times` calls of `method` (an API method name, or 'page') answer with `fault`. */
  failNext(method: string, fault: Fault, times = 1): void {
    for (let i = 0; i < times; i++) this.faults.push({ method, fault });
  }

  /** A new valid session; the old cookies stop working. */
  setSession(cookie: string): void {
    this.session = cookie;
  }

  expireSession(): void {
    this.session = `expired-${randomText(8)}`;
  }

  /** A new page hash; the old one answers "Bad request". */
  rotateHash(): void {
    this.hash = randomBytes(9).toString('hex');
  }

  count(method: string): number {
    return this.calls.filter((c) => c.method === method).length;
  }

  invoiceByRef(ref: string): FakeInvoice | undefined {
    return [...this.invoices.values()].find((i) => i.ref === ref);
  }

  /** A fake chain reports a payment carrying `payload`: counted per Ref. */
  recordPayment(payload: string): string {
    const ref = /Ref#(\w+)/.exec(commentOf(payload))?.[1];
    if (!ref) throw new Error('payment without a Ref');
    this.paymentsByRef.set(ref, (this.paymentsByRef.get(ref) ?? 0) + 1);
    return ref;
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (this.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
    const url = new URL(req.url ?? '/', 'http://fake');
    const cookie = req.headers.cookie;
    const loggedIn = cookie === this.session;
    if (req.method === 'GET' && (url.pathname === '/stars/buy' || url.pathname === '/premium/gift')) {
      this.pages++;
      if (this.injected('page', res)) return;
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(this.pageHtml(url.pathname, loggedIn));
      return;
    }
    if (req.method !== 'POST' || url.pathname !== '/api') {
      res.writeHead(404).end('Not found');
      return;
    }
    const fields = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
    const method = fields.method ?? '';
    this.calls.push({ method, fields, cookie });
    if (this.injected(method, res)) return;
    const hash = url.searchParams.get('hash');
    // A missing, foreign or outdated hash (docs/upstreams.md "Fragment: errors": "Bad request").
    if (hash !== this.hash) return json(res, { error: 'Bad request' });
    if (!loggedIn) return json(res, { error: 'Access denied' });
    json(res, this.answer(method, fields));
  }

  /** Answers a scheduled fault for `method`, if any. */
  private injected(method: string, res: http.ServerResponse): boolean {
    const index = this.faults.findIndex((f) => f.method === method);
    if (index < 0) return false;
    const fault = (this.faults.splice(index, 1)[0] as { fault: Fault }).fault;
    if (fault === 'network') res.socket?.destroy();
    else if (fault === 'bad_json') res.writeHead(200, { 'content-type': 'application/json' }).end('<html>not json');
    else if ('status' in fault) res.writeHead(fault.status, { 'content-type': 'text/html' }).end(fault.body ?? 'error');
    else if ('error' in fault) json(res, { error: fault.error });
    else json(res, fault.json);
    return true;
  }

  private answer(method: string, f: Record<string, string>): Record<string, unknown> {
    switch (method) {
      case 'searchStarsRecipient':
      case 'searchPremiumGiftRecipient':
        return this.search(f.query ?? '');
      case 'updateStarsBuyState':
      case 'updatePremiumState':
        return { ok: true, mode: f.mode ?? 'new', dh: f.dh ?? '0', html: '<div></div>', options_html: '<div></div>' };
      case 'updateStarsPrices': {
        const amount = roundQuote(this.starNanotons * BigInt(f.quantity || '50'));
        return { ok: true, cur_price: priceHtml(amount, (Number(f.quantity || '50') * 0.015).toFixed(2)), options_html: '<div></div>', dh: f.dh ?? '0' };
      }
      case 'initBuyStarsRequest':
        return this.init('stars', f.recipient ?? '', Number(f.quantity));
      case 'initGiftPremiumRequest':
        return this.init('premium', f.recipient ?? '', Number(f.months));
      case 'getBuyStarsLink':
      case 'getGiftPremiumLink':
        return this.link(f);
      case 'confirmReq': {
        const invoice = this.invoices.get(f.id ?? '');
        if (!invoice) return { error: 'Request not found' };
        invoice.confirmed = true;
        return { ok: true };
      }
      default:
        return { error: 'Unknown method' };
    }
  }

  private lookup(query: string): FakeRecipient | undefined {
    const username = query
      .replace(/^@/, '')
      .replace(/^https:\/\/t\.me\//, '')
      .toLowerCase();
    return this.recipients.get(username) ?? (this.anyoneExists ? { name: query.replace(/^@/, ''), outcome: 'ok' } : undefined);
  }

  private search(query: string): Record<string, unknown> {
    const recipient = this.lookup(query);
    if (!recipient || recipient.outcome === 'not_found') return { error: 'No Telegram users found.' };
    if (recipient.outcome === 'not_user') return { error: 'Please enter a username assigned to a user.' };
    if (recipient.outcome === 'cannot_receive') return { error: 'You can&#39;t gift Telegram Stars to this account at this moment.' };
    // The token is opaque to clients; this fake encodes the username in it.
    const token = Buffer.from(`${query.replace(/^@/, '').toLowerCase()}:${randomText(40)}`).toString('base64url');
    return { ok: true, found: { myself: false, recipient: token, name: recipient.name, photo: '<img src="https://cdn.example/p.jpg">' } };
  }

  private init(product: 'stars' | 'premium', token: string, quantity: number): Record<string, unknown> {
    const username = Buffer.from(token, 'base64url').toString('utf8').split(':')[0] ?? '';
    const recipient = this.lookup(username);
    if (!recipient || (recipient.outcome !== 'ok' && recipient.outcome !== 'premium_active')) return { error: 'No Telegram users found.' };
    if (product === 'premium' && recipient.outcome === 'premium_active') return { error: 'This account is already subscribed to Telegram Premium.' };
    if (!this.tonConnected) return { need_ton: true };
    const amount = product === 'stars' ? roundQuote(this.starNanotons * BigInt(quantity)) : (this.premiumNanotons[quantity as 3 | 6 | 12] ?? 0n);
    if (amount === 0n) return { error: 'Invalid period' };
    const ref = randomText(9);
    const comment = `${product === 'stars' ? `${quantity} Telegram Stars` : premiumTitle(quantity)} \n\nRef#${ref}`;
    const invoice: FakeInvoice = {
      reqId: randomBytes(18).toString('base64url'),
      ref,
      product,
      quantity,
      username,
      amount,
      validUntil: Math.floor(Date.now() / 1000) + this.invoiceTtlSeconds,
      payload: commentPayload(comment),
      comment,
      links: 0,
      confirmed: false,
    };
    this.invoices.set(invoice.reqId, invoice);
    return {
      req_id: invoice.reqId,
      myself: false,
      to_bot: false,
      amount: formatTon(amount),
      item_title: product === 'stars' ? `${quantity} Telegram Stars` : premiumTitle(quantity),
      content: '<div class="tm-content"></div>',
      button: '<button>Buy</button>',
    };
  }

  private link(f: Record<string, string>): Record<string, unknown> {
    const invoice = this.invoices.get(f.id ?? '');
    if (!invoice) return { ok: false, error: 'Unknown error' };
    if (Date.now() / 1000 >= invoice.validUntil) return { ok: false, error: 'expired' };
    if (f.transaction !== '1')
      return { ok: true, link: 'ton://transfer', qr_link: 'https://fragment.com/qr', check_method: 'checkReq', check_params: { id: invoice.reqId }, expire_after: 600 };
    let account: { address?: unknown; publicKey?: unknown };
    try {
      account = JSON.parse(f.account ?? '');
      JSON.parse(f.device ?? '');
    } catch {
      return { error: 'Invalid wallet' };
    }
    if (typeof account.address !== 'string' || !/^0:[0-9a-f]{64}$/.test(account.address) || typeof account.publicKey !== 'string') {
      return { error: 'Invalid wallet' };
    }
    if (!this.kyc) return { ok: true, need_verify: true };
    invoice.links++;
    return {
      ok: true,
      transaction: {
        validUntil: invoice.validUntil,
        from: account.address,
        messages: [{ address: FRAGMENT_ADDRESS, amount: invoice.amount.toString(), payload: invoice.payload }],
      },
      confirm_method: 'confirmReq',
      confirm_params: { id: invoice.reqId },
    };
  }

  private pageHtml(path: string, loggedIn: boolean): string {
    const premium =
      path === '/premium/gift'
        ? ([3, 6, 12] as const)
            .map(
              (m) =>
                `<label class="tm-form-radio-item"><input type="radio" name="months" value="${m}"><div class="tm-radio-label">${m === 12 ? '1 year' : `${m} months`}</div>` +
                `${priceHtml(this.premiumNanotons[m], '0')}</label>`,
            )
            .join('\n')
        : '';
    return `<!DOCTYPE html><html><head><title>Fragment</title></head><body>
<header>${loggedIn ? '<a href="/my/assets">My assets</a> <a href="/logout?hash=x">Log out</a>' : '<button class="login-link">Connect TON</button>'}</header>
<main>${premium}</main>
<script>ajInit({"version":1,"apiUrl":"/api?hash=${this.hash}","state":{"tonRate":3.02}});</script>
</body></html>`;
  }
}

function priceHtml(nanotons: bigint, usd: string): string {
  const [whole, fraction] = formatTon(nanotons).split('.');
  return `<div class="tm-value icon-before icon-ton">${Number(whole).toLocaleString('en-US')}${fraction ? `<span class="mini-frac">.${fraction}</span>` : ''}</div><div class="tm-radio-desc wide-only">&#036;${usd}</div>`;
}

function json(res: http.ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}
