import {
  ConnectionError,
  errorFromResponse,
  IdempotencyKeyInUseError,
  RateLimitError,
  RequestTimeoutError,
  ServerError,
  StarportError,
  TimeoutError,
  WaitTimeoutError,
} from './errors.js';
import type {
  Balance,
  DepositAddress,
  DepositList,
  ListDepositsParams,
  BalanceEntry,
  BalanceHistory,
  CreateOrderParams,
  FundTestBalanceParams,
  List,
  ListOrdersParams,
  OrderList,
  PageParams,
  TestFunding,
  Mode,
  Order,
  OrderWithEvents,
  Prices,
  Quote,
  QuoteParams,
  RecipientValidation,
  ResponseInfo,
  Statement,
  ValidateRecipientParams,
  CreateWebhookEndpointParams,
  WebhookEndpointDeleted,
  WebhookEndpointList,
  WebhookEndpointWithSecret,
  WithResponse,
} from './types.js';
import { VERSION } from './version.js';

export interface StarportOptions {
  /** `sk_live_…` or `sk_test_…`. Keep it on your server. */
  apiKey: string;
  /**
   * The API's base URL, ending in `/api/v1` (e.g. `https://starport.example.com/api/v1`). An
   * origin without a path gets `/api/v1` appended.
   */
  baseUrl: string;
  /** Retries after the first attempt, for network errors, 429 and 5xx. Default 2. */
  maxRetries?: number;
  /** Milliseconds one attempt may take before it is abandoned (and retried). Default 30 000. */
  timeout?: number;
  /** First backoff delay in ms; it doubles per retry (with jitter), up to `maxRetryDelay`. Default 500. */
  initialRetryDelay?: number;
  /** Longest backoff delay in ms. Default 8 000. */
  maxRetryDelay?: number;
  /** A Retry-After longer than this (ms) is not waited for: the RateLimitError is thrown. Default 60 000. */
  maxRetryAfter?: number;
  /** A fetch implementation; default the global fetch. */
  fetch?: typeof fetch;
}

export interface RequestOptions {
  /** Abort the call (and its retries). */
  signal?: AbortSignal;
  /** Overrides the client's per-attempt timeout. */
  timeout?: number;
  /** Overrides the client's maxRetries. */
  maxRetries?: number;
}

export interface CreateOrderOptions extends RequestOptions {
  /**
   * The Idempotency-Key. Default: a random UUID, generated once and reused by the SDK's own
   * retries. To survive a crash of your process between sending and receiving, derive it from
   * your own order (e.g. your order id) and pass it.
   */
  idempotencyKey?: string;
}

export interface WaitForOrderOptions {
  /** Give up (WaitTimeoutError) after this many ms. Default 300 000 (5 minutes). */
  timeout?: number;
  /**
   * Poll every this many ms. Default 5 000 with a live key, 500 with a test key. Live keys never
   * poll faster than every 5 s (the API's guidance is 5–15 s); test keys not faster than 100 ms.
   */
  interval?: number;
  signal?: AbortSignal;
  /** Called with each state seen. */
  onPoll?: (order: OrderWithEvents) => void;
}

export interface LowLevelRequest extends RequestOptions {
  method: 'GET' | 'POST' | 'DELETE';
  /** Below the base URL, e.g. `/orders`. */
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  idempotencyKey?: string;
  /**
   * The call has no side effects, so it may be retried even as a POST without an
   * Idempotency-Key (POST /recipients/validate). GETs are always retried; other POSTs only
   * with an Idempotency-Key.
   */
  safe?: boolean;
}

interface RawResponse {
  status: number;
  ok: boolean;
  headers: Headers;
  text: string;
}

const FINAL = new Set(['delivered', 'failed']);
const LIVE_MIN_INTERVAL = 5_000;
const TEST_MIN_INTERVAL = 100;

/**
 * A client for the Starport API.
 *
 * ```ts
 * const starport = new Starport({ apiKey: process.env.STARPORT_API_KEY!, baseUrl: 'https://…/api/v1' });
 * const order = await starport.createOrder({ product: 'stars', recipient: '@durov', quantity: 50 });
 * const final = await starport.waitForOrder(order.id);
 * ```
 */
