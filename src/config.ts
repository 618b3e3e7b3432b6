import { fileURLToPath } from 'node:url';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import type { Brand } from './domain/brand.js';
import { brandConfig } from './brand-config.js';
import type { Decimal } from './domain/decimal.js';
import type { PriceList } from './domain/pricing.js';
import { depositAddressForm, friendlyAddress, rawAddressForm, TonAddressError } from './domain/ton-address.js';
import { MAINNET_USDT_MASTER, parseUsdt } from './domain/usdt.js';
import { type LiveConfig, loadLiveConfig } from './live/config.js';
import { DEFAULT_RETRY_DELAYS_MS } from './webhooks/schedule.js';
import { ConfigError, decimal, type Env, flag, integer, millisecondList, tonAmount } from './env.js';
import { type NotificationConfig, notificationConfig } from './notifications/config.js';

export { ConfigError } from './env.js';

/** Everything the environment can set, validated once at start-up with the embedded defaults. */
export interface Config {
  port: number;
  /** The operator console's listener (OPERATOR_HOST, OPERATOR_PORT); port undefined = off. */
  operator: OperatorListener;
  host: string;
  dataDir: string;
  /** postgres://… selects PostgreSQL; unset = embedded SQLite under dataDir. */
  databaseUrl: string | undefined;
  databasePoolSize: number;
  /**
   * DATABASE_CONNECT_TIMEOUT_S: how long start-up keeps trying to reach the database before it
   * gives up with one line on stderr; undefined = the command's default (CONNECT_TIMEOUT_DEFAULTS_S in src/db/open.ts).
   */
  databaseConnectTimeoutS: number | undefined;
  /** SHUTDOWN_TIMEOUT_S: `serve` exits this long after SIGTERM/SIGINT at the latest, whatever it was waiting for. */
  shutdownTimeoutS: number;
  /**
   * DATABASE_QUERY_TIMEOUT_MS (PostgreSQL, `serve`): a statement's answer within this, else its
   * connection is closed and the request answers 503 (docs/operations.md "When the database
   * goes away"). Above the 10 s an order creation may wait on another node's request with the
   * same Idempotency-Key (docs/api.md).
   */
  databaseQueryTimeoutMs: number;
  /** Origin for status_url; undefined = the address the server actually bound. */
  publicUrl: string | undefined;
  logLevel: string;
  prices: PriceList;
  tonUsdRate: Decimal;
  quoteTtlSeconds: number;
  testFulfilmentDelayMs: number;
  /** How long @test_slow orders take from processing to delivered. */
  testSlowDelayMs: number;
  /** Requests per second per API key; 0 turns the limit (and its headers) off. */
  rateLimitRps: number;
  rateLimitBurst: number;
  /** API nodes sharing the per-key limit: each enforces 1/N of it. */
  rateLimitNodes: number;
  /** How long a worker's claim on an order lasts without a heartbeat (a crashed worker's orders wait this long). */
  workerLeaseMs: number;
  /**
   * TRUST_PROXY: which reverse proxies may set X-Forwarded-For / -Proto / -Host (Fastify's
   * trustProxy): false (default), true (any peer), or the proxies' addresses / CIDR ranges.
   */
  trustProxy: TrustProxy;
  /** Dashboard sign-up (SIGNUP): open to anyone, or closed (accounts come from the operator's CLI). */
  signup: 'open' | 'closed';
  /** SIGNUP_VERIFY: `required` keeps a new account's live key refused (403 email_unverified) until an owner verified an e-mail address. */
  signupVerify: 'optional' | 'required';
  /**
   * The service's TON deposit wallet (DEPOSIT_ADDRESS), in user-friendly non-bounceable form;
   * undefined = live top-ups are not configured yet.
   */
  depositAddress: string | undefined;
  /** Live fulfilment: Fragment, wallet presence, price source and rate feed, breaker (src/live/config.ts). */
  live: LiveConfig;
  /** TON_NETWORK: which chain DEPOSIT_ADDRESS lives on (explorer links, address form, API default). */
  tonNetwork: TonNetwork;
  /** TON_API_URL: a toncenter API v2 base URL (…/api/v2); defaults per network. */
  tonApiUrl: string;
  /** TON_API_KEY: sent as X-API-Key; never logged. */
  tonApiKey: string | undefined;
  /** DEPOSIT_MIN_TON in nanotons: smaller transfers are recorded as unmatched (below_minimum). */
  depositMinNanotons: bigint;
  /** DEPOSIT_POLL_MS: how often the deposit watcher asks toncenter for new transactions. */
  depositPollMs: number;
  /**
   * USDT top-ups (docs/operations.md "USDT top-ups"): the jetton master (USDT_MASTER, bounceable
   * user-friendly form; undefined = off), the spread and the minimum.
   */
  usdt: { master: string | undefined; spreadPercent: Decimal; minUnits: bigint };
  /** Webhooks (WEBHOOK_*): see docs/api.md "Webhooks". */
  webhooks: WebhookConfig;
  /** Time limits and the connection cap of the HTTP server (docs/operations.md "Slow and hostile clients"). */
  http: HttpLimits;
  /** E-mail and Telegram (docs/operations.md "Notifications"). */
  notifications: NotificationConfig;
  /** BRAND_*, SUPPORT_*, TERMS_URL, PRIVACY_URL (docs/operations.md "Branding"). */
  brand: Brand;
}

