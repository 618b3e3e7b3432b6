import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { Mode } from '../domain/api-key.js';
import { type DestinationPolicy, ipLiteral, isLocalhostName, parseWebhookUrl, refusalFor } from './address-policy.js';

/**
 * One webhook POST, with the outbound safety rules: the URL is re-checked, the name resolved
 * and every address it resolves to vetted (private, loopback, link-local… are refused), and
 * the connection made to the vetted address only (a `lookup` that returns it: DNS rebinding
 * between the check and the connect cannot redirect the request). No redirects are followed
 * (node:http never follows them; a 3xx is a failure). The whole attempt, resolution included,
 * has one deadline, and at most RESPONSE_READ_LIMIT bytes of the answer are read.
 */

export const RESPONSE_READ_LIMIT = 4096;
export const SNIPPET_CHARS = 256;

/** The addresses a name resolves to. `signal`: the caller no longer waits (see limitLookups). */
export type Resolver = (hostname: string, signal?: AbortSignal) => Promise<{ address: string; family: number }[]>;

/**
 * Most system lookups of webhook names in flight at once. getaddrinfo holds a libuv thread until
 * the DNS server answers or the system resolver gives up, however soon the caller stops waiting,
 * and libuv runs at most 2 lookups at once (half its pool of 4). A client picks webhook names:
 * unbounded, two names whose servers never answer would hold both, and every other lookup of the
 * process (Fragment's and the TON API's hosts) would wait for the resolver's timeouts. One slot
 * leaves the other to them.
 */
export const WEBHOOK_LOOKUP_SLOTS = 1;

/**
 * `lookup` with at most `slots` calls in flight; the others wait their turn in order. A lookup
 * keeps its slot until it ends, even after its caller stopped waiting; a caller whose signal
 * aborts while it waits leaves the queue, and its lookup never starts.
 */
export function limitLookups(lookup: Resolver, slots: number): Resolver {
  let inFlight = 0;
  const waiting: Array<() => void> = [];
  // A slot passes straight to the next waiter, so a caller arriving meanwhile cannot take it too.
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else inFlight--;
  };
  const turn = (signal: AbortSignal | undefined) =>
    new Promise<void>((start, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      if (inFlight < slots) {
        inFlight++;
        return start();
      }
      waiting.push(start);
      signal?.addEventListener(
        'abort',
        () => {
          const at = waiting.indexOf(start);
          if (at >= 0) waiting.splice(at, 1);
          reject(signal.reason);
        },
        { once: true },
      );
    });
  return async (hostname, signal) => {
    await turn(signal);
    try {
      return await lookup(hostname, signal);
    } finally {
      release();
    }
  };
}

export const systemResolver: Resolver = limitLookups((hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true }), WEBHOOK_LOOKUP_SLOTS);

export interface SendInput {
  url: string;
  mode: Mode;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  policy: DestinationPolicy;
  resolve?: Resolver;
}

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  /** Why no 2xx: a short human text, never a secret. */
  error: string | null;
  snippet: string | null;
  durationMs: number;
  /** A 429 or 503 answer's Retry-After, in ms (seconds form only), when it sent one. */
  retryAfterMs?: number;
}

class Refused extends Error {}

/** Resolves and vets the destination; throws Refused with the reason. */
export async function vetDestination(
  url: URL,
  mode: Mode,
  policy: DestinationPolicy,
  resolve: Resolver = systemResolver,
  signal?: AbortSignal,
): Promise<{ address: string; family: number }> {
  const literal = ipLiteral(url);
  let candidates: { address: string; family: number }[];
  if (literal) candidates = [{ address: literal, family: net.isIPv6(literal) ? 6 : 4 }];
  else if (isLocalhostName(url.hostname)) candidates = [{ address: '127.0.0.1', family: 4 }];
  else {
    try {
      candidates = await resolve(url.hostname, signal);
    } catch {
      throw new Refused(`${url.hostname} does not resolve`);
    }
  }
  if (candidates.length === 0) throw new Refused(`${url.hostname} does not resolve`);
  // Every address must pass: a name that also points inside could be steered there.
  for (const candidate of candidates) {
    const refusal = refusalFor(candidate.address, mode, policy);
    if (refusal) throw new Refused(refusal);
  }
  return candidates[0] as { address: string; family: number };
}

export { Refused as DestinationRefused };