export class Starport {
  readonly baseUrl: string;
  /** From the key's prefix. */
  readonly mode: Mode;
  private readonly apiKey: string;
  private readonly maxRetries: number;
  private readonly timeout: number;
  private readonly initialRetryDelay: number;
  private readonly maxRetryDelay: number;
  private readonly maxRetryAfter: number;
  private readonly fetchImpl: typeof fetch;

  constructor(options: StarportOptions) {
    if (!options?.apiKey) throw new TypeError('Starport: apiKey is required (sk_live_… or sk_test_…).');
    if (!options.baseUrl) throw new TypeError('Starport: baseUrl is required, e.g. "https://starport.example.com/api/v1".');
    this.apiKey = options.apiKey;
    this.mode = options.apiKey.startsWith('sk_test_') ? 'test' : 'live';
    this.baseUrl = normalizeBaseUrl(options.baseUrl);
    this.maxRetries = options.maxRetries ?? 2;
    this.timeout = options.timeout ?? 30_000;
    this.initialRetryDelay = options.initialRetryDelay ?? 500;
    this.maxRetryDelay = options.maxRetryDelay ?? 8_000;
    this.maxRetryAfter = options.maxRetryAfter ?? 60_000;
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function') throw new TypeError('Starport: no fetch available; pass options.fetch.');
    this.fetchImpl = fetchImpl;
  }

  /**
   * POST /orders: reserves the price and queues the order (status `fulfillment_pending`).
   * Safe to retry: every attempt carries the same Idempotency-Key, so at most one order is
   * created. `order.lastResponse.replayed` is true when the service returned an order an
   * earlier request with this key created.
   */
  createOrder(params: CreateOrderParams, options: CreateOrderOptions = {}): Promise<WithResponse<Order>> {
    const idempotencyKey = options.idempotencyKey ?? randomUUID();
    return this.request<Order>({ ...options, method: 'POST', path: '/orders', body: params, idempotencyKey });
  }

  /** GET /orders/{id}: the order with its events. */
  getOrder(id: string, options: RequestOptions = {}): Promise<WithResponse<OrderWithEvents>> {
    return this.request<OrderWithEvents>({ ...options, method: 'GET', path: `/orders/${encodeURIComponent(id)}` });
  }

  /** POST /recipients/validate: resolves when the recipient can receive the product, else throws RecipientInvalidError. */
  validateRecipient(params: ValidateRecipientParams, options: RequestOptions = {}): Promise<WithResponse<RecipientValidation>> {
    return this.request<RecipientValidation>({ ...options, method: 'POST', path: '/recipients/validate', body: params, safe: true });
  }

  /** GET /quote: what the order would cost now. */
  getQuote(params: QuoteParams, options: RequestOptions = {}): Promise<WithResponse<Quote>> {
    return this.request<Quote>({ ...options, method: 'GET', path: '/quote', query: { product: params.product, quantity: params.quantity } });
  }

  /** GET /prices: this account's prices in the key's mode, its volume tier and what the next tier needs. */
  getPrices(options: RequestOptions = {}): Promise<WithResponse<Prices>> {
    return this.request<Prices>({ ...options, method: 'GET', path: '/prices' });
  }

  /** GET /balance: the balance of the key's mode. */
  getBalance(options: RequestOptions = {}): Promise<WithResponse<Balance>> {
    return this.request<Balance>({ ...options, method: 'GET', path: '/balance' });
  }

  /** GET /deposits (live keys only): TON transfers credited to the live balance, newest first, one page. */
  listDeposits(params: ListDepositsParams = {}, options: RequestOptions = {}): Promise<WithResponse<DepositList>> {
    return this.request<DepositList>({ ...options, method: 'GET', path: '/deposits', query: { limit: params.limit, starting_after: params.starting_after } });
  }

