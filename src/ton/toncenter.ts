/**
 * A small client for the toncenter HTTP API v2 (docs/upstreams.md "toncenter v2"), fetch-based: the REST
 * form (`GET {base}/getTransactions?…`, `POST {base}/sendBoc`), the key in the `X-API-Key`
 * header (never in the URL, so it cannot end up in a logged URL), a timeout per request, and
 * typed errors so that callers can tell a retryable failure (429, 5xx, timeout, network) from
 * a definitive one. `withRetry` is the retry/backoff policy the watcher and wallet share.
 */

/** One transaction as toncenter v2 lists it (only the fields we read; `data` is the whole BOC). */
export interface V2Transaction {
  '@type'?: string;
  utime: number;
  data: string;
  transaction_id: { lt: string; hash: string };
  fee?: string;
  in_msg?: V2Message;
  out_msgs?: V2Message[];
}

interface V2Message {
  source: string;
  destination: string;
  value: string;
  msg_data?: { '@type': string; text?: string; body?: string };
  message?: string;
}

export interface ToncenterOptions {
  /** Base URL ending in /api/v2 (no trailing slash needed). */
  baseUrl: string;
  apiKey?: string;
  /** Per request, ms (default 10 s). */
  timeoutMs?: number;
}

/** Any failure talking to toncenter; `retryable` says whether trying again may help. */
export class ToncenterError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** HTTP 429: over the key's rate. `retryAfterMs` from Retry-After when the server sent it. */
export class ToncenterRateLimitError extends ToncenterError {
  constructor(readonly retryAfterMs: number | undefined) {
    super('toncenter rate limit (HTTP 429)', true, 429);
  }
}

export class ToncenterTimeoutError extends ToncenterError {
  constructor(ms: number) {
    super(`toncenter did not answer within ${ms} ms`, true);
  }
}

/** `{ok: false}` with a 2xx/4xx, or a body that is not the expected JSON. */
export class ToncenterApiError extends ToncenterError {}

/** toncenter refuses limit > 100 (HTTP 422); with lt+hash the start row repeats, so ask ≤ 99 new ones. */
export const MAX_PAGE = 100;

export class ToncenterClient {
  private readonly baseUrl: string;
  private readonly timeoutMs: number;

  constructor(private readonly options: ToncenterOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.timeoutMs = options.timeoutMs ?? 10_000;
  }

  /**
   * Newest first. `lt` + `hash` (base64) = start at that transaction, inclusive; `toLt` = stop
   * bound. The caller dedupes (to_lt's inclusiveness is not documented).
   */
  async getTransactions(address: string, page: { limit: number; lt?: string; hash?: string; toLt?: string; archival?: boolean }): Promise<V2Transaction[]> {
    if (page.limit < 1 || page.limit > MAX_PAGE) throw new RangeError(`limit must be 1–${MAX_PAGE}`);
    const query = new URLSearchParams({ address, limit: String(page.limit) });
    if (page.lt !== undefined && page.hash !== undefined) {
      query.set('lt', page.lt);
      query.set('hash', page.hash);
    }
    if (page.toLt !== undefined) query.set('to_lt', page.toLt);
    if (page.archival) query.set('archival', 'true');
    const result = await this.request('GET', `getTransactions?${query}`);
    if (!Array.isArray(result)) throw new ToncenterApiError('getTransactions: result is not an array', false);
    return result as V2Transaction[];
  }

  /** Broadcasts an external message (base64 BOC). */
  async sendBoc(boc: string): Promise<void> {
    await this.request('POST', 'sendBoc', { boc });
  }

  /** Broadcasts and returns the message hash (`hash`, and `hash_norm` on newer servers). */
  async sendBocReturnHash(boc: string): Promise<{ hash: string; hash_norm?: string }> {
    return (await this.request('POST', 'sendBocReturnHash', { boc })) as { hash: string; hash_norm?: string };
  }

