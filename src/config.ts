import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { type Decimal, parseDecimal } from './domain/decimal.js';
import type { PriceList } from './domain/pricing.js';

/** Everything the environment can set, validated once at start-up with the embedded defaults. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** postgres://… selects PostgreSQL; unset = embedded SQLite under dataDir. */
  databaseUrl: string | undefined;
  databasePoolSize: number;
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
}

export class ConfigError extends Error {}

/** The package's own folder: `./data` defaults relative to it, not to the caller's cwd. */
export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

type Env = Record<string, string | undefined>;

function decimal(env: Env, name: string, fallback: string): Decimal {
  const raw = env[name] ?? fallback;
  const value = parseDecimal(raw);
  if (!value) throw new ConfigError(`${name} must be a non-negative decimal number, got "${raw}"`);
  return value;
}

function integer(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
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

export function loadConfig(env: Env = process.env): Config {
  const tonUsdRate = decimal(env, 'TON_USD_RATE', '3.0');
  if (tonUsdRate.units === 0n) throw new ConfigError('TON_USD_RATE must be greater than 0');
  return {
    port: integer(env, 'PORT', 3000, 0, 65_535),
    host: env.HOST || '127.0.0.1',
    dataDir: path.resolve(env.DATA_DIR || path.join(PACKAGE_ROOT, 'data')),
    databaseUrl: databaseUrl(env.DATABASE_URL),
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', 10, 1),
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
  };
}