  /** GET /deposit_address (live keys only): the service's deposit wallet and this account's memo. */
  getDepositAddress(options: RequestOptions = {}): Promise<WithResponse<DepositAddress>> {
    return this.request<DepositAddress>({ ...options, method: 'GET', path: '/deposit_address' });
  }

  /**
   * POST /webhook_endpoints: order events of the key's mode are POSTed to `params.url`. The
   * answer's `secret` is shown only here: store it for verifyWebhook. Not retried (no
   * Idempotency-Key): on a network error, list the endpoints before creating again.
   */
  createWebhookEndpoint(params: CreateWebhookEndpointParams, options: RequestOptions = {}): Promise<WithResponse<WebhookEndpointWithSecret>> {
    return this.request<WebhookEndpointWithSecret>({ ...options, method: 'POST', path: '/webhook_endpoints', body: params });
  }

  /** GET /webhook_endpoints: the endpoints of the key's mode (without secrets). */
  listWebhookEndpoints(options: RequestOptions = {}): Promise<WithResponse<WebhookEndpointList>> {
    return this.request<WebhookEndpointList>({ ...options, method: 'GET', path: '/webhook_endpoints' });
  }

  /** DELETE /webhook_endpoints/{id}: stops deliveries and deletes the endpoint's log. */
  deleteWebhookEndpoint(id: string, options: RequestOptions = {}): Promise<WithResponse<WebhookEndpointDeleted>> {
    return this.request<WebhookEndpointDeleted>({ ...options, method: 'DELETE', path: `/webhook_endpoints/${encodeURIComponent(id)}` });
  }

  /**
   * POST /webhook_endpoints/{id}/rotate_secret: a new secret (in the answer only). The old one
   * keeps signing alongside it for 24 hours, so verify with either while you switch.
   */
  rotateWebhookEndpointSecret(id: string, options: RequestOptions = {}): Promise<WithResponse<WebhookEndpointWithSecret>> {
    return this.request<WebhookEndpointWithSecret>({ ...options, method: 'POST', path: `/webhook_endpoints/${encodeURIComponent(id)}/rotate_secret`, body: {} });
  }

  /** GET /orders: one page of orders of the key's mode, newest first, with filters. */
  listOrders(params: ListOrdersParams = {}, options: RequestOptions = {}): Promise<WithResponse<OrderList>> {
    const { created, ...rest } = params;
    const query = { ...pageQuery(rest), status: rest.status, external_id: rest.external_id, 'created[gte]': timeParam(created?.gte), 'created[lt]': timeParam(created?.lt) };
    return this.request<OrderList>({ ...options, method: 'GET', path: '/orders', query });
  }

  /**
   * Every order matching `params`, newest first, fetching pages as you iterate
   * (`for await (const order of starport.listAllOrders({ status: 'failed' }))`). Orders created
   * while you iterate are not included; none is skipped or repeated.
   */
  listAllOrders(params: Omit<ListOrdersParams, 'ending_before'> = {}, options: RequestOptions = {}): AsyncGenerator<Order> {
    return this.paginate<Order>((after) => this.listOrders({ ...params, ...(after !== undefined && { starting_after: after }) }, options), params.starting_after);
  }

  /** GET /balance/history: one page of the balance history of the key's mode, newest first. */
  listBalanceHistory(params: PageParams = {}, options: RequestOptions = {}): Promise<WithResponse<BalanceHistory>> {
    return this.request<BalanceHistory>({ ...options, method: 'GET', path: '/balance/history', query: pageQuery(params) });
  }

  /** Every balance history entry, newest first, fetching pages as you iterate. */
  balanceHistory(params: Omit<PageParams, 'ending_before'> = {}, options: RequestOptions = {}): AsyncGenerator<BalanceEntry> {
    return this.paginate<BalanceEntry>((after) => this.listBalanceHistory({ ...params, ...(after !== undefined && { starting_after: after }) }, options), params.starting_after);
  }

