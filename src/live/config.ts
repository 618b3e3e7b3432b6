import fs from 'node:fs';
import type { Decimal } from '../domain/decimal.js';
import { ConfigError, decimal, type Env, httpUrl, integer as int, oneOf, tonAmount as ton } from '../env.js';

/**
 * Live fulfilment settings: the Fragment upstream, the paying wallet's presence, the
 * price source and its rate feed, the circuit breaker and the money-safety margins.
 */
export interface LiveConfig {
  fragment: {
    baseUrl: string;
    /** FRAGMENT_COOKIES (Cookie-header form); a session stored by `fragment session set` wins. */
    cookies: string | undefined;
    /**
     * FRAGMENT_MAX_RPS: upstream calls per second, per process. Default 10: no source states
     * Fragment's own limit; four calls an order, so 10 lets one worker pay 100+ orders a minute.
     */
    maxRps: number;
    timeoutMs: number;
  };
  wallet: {
    /** The mnemonic words (WALLET_MNEMONIC or WALLET_MNEMONIC_FILE); never logged. */
    mnemonic: string[] | undefined;
    version: 'v5r1' | 'v4';
    /** WALLET_BATCH_MAX: most orders one transfer pays (V5R1 ≤ 255, V4 ≤ 4). */
    batchMax: number;
    /** WALLET_MESSAGE_TTL_SECONDS: a signed message's valid_until is at most this far ahead. */
    messageTtlSeconds: number;
    /** WALLET_CONFIRM_MARGIN_SECONDS: unconfirmed this long after valid_until (seqno moved) → held for review. */
    confirmMarginSeconds: number;
    /** WALLET_POLL_MS: how often an in-flight message is looked up on chain. */
    pollMs: number;
    /** WALLET_REBROADCAST_SECONDS: how often the same signed message is broadcast again. */
    rebroadcastSeconds: number;
    /** WALLET_MIN_BALANCE_TON (nanotons): kept in the wallet; below it live fulfilment pauses (need_ton). */
    minBalance: bigint;
  };
  /** LIVE_WORKER_CONCURRENCY: live orders one worker steps at the same time. */
  workerConcurrency: number;
  pricing: {
    source: 'usd' | 'fragment';
    rateFeed: 'fixed' | 'tonapi' | 'coingecko';
    rateFeedUrl: string | undefined;
    /** How long a fetched rate / upstream price is reused before asking again. */
    refreshSeconds: number;
    /** Older than this (no successful refresh) → 503 price_unavailable. */
    maxAgeSeconds: number;
  };
  validateCacheSeconds: number;
  /** A live order still unpaid this long after creation fails upstream_unavailable. */
  maxWaitSeconds: number;
  breaker: {
    cooldownSeconds: number;
    /** Consecutive transient upstream failures that count as "Fragment is down". */
    threshold: number;
  };
  /** Network fees the wallet pays on top of Fragment's amount, in nanotons. */
  feeAllowance: bigint;
  /** How far (percent of the reserved amount) the upstream amount + fees may exceed it. */
  priceTolerancePercent: Decimal;
}

/** Mnemonic words from WALLET_MNEMONIC or the file WALLET_MNEMONIC_FILE (checked cryptographically at start). */
function mnemonic(env: Env): string[] | undefined {
  if (env.WALLET_MNEMONIC && env.WALLET_MNEMONIC_FILE) throw new ConfigError('set WALLET_MNEMONIC or WALLET_MNEMONIC_FILE, not both');
  let text = env.WALLET_MNEMONIC;
  if (env.WALLET_MNEMONIC_FILE) {
    try {
      text = fs.readFileSync(env.WALLET_MNEMONIC_FILE, 'utf8');
    } catch (error) {
      throw new ConfigError(`WALLET_MNEMONIC_FILE cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  if (!text || text.trim() === '') return undefined;
  const words = text.trim().split(/\s+/);
  // The words themselves never appear in a message.
  if (words.length !== 24) throw new ConfigError(`the wallet mnemonic must be 24 words, got ${words.length}`);
  return words;
}

export function loadLiveConfig(env: Env): LiveConfig {
  const rateFeed = oneOf(env, 'RATE_FEED', ['fixed', 'tonapi', 'coingecko'] as const, 'fixed');
  const refreshSeconds = int(env, 'RATE_REFRESH_SECONDS', 60, 1);
  const maxAgeSeconds = int(env, 'RATE_MAX_AGE_SECONDS', 600, 1);
  if (maxAgeSeconds < refreshSeconds) throw new ConfigError('RATE_MAX_AGE_SECONDS must be at least RATE_REFRESH_SECONDS');
  return {
    fragment: {
      baseUrl: httpUrl(env, 'FRAGMENT_BASE_URL', 'https://fragment.com') as string,
      cookies: env.FRAGMENT_COOKIES?.trim() || undefined,
      maxRps: int(env, 'FRAGMENT_MAX_RPS', 10, 1),
      timeoutMs: int(env, 'FRAGMENT_TIMEOUT_MS', 10_000, 100),
    },
    wallet: {
      mnemonic: mnemonic(env),
      version: oneOf(env, 'WALLET_VERSION', ['v5r1', 'v4'] as const, 'v5r1'),
      batchMax: int(env, 'WALLET_BATCH_MAX', 100, 1),
      messageTtlSeconds: int(env, 'WALLET_MESSAGE_TTL_SECONDS', 180, 5),
      confirmMarginSeconds: int(env, 'WALLET_CONFIRM_MARGIN_SECONDS', 120, 1),
      pollMs: int(env, 'WALLET_POLL_MS', 2000, 50),
      rebroadcastSeconds: int(env, 'WALLET_REBROADCAST_SECONDS', 10, 1),
      minBalance: ton(env, 'WALLET_MIN_BALANCE_TON', '1'),
    },
    workerConcurrency: int(env, 'LIVE_WORKER_CONCURRENCY', 8, 1),
    pricing: {
      source: oneOf(env, 'PRICE_SOURCE', ['usd', 'fragment'] as const, 'usd'),
      rateFeed,
      rateFeedUrl: httpUrl(env, 'RATE_FEED_URL'),
      refreshSeconds,
      maxAgeSeconds,
    },
    validateCacheSeconds: int(env, 'LIVE_VALIDATE_CACHE_SECONDS', 60),
    maxWaitSeconds: int(env, 'LIVE_MAX_WAIT_SECONDS', 1800, 1),
    breaker: { cooldownSeconds: int(env, 'LIVE_BREAKER_COOLDOWN_SECONDS', 60, 1), threshold: int(env, 'LIVE_BREAKER_THRESHOLD', 5, 1) },
    feeAllowance: ton(env, 'LIVE_FEE_ALLOWANCE_TON', '0.01'),
    priceTolerancePercent: decimal(env, 'LIVE_PRICE_TOLERANCE_PERCENT', '5'),
  };
}