export interface HttpLimits {
  /** HEADERS_TIMEOUT_MS: a request's line and headers must arrive within this, from its first byte (or the connection). */
  headersTimeoutMs: number;
  /** REQUEST_TIMEOUT_MS: the whole request, headers and body; also how long a connection may make no progress at all. */
  requestTimeoutMs: number;
  /** KEEP_ALIVE_TIMEOUT_MS: an idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** MAX_CONNECTIONS: open connections per process; beyond it a new one is answered 503 and closed. */
  maxConnections: number;
}

export interface WebhookConfig {
  /** WEBHOOK_TIMEOUT_MS: one delivery attempt, resolution to last byte (default 10 s). */
  timeoutMs: number;
  /** WEBHOOK_ALLOW_LOOPBACK=1: test-mode endpoints may target loopback (development, tests). */
  allowLoopback: boolean;
  /** WEBHOOK_RETRY_DELAYS_MS: comma-separated waits after each failed attempt. */
  retryDelaysMs: number[];
  /**
   * WEBHOOK_DISABLE_AFTER_MS: failing this long when a message runs out of attempts disables the
   * endpoint (as does failing through a message's whole retry schedule).
   */
  disableAfterMs: number;
  /** WEBHOOK_ROTATION_GRACE_MS: how long a rotated-out secret still signs (default 24 h). */
  rotationGraceMs: number;
  /** WEBHOOK_DNS_SERVERS: the DNS servers webhook names are resolved with; empty = the system's. */
  dnsServers: string[];
}

type TonNetwork = 'mainnet' | 'testnet';
const TON_API_DEFAULTS: Record<TonNetwork, string> = {
  mainnet: 'https://toncenter.com/api/v2',
  testnet: 'https://testnet.toncenter.com/api/v2',
};

export type TrustProxy = boolean | string[];

/**
 * The package's own folder: `./data` defaults relative to it, not to the caller's cwd. It is the
 * nearest folder holding a package.json above this module, wherever the build put it (src/,
 * dist/ or the bundled CLI in dist/bin/).
 */
export const PACKAGE_ROOT = packageRoot(path.dirname(fileURLToPath(import.meta.url)));

function packageRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(start, '..');
  }
}