  /**
   * GET /statements/{month}: the statement of the key's balance for a calendar month in UTC,
   * `month` written `YYYY-MM` (e.g. `2026-10`). A month not begun or before the account was
   * created rejects with a NotFoundError (`statement_not_found`, `details.reason`).
   */
  getStatement(month: string, options: RequestOptions = {}): Promise<WithResponse<Statement>> {
    return this.request<Statement>({ ...options, method: 'GET', path: `/statements/${encodeURIComponent(month)}` });
  }

  /**
   * POST /test_helpers/fund (test keys only): credits the test balance. Not idempotent, so
   * never retried automatically. A live key gets a PermissionError (`test_key_required`).
   */
  fundTestBalance(params: FundTestBalanceParams, options: RequestOptions = {}): Promise<WithResponse<TestFunding>> {
    return this.request<TestFunding>({ ...options, method: 'POST', path: '/test_helpers/fund', body: params });
  }

  private async *paginate<T extends { id: string }>(page: (after: string | undefined) => Promise<List<T>>, startingAfter: string | undefined): AsyncGenerator<T> {
    let after = startingAfter;
    for (;;) {
      const result = await page(after);
      yield* result.data;
      const last = result.data[result.data.length - 1];
      if (!result.has_more || !last) return;
      after = last.id;
    }
  }

  /**
   * Polls GET /orders/{id} until the order is `delivered` or `failed` and returns it. Transient
   * failures while polling (network, 429, 5xx) are waited out until the timeout.
   */
  async waitForOrder(id: string, options: WaitForOrderOptions = {}): Promise<WithResponse<OrderWithEvents>> {
    const interval = this.pollInterval(options.interval);
    const deadline = Date.now() + (options.timeout ?? 300_000);
    let last: OrderWithEvents | undefined;
    for (;;) {
      try {
        const order = await this.getOrder(id, { ...(options.signal && { signal: options.signal }) });
        last = order;
        options.onPoll?.(order);
        if (FINAL.has(order.status)) return order;
      } catch (error) {
        if (!isTransient(error)) throw error;
      }
      if (Date.now() + interval > deadline) {
        throw new WaitTimeoutError(`Order ${id} was not delivered or failed within ${options.timeout ?? 300_000} ms${last ? ` (last status: ${last.status})` : ''}.`, last);
      }
      await sleep(interval, options.signal);
    }
  }

  /** The polling interval waitForOrder uses for a requested one. */
  pollInterval(requested?: number): number {
    if (this.mode === 'live') return Math.max(LIVE_MIN_INTERVAL, requested ?? LIVE_MIN_INTERVAL);
    return Math.max(TEST_MIN_INTERVAL, requested ?? 500);
  }

