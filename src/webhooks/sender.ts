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

const RESPONSE_READ_LIMIT = 4096;
const SNIPPET_CHARS = 256;

/** The addresses a name resolves to. `signal`: the caller no longer waits. */
export type Resolver = (hostname: string, signal?: AbortSignal) => Promise<{ address: string; family: number }[]>;

/** How long one lookup of a webhook name may take, whoever waits for it. */
const LOOKUP_TIMEOUT_MS = 5_000;

/**
 * Webhook names are resolved with DNS queries (c-ares, dns.Resolver), not the system's
 * getaddrinfo: a getaddrinfo call holds one of libuv's few threads until the system resolver
 * gives up, however soon its caller stops waiting, and libuv runs at most two at once, so a
 * client's names whose servers never answer would hold up every other lookup of the process.
 * A DNS query holds no thread: any number run at once, each ends at its own deadline, and none
 * waits for another. One resolver per server list (the system's, from /etc/resolv.conf, or
 * WEBHOOK_DNS_SERVERS); it tries a silent server three times, the first wait 1.5 s at most
 * (c-ares shortens it for a server that usually answers fast). See docs/architecture.md.
 * /etc/hosts is not read: `localhost` names are loopback by definition (isLocalhostName), and
 * every other webhook host must be in DNS.
 */
const resolvers = new Map<string, dns.promises.Resolver>();

function resolverFor(servers: readonly string[] | undefined): dns.promises.Resolver {
  const key = servers?.join(',') ?? '';
  let resolver = resolvers.get(key);
  if (!resolver) {
    resolver = new dns.promises.Resolver({ timeout: 1_500, tries: 3 });
    if (servers && servers.length > 0) resolver.setServers([...servers]);
    resolvers.set(key, resolver);
  }
  return resolver;
}

/**
 * The A and AAAA records of `hostname` (IPv4 first), asked at once; a name with either is
 * resolved. Fails when neither answers within LOOKUP_TIMEOUT_MS, or when `signal` aborts.
 */
export function dnsResolver(servers?: readonly string[]): Resolver {
  return async (hostname, signal) => {
    const resolver = resolverFor(servers);
    const deadline = AbortSignal.timeout(LOOKUP_TIMEOUT_MS);
    const stop = signal ? AbortSignal.any([signal, deadline]) : deadline;
    const stopped = new Promise<never>((_, reject) => {
      if (stop.aborted) reject(stop.reason);
      stop.addEventListener('abort', () => reject(stop.reason), { once: true });
    });
    // A query whose caller stopped waiting ends by itself (its retries are bounded): it holds a
    // little memory, never a thread.
    const [v4, v6] = await Promise.race([Promise.allSettled([resolver.resolve4(hostname), resolver.resolve6(hostname)]), stopped]);
    const addresses = [
      ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
    ];
    if (addresses.length === 0) throw v4.status === 'rejected' ? v4.reason : new Error(`${hostname} has no addresses`);
    return addresses;
  };
}

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
  resolve: Resolver = dnsResolver(policy.dnsServers),
  signal?: AbortSignal,
): Promise<{ address: string; family: number }> {
  const literal = ipLiteral(url);
  let candidates: { address: string; family: number }[];
  if (literal) candidates = [{ address: literal, family: net.isIPv6(literal) ? 6 : 4 }];
  else if (isLocalhostName(url.hostname)) candidates = [{ address: '127.0.0.1', family: 4 }];
  else {
    try {
      candidates = await resolve(url.hostname, signal);
    } catch (error) {
      if (error instanceof Refused) throw error;
      const late = (error as Error | undefined)?.name === 'TimeoutError' || (error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEOUT';
      throw new Refused(`${url.hostname} ${late ? 'did not resolve in time' : 'does not resolve'}`);
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
          resolve({
            statusCode: response.statusCode ?? 0,
            snippet: [...text].slice(0, SNIPPET_CHARS).join(''),
            retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter,
          });
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

/** How long creating an endpoint waits for its name to resolve (a lookup's own deadline). */
const RESOLVE_AT_CREATION_MS = LOOKUP_TIMEOUT_MS;

/**
 * The creation-time check of a webhook URL (the send-time check repeats it): its form, and
 * the addresses it resolves to now. Returns the URL as given or the reason it is refused.
 */
export async function checkWebhookUrl(raw: unknown, mode: Mode, policy: DestinationPolicy, resolve?: Resolver): Promise<{ url: string } | { error: string }> {
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