function publicUrl(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`PUBLIC_URL must be an absolute http(s) URL, got "${raw}"`);
  }
  if (!['http:', 'https:'].includes(url.protocol) || (url.pathname !== '/' && url.pathname !== '')) {
    throw new ConfigError(`PUBLIC_URL must be an origin such as https://api.example.com, got "${raw}"`);
  }
  return url.origin;
}

function databaseUrl(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  if (!/^postgres(ql)?:\/\//.test(raw)) throw new ConfigError('DATABASE_URL must start with postgres:// (unset it to use the embedded SQLite)');
  return raw;
}

function signup(raw: string | undefined): 'open' | 'closed' {
  if (!raw) return 'open';
  if (raw !== 'open' && raw !== 'closed') throw new ConfigError(`SIGNUP must be open or closed, got "${raw}"`);
  return raw;
}

function signupVerify(raw: string | undefined): 'optional' | 'required' {
  if (!raw) return 'optional';
  if (raw !== 'optional' && raw !== 'required') throw new ConfigError(`SIGNUP_VERIFY must be optional or required, got "${raw}"`);
  return raw;
}

function depositAddress(raw: string | undefined, network: TonNetwork): string | undefined {
  if (!raw) return undefined;
  try {
    return depositAddressForm(raw, network);
  } catch (error) {
    if (error instanceof TonAddressError) {
      if (/testnet-only/.test(error.message)) throw new ConfigError(`DEPOSIT_ADDRESS "${raw}" is a testnet-only address but TON_NETWORK is mainnet`);
      throw new ConfigError(`DEPOSIT_ADDRESS must be a TON address (raw 0:… or user-friendly UQ…/EQ…), got "${raw}"`);
    }
    throw error;
  }
}

function tonNetwork(raw: string | undefined): TonNetwork {
  if (!raw) return 'mainnet';
  if (raw !== 'mainnet' && raw !== 'testnet') throw new ConfigError(`TON_NETWORK must be mainnet or testnet, got "${raw}"`);
  return raw;
}

function tonApiUrl(raw: string | undefined, network: TonNetwork): string {
  if (!raw) return TON_API_DEFAULTS[network];
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`TON_API_URL must be an absolute http(s) URL such as ${TON_API_DEFAULTS[network]}, got "${raw}"`);
  }
  if (!['http:', 'https:'].includes(url.protocol) || url.search || url.hash) {
    throw new ConfigError(`TON_API_URL must be an http(s) base URL without query, such as ${TON_API_DEFAULTS[network]}`);
  }
  // A key in the URL would end up in logs; it goes in TON_API_KEY (sent as a header).
  if (url.username || url.password) throw new ConfigError('TON_API_URL must not contain credentials; set TON_API_KEY instead');
  return raw.replace(/\/+$/, '');
}

/**
 * USDT_MASTER: default the mainnet USDT master on mainnet; on testnet there is no official USDT,
 * so it is off unless set. `off` turns USDT top-ups off on either network.
 */
function usdtConfig(env: Env, network: TonNetwork): Config['usdt'] {
  const raw = env.USDT_MASTER?.trim() || (network === 'mainnet' ? MAINNET_USDT_MASTER : 'off');
  let master: string | undefined;
  if (raw !== 'off') {
    try {
      master = friendlyAddress(rawAddressForm(raw), network);
    } catch {
      throw new ConfigError(`USDT_MASTER must be a TON address (the USDT jetton master) or off, got "${raw}"`);
    }
  }
  const spreadPercent = decimal(env, 'USDT_DEPOSIT_SPREAD_PERCENT', '1');
  if (spreadPercent.units >= 100n * 10n ** BigInt(spreadPercent.scale)) throw new ConfigError('USDT_DEPOSIT_SPREAD_PERCENT must be below 100');
  const minRaw = env.USDT_DEPOSIT_MIN?.trim() || '1';
  let minUnits: bigint;
  try {
    minUnits = parseUsdt(minRaw);
  } catch {
    throw new ConfigError(`USDT_DEPOSIT_MIN must be a USDT amount with at most 6 decimal places, got "${minRaw}"`);
  }
  return { master, spreadPercent, minUnits };
}

