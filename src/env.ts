import { type Decimal, parseDecimal } from './domain/decimal.js';
import { parseTon } from './domain/money.js';

/**
 * The environment's parsers, shared by src/config.ts, src/live/config.ts and
 * src/notifications/config.ts: each reads one variable, applies its default when unset or empty,
 * and throws a ConfigError that names the variable and the value it got (docs/operations.md
 * "Configuration").
 */
export type Env = Record<string, string | undefined>;

/** A bad setting: `serve` and the CLI print its message on one line and exit. */
export class ConfigError extends Error {}

/** A whole number from `min` to `max`. */
export function integer(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
    throw new ConfigError(`${name} must be an integer ${range}, got "${raw}"`);
  }
  return Number(raw);
}

/** A non-negative decimal (prices, rates, percentages); set but empty is refused, not defaulted. */
export function decimal(env: Env, name: string, fallback: string): Decimal {
  const raw = env[name] ?? fallback;
  const value = parseDecimal(raw);
  if (!value) throw new ConfigError(`${name} must be a non-negative decimal number, got "${raw}"`);
  return value;
}

/** A TON amount, in nanotons. */
export function tonAmount(env: Env, name: string, fallback: string): bigint {
  const raw = env[name] || fallback;
  try {
    return parseTon(raw.trim());
  } catch {
    throw new ConfigError(`${name} must be a TON amount with at most 9 decimal places, such as ${fallback}, got "${raw}"`);
  }
}

/** One of a fixed set of words. */
export function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw as T;
}

/** 1/true or 0/false; unset = false. */
export function flag(env: Env, name: string): boolean {
  const raw = env[name] ?? '';
  if (raw === '' || raw === '0' || raw === 'false') return false;
  if (raw === '1' || raw === 'true') return true;
  throw new ConfigError(`${name} must be 1 or 0, got "${raw}"`);
}

/** An absolute http(s) URL, without trailing slashes; undefined when unset and no fallback. */
export function httpUrl(env: Env, name: string, fallback?: string): string | undefined {
  const raw = env[name] || fallback;
  if (raw === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(`${name} must be an http(s) URL, got "${raw}"`);
  return raw.replace(/\/+$/, '');
}

/** Comma-separated millisecond counts (retry schedules), at most 20. */
export function millisecondList(env: Env, name: string, fallback: number[]): number[] {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const parts = raw.split(',').map((part) => part.trim());
  if (parts.length > 20 || !parts.every((part) => /^\d+$/.test(part))) throw new ConfigError(`${name} must be up to 20 comma-separated millisecond counts, got "${raw}"`);
  return parts.map(Number);
}