  /**
   * One API call with the SDK's retry policy: network errors, 429 (after Retry-After), 5xx and
   * 409 idempotency_key_in_use are retried with exponential backoff and jitter — for GETs, for
   * requests with an Idempotency-Key (the same key every attempt), and for `safe` calls; never
   * for any other POST.
   */
  async request<T>(req: LowLevelRequest): Promise<WithResponse<T>> {
    const url = new URL(`${this.baseUrl}${req.path}`);
    for (const [name, value] of Object.entries(req.query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.apiKey}`,
      Accept: 'application/json',
      'User-Agent': `starport-sdk-js/${VERSION}`,
    };
    if (req.body !== undefined) headers['Content-Type'] = 'application/json';
    if (req.idempotencyKey !== undefined) headers['Idempotency-Key'] = req.idempotencyKey;
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const retryable = req.method === 'GET' || req.idempotencyKey !== undefined || req.safe === true;
    const maxRetries = retryable ? (req.maxRetries ?? this.maxRetries) : 0;
    const timeout = req.timeout ?? this.timeout;

    for (let attempt = 0; ; attempt++) {
      let response: RawResponse;
      try {
        response = await this.fetchOnce(url, { method: req.method, headers, ...(body !== undefined && { body }) }, timeout, req.signal);
      } catch (error) {
        if (req.signal?.aborted) throw error;
        if (attempt < maxRetries) {
          await sleep(this.backoff(attempt), req.signal);
          continue;
        }
        throw error;
      }
      const { text } = response;
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      if (response.ok) {
        if (typeof parsed !== 'object' || parsed === null) {
          throw new StarportError({
            code: 'invalid_response',
            message: `Expected a JSON object from ${req.method} ${req.path}, got: ${text.slice(0, 200)}`,
            status: response.status,
            requestId: response.headers.get('request-id') ?? undefined,
            headers: response.headers,
          });
        }
        const { ok: _ok, ...result } = parsed as Record<string, unknown>;
        const info: ResponseInfo = {
          status: response.status,
          requestId: response.headers.get('request-id') ?? undefined,
          headers: response.headers,
          idempotencyKey: req.idempotencyKey,
          replayed: response.headers.get('idempotent-replayed') === 'true',
          attempts: attempt + 1,
        };
        Object.defineProperty(result, 'lastResponse', { value: info, enumerable: false });
        return result as WithResponse<T>;
      }
      const error = errorFromResponse(response.status, parsed, response.headers);
      const delay = this.retryDelay(error, attempt);
      if (attempt < maxRetries && delay !== undefined) {
        await sleep(delay, req.signal);
        continue;
      }
      throw error;
    }
  }

  /** How long to wait before retrying after `error`, or undefined not to retry it. */
  private retryDelay(error: StarportError, attempt: number): number | undefined {
    const retryAfter = parseRetryAfter(error.headers?.get('retry-after'));
    if (error instanceof RateLimitError) {
      const wait = retryAfter ?? this.backoff(attempt);
      return wait > this.maxRetryAfter ? undefined : wait;
    }
    if (error instanceof ServerError || error instanceof IdempotencyKeyInUseError || error instanceof RequestTimeoutError) {
      return retryAfter !== undefined && retryAfter <= this.maxRetryAfter ? Math.max(retryAfter, this.backoff(attempt)) : this.backoff(attempt);
    }
    return undefined;
  }

  /** Exponential backoff with jitter: a random delay between half and all of initial × 2^attempt (capped). */
  private backoff(attempt: number): number {
    const ceiling = Math.min(this.maxRetryDelay, this.initialRetryDelay * 2 ** attempt);
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  private async fetchOnce(url: URL, init: RequestInit, timeout: number, signal: AbortSignal | undefined): Promise<RawResponse> {
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeout);
    const onAbort = () => controller.abort(signal?.reason);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await this.fetchImpl(url, { ...init, signal: controller.signal });
      // The body is part of the attempt: read it under the same timeout.
      const text = await response.text();
      return { status: response.status, ok: response.ok, headers: response.headers, text };
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error;
      if (timedOut) throw new TimeoutError({ code: 'timeout', message: `No response from ${init.method} ${url.pathname} within ${timeout} ms.`, cause: error });
      throw new ConnectionError({ code: 'connection_error', message: `Could not reach ${url.origin}: ${(error as Error)?.message ?? error}`, cause: error });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}

function pageQuery(params: PageParams): Record<string, string | number | undefined> {
  return { limit: params.limit, starting_after: params.starting_after, ending_before: params.ending_before };
}

/** A Date or Unix seconds as the API's RFC 3339; strings pass through. */
function timeParam(value: Date | string | number | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'number') return new Date(value * 1000).toISOString();
  return value;
}

function normalizeBaseUrl(raw: string): string {
  const url = new URL(raw);
  let path = url.pathname.replace(/\/+$/, '');
  if (path === '') path = '/api/v1';
  return `${url.origin}${path}`;
}

/** Retry-After in ms: delta-seconds or an HTTP date. */
function parseRetryAfter(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function isTransient(error: unknown): boolean {
  return error instanceof ConnectionError || error instanceof RateLimitError || error instanceof ServerError;
}

function randomUUID(): string {
  const crypto = globalThis.crypto;
  if (!crypto?.randomUUID) throw new StarportError({ code: 'invalid_request', message: 'No crypto.randomUUID here; pass options.idempotencyKey.' });
  return crypto.randomUUID();
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