/** proxy-addr's named ranges, accepted in TRUST_PROXY lists. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

export function trustProxy(raw: string | undefined): TrustProxy {
  const value = (raw ?? '').trim();
  if (value === '' || value === 'false' || value === '0') return false;
  if (value === 'true' || value === '1') return true;
  const entries = value.split(',').map((e) => e.trim());
  for (const entry of entries) {
    const [address, bits, ...rest] = entry.split('/');
    const family = net.isIP(address ?? '');
    const bitsOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (!(NAMED_RANGES.has(entry) || (family !== 0 && bitsOk && rest.length === 0))) {
      throw new ConfigError(
        `TRUST_PROXY must be true, false, or a comma-separated list of proxy addresses / CIDR ranges (or loopback, linklocal, uniquelocal); "${entry}" is none of these`,
      );
    }
  }
  return entries;
}

export function loadConfig(env: Env = process.env): Config {
  const tonUsdRate = decimal(env, 'TON_USD_RATE', '3.0');
  if (tonUsdRate.units === 0n) throw new ConfigError('TON_USD_RATE must be greater than 0');
  const network = tonNetwork(env.TON_NETWORK);
  return {
    port: integer(env, 'PORT', 3000, 0, 65_535),
    host: env.HOST || '127.0.0.1',
    operator: operatorListener(env),
    dataDir: path.resolve(env.DATA_DIR || path.join(PACKAGE_ROOT, 'data')),
    databaseUrl: databaseUrl(env.DATABASE_URL),
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1),
    databaseConnectTimeoutS: env.DATABASE_CONNECT_TIMEOUT_S ? integer(env, 'DATABASE_CONNECT_TIMEOUT_S', 0, 1, 3600) : undefined,
    shutdownTimeoutS: integer(env, 'SHUTDOWN_TIMEOUT_S', 10, 1, 3600),
    databaseQueryTimeoutMs: integer(env, 'DATABASE_QUERY_TIMEOUT_MS', 15_000, 100, 3_600_000),
    publicUrl: publicUrl(env.PUBLIC_URL),
    logLevel: env.LOG_LEVEL || 'info',
    prices: {
      starUsd: decimal(env, 'PRICE_STAR_USD', '0.015'),
      premiumUsd: {
        3: decimal(env, 'PRICE_PREMIUM_3_USD', '11.99'),
        6: decimal(env, 'PRICE_PREMIUM_6_USD', '15.99'),
        12: decimal(env, 'PRICE_PREMIUM_12_USD', '28.99'),
      },
      markupPercent: decimal(env, 'PRICE_MARKUP_PERCENT', '0'),
    },
    tonUsdRate,
    quoteTtlSeconds: integer(env, 'QUOTE_TTL_SECONDS', 60, 1),
    testFulfilmentDelayMs: integer(env, 'TEST_FULFILMENT_DELAY_MS', 2000),
    testSlowDelayMs: integer(env, 'TEST_SLOW_DELAY_MS', 30_000),
    rateLimitRps: integer(env, 'RATE_LIMIT_RPS', 100),
    rateLimitBurst: integer(env, 'RATE_LIMIT_BURST', 200, 1),
    rateLimitNodes: integer(env, 'RATE_LIMIT_NODES', 1, 1),
    workerLeaseMs: integer(env, 'WORKER_LEASE_MS', 30_000, 300),
    trustProxy: trustProxy(env.TRUST_PROXY),
    signup: signup(env.SIGNUP),
    signupVerify: signupVerify(env.SIGNUP_VERIFY),
    depositAddress: depositAddress(env.DEPOSIT_ADDRESS, network),
    live: loadLiveConfig(env),
    tonNetwork: network,
    tonApiUrl: tonApiUrl(env.TON_API_URL, network),
    tonApiKey: env.TON_API_KEY || undefined,
    depositMinNanotons: tonAmount(env, 'DEPOSIT_MIN_TON', '0.1'),
    depositPollMs: integer(env, 'DEPOSIT_POLL_MS', 5000, 50),
    usdt: usdtConfig(env, network),
    webhooks: {
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 60_000),
      allowLoopback: flag(env, 'WEBHOOK_ALLOW_LOOPBACK'),
      retryDelaysMs: millisecondList(env, 'WEBHOOK_RETRY_DELAYS_MS', DEFAULT_RETRY_DELAYS_MS),
      disableAfterMs: integer(env, 'WEBHOOK_DISABLE_AFTER_MS', 3 * 86_400_000),
      rotationGraceMs: integer(env, 'WEBHOOK_ROTATION_GRACE_MS', 86_400_000),
      dnsServers: dnsServers(env.WEBHOOK_DNS_SERVERS),
    },
    http: httpLimits(env),
    notifications: notificationConfig(env),
    brand: brandConfig(env),
  };
}

export interface OperatorListener {
  host: string;
  /** undefined: the console is off; 0: any free port (tests). */
  port: number | undefined;
}