export async function sendWebhook(input: SendInput): Promise<SendResult> {
  const started = performance.now();
  const finish = (partial: Omit<SendResult, 'durationMs'>): SendResult => ({ ...partial, durationMs: Math.round(performance.now() - started) });
  const parsed = parseWebhookUrl(input.url, input.mode);
  if ('error' in parsed) return finish({ ok: false, statusCode: null, error: parsed.error, snippet: null });

  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), input.timeoutMs);
  try {
    const destination = await Promise.race([
      vetDestination(parsed.url, input.mode, input.policy, input.resolve, controller.signal),
      new Promise<never>((_, reject) => controller.signal.addEventListener('abort', () => reject(new Error('timeout')))),
    ]);
    const { statusCode, snippet, retryAfter } = await post(parsed.url, destination, input, controller.signal);
    const ok = statusCode >= 200 && statusCode < 300;
    const retryAfterMs = (statusCode === 429 || statusCode === 503) && retryAfter && /^\d{1,6}$/.test(retryAfter) ? Number(retryAfter) * 1000 : undefined;
    return finish({ ok, statusCode, error: ok ? null : `HTTP ${statusCode}`, snippet, ...(retryAfterMs !== undefined && { retryAfterMs }) });
  } catch (error) {
    if (error instanceof Refused) return finish({ ok: false, statusCode: null, error: `refused: ${error.message}`, snippet: null });
    if (controller.signal.aborted) return finish({ ok: false, statusCode: null, error: `timed out after ${input.timeoutMs} ms`, snippet: null });
    const code = (error as NodeJS.ErrnoException).code;
    return finish({ ok: false, statusCode: null, error: code ? `connection failed (${code})` : 'connection failed', snippet: null });
  } finally {
    clearTimeout(timer);
  }
}

function post(
  url: URL,
  destination: { address: string; family: number },
  input: SendInput,
  signal: AbortSignal,
): Promise<{ statusCode: number; snippet: string; retryAfter: string | undefined }> {
  const client = url.protocol === 'https:' ? https : http;
  const pinned: net.LookupFunction = (_hostname, options, callback) => {
    const cb = callback as (...args: unknown[]) => void;
    if ((options as dns.LookupOptions).all) cb(null, [destination]);
    else cb(null, destination.address, destination.family);
  };
  return new Promise((resolve, reject) => {
    const request = client.request(
      {
        method: 'POST',
        protocol: url.protocol,
        hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
        port: url.port || undefined,
        path: `${url.pathname}${url.search}`,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(input.body),
          'user-agent': 'Starport-Webhooks/1',
          ...input.headers,
        },
        lookup: pinned,
        agent: false,
        signal,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          const text = Buffer.concat(chunks).subarray(0, RESPONSE_READ_LIMIT).toString('utf8');
          const retryAfter = response.headers['retry-after'];
          resolve({ statusCode: response.statusCode ?? 0, snippet: [...text].slice(0, SNIPPET_CHARS).join(''), retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter });
        };
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          // Enough read: stop downloading whatever else the receiver sends.
          if (size >= RESPONSE_READ_LIMIT) {
            response.destroy();
            done();
          }
        });
        response.on('end', done);
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(input.body);
  });
}

/** How long creating an endpoint waits for its name to resolve. */
const RESOLVE_AT_CREATION_MS = 5_000;

/**
 * The creation-time check of a webhook URL (the send-time check repeats it): its form, and
 * the addresses it resolves to now. Returns the URL as given or the reason it is refused.
 */
export async function checkWebhookUrl(raw: unknown, mode: Mode, policy: DestinationPolicy, resolve: Resolver = systemResolver): Promise<{ url: string } | { error: string }> {
  const parsed = parseWebhookUrl(raw, mode);
  if ('error' in parsed) return parsed;
  const gaveUp = new AbortController();
  const timer = setTimeout(() => gaveUp.abort(new Refused(`${parsed.url.hostname} did not resolve in time`)), RESOLVE_AT_CREATION_MS).unref();
  try {
    await Promise.race([
      vetDestination(parsed.url, mode, policy, resolve, gaveUp.signal),
      new Promise<never>((_, reject) => gaveUp.signal.addEventListener('abort', () => reject(gaveUp.signal.reason), { once: true })),
    ]);
  } catch (error) {
    if (error instanceof Refused) return { error: `url cannot be used: ${error.message}.` };
    throw error;
  } finally {
    clearTimeout(timer);
  }
  return { url: raw as string };
}