  async getAddressBalance(address: string): Promise<bigint> {
    const result = await this.request('GET', `getAddressBalance?${new URLSearchParams({ address })}`);
    return BigInt(String(result));
  }

  async getAddressInformation(address: string): Promise<{ balance: string; state: string; last_transaction_id: { lt: string; hash: string } }> {
    return (await this.request('GET', `getAddressInformation?${new URLSearchParams({ address })}`)) as never;
  }

  /** A get-method with no arguments (e.g. `seqno`); the raw v2 result (`stack`, `exit_code`). */
  async runGetMethod(address: string, method: string, stack: unknown[] = []): Promise<{ exit_code: number; stack: [string, unknown][] }> {
    return (await this.request('POST', 'runGetMethod', { address, method, stack })) as never;
  }

  private async request(method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.options.apiKey) headers['x-api-key'] = this.options.apiKey;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}/${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) throw new ToncenterTimeoutError(this.timeoutMs);
      throw new ToncenterError(`toncenter unreachable: ${error instanceof Error ? error.message : String(error)}`, true);
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) throw new ToncenterTimeoutError(this.timeoutMs);
      throw new ToncenterError('toncenter connection broke while reading the answer', true);
    }
    if (response.status === 429) throw new ToncenterRateLimitError(retryAfterMs(response.headers.get('retry-after')));
    let json: { ok?: unknown; result?: unknown; error?: unknown; code?: unknown } | undefined;
    try {
      json = JSON.parse(text) as typeof json;
    } catch {
      json = undefined;
    }
    // toncenter puts the reason in `error` (a string), also on a 500 (e.g. "LITE_SERVER_UNKNOWN:
    // … lt not in db": history the liteserver does not keep), which the logs should show.
    // Never echo the request (it may carry a BOC).
    const reason = json && typeof json === 'object' && typeof json.error === 'string' ? json.error.slice(0, 200) : undefined;
    if (response.status >= 500) throw new ToncenterError(`toncenter HTTP ${response.status}${reason ? `: ${reason}` : ''}`, true, response.status);
    if (!json || typeof json !== 'object') throw new ToncenterApiError(`toncenter HTTP ${response.status}: not JSON`, false, response.status);
    if (json.ok !== true || response.status >= 400) {
      throw new ToncenterApiError(`toncenter refused (HTTP ${response.status}): ${reason ?? 'ok:false'}`, false, response.status);
    }
    return json.result;
  }
}

function retryAfterMs(header: string | null): number | undefined {
  if (header === null || !/^\d+$/.test(header.trim())) return undefined;
  return Number(header.trim()) * 1000;
}

export interface RetryPolicy {
  /** Total tries, first included (default 4). */
  attempts?: number;
  /** First backoff, doubled per retry with ±25 % jitter, capped at maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Lets a stopping caller abandon the wait. */
  signal?: AbortSignal;
  onRetry?: (error: ToncenterError, attempt: number, delayMs: number) => void;
}

/** Runs `work`, retrying retryable toncenter errors with exponential backoff (Retry-After wins when longer). */
export async function withRetry<T>(work: () => Promise<T>, policy: RetryPolicy = {}): Promise<T> {
  const attempts = policy.attempts ?? 4;
  const base = policy.baseDelayMs ?? 500;
  const max = policy.maxDelayMs ?? 30_000;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof ToncenterError) || !error.retryable || attempt >= attempts || policy.signal?.aborted) throw error;
      const backoff = Math.min(max, base * 2 ** (attempt - 1)) * (0.75 + Math.random() * 0.5);
      const delay = Math.min(max, Math.max(backoff, error instanceof ToncenterRateLimitError ? (error.retryAfterMs ?? 0) : 0));
      policy.onRetry?.(error, attempt, delay);
      await sleep(delay, policy.signal);
      // Stopped while waiting: give up with the last error rather than ask once more.
      if (policy.signal?.aborted) throw error;
    }
  }
}

/** Resolves after `ms`, or early when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