/**
 * OPERATOR_HOST (127.0.0.1) and OPERATOR_PORT (unset: the console is off): the operator
 * console's own listener, never the public one (docs/operations.md "Operator console").
 */
export function operatorListener(env: Env): OperatorListener {
  const host = env.OPERATOR_HOST || '127.0.0.1';
  if (net.isIP(host) === 0 && !/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/.test(host)) {
    throw new ConfigError(`OPERATOR_HOST must be an IP address or a host name, got "${env.OPERATOR_HOST}"`);
  }
  if (env.OPERATOR_PORT === undefined || env.OPERATOR_PORT === '') return { host, port: undefined };
  const port = integer(env, 'OPERATOR_PORT', 0, 0, 65_535);
  const publicPort = integer(env, 'PORT', 3000, 0, 65_535);
  if (port !== 0 && port === publicPort) throw new ConfigError(`OPERATOR_PORT must differ from PORT (the public port), got "${env.OPERATOR_PORT}"`);
  return { host, port };
}

export function httpLimits(env: Env): HttpLimits {
  const limits = {
    headersTimeoutMs: integer(env, 'HEADERS_TIMEOUT_MS', 10_000, 100, 600_000),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000),
    keepAliveTimeoutMs: integer(env, 'KEEP_ALIVE_TIMEOUT_MS', 5_000, 100, 3_600_000),
    maxConnections: integer(env, 'MAX_CONNECTIONS', 10_000, 1, 1_000_000),
  };
  // Node refuses a headers limit above the whole request's (http.Server options).
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new ConfigError(`HEADERS_TIMEOUT_MS (${limits.headersTimeoutMs}) must not exceed REQUEST_TIMEOUT_MS (${limits.requestTimeoutMs})`);
  }
  return limits;
}

/** Comma-separated IP addresses, each with an optional port (`1.1.1.1`, `127.0.0.1:5353`, `[::1]:53`). */
function dnsServers(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  const parts = raw.split(',').map((part) => part.trim());
  const valid = (part: string) => {
    const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(part);
    const withPort = /^([^:]+):(\d{1,5})$/.exec(part);
    const [host, port] = bracketed ? [bracketed[1], bracketed[2]] : withPort ? [withPort[1], withPort[2]] : [part, undefined];
    const ip = net.isIP(host ?? '');
    return (bracketed ? ip === 6 : ip !== 0) && (port === undefined || (Number(port) >= 1 && Number(port) <= 65_535));
  };
  if (parts.length > 8 || !parts.every(valid)) {
    throw new ConfigError(`WEBHOOK_DNS_SERVERS must be up to 8 comma-separated IP addresses, each with an optional :port ([::1]:53 for IPv6), got "${raw}"`);
  }
  return parts;
}
