import { hash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { BASE62, randomBase62 } from './random.js';

/**
 * API key layout (docs/api.md "Authentication"): `sk_live_` | `sk_test_`, 32 random base62
 * characters, then the CRC32 of those 32 characters as 6 base62 digits. The checksum lets us
 * reject typos and garbage without a database lookup, and lets secret scanners spot leaks.
 */
export const MODES = ['live', 'test'] as const;
export type Mode = (typeof MODES)[number];

const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
export const API_KEY_LENGTH = 'sk_live_'.length + RANDOM_LENGTH + CHECKSUM_LENGTH;
const KEY_PATTERN = /^sk_(live|test)_([0-9A-Za-z]{32})([0-9A-Za-z]{6})$/;

export function isMode(value: unknown): value is Mode {
  return value === 'live' || value === 'test';
}

export function checksum(randomPart: string): string {
  let value = crc32(randomPart);
  let digits = '';
  while (value > 0) {
    digits = BASE62[value % 62] + digits;
    value = Math.floor(value / 62);
  }
  return digits.padStart(CHECKSUM_LENGTH, '0');
}

export function generateApiKey(mode: Mode): string {
  const randomPart = randomBase62(RANDOM_LENGTH);
  return `sk_${mode}_${randomPart}${checksum(randomPart)}`;
}

/** The mode of a well-formed key with a valid checksum, or undefined. */
export function parseApiKey(key: string): { mode: Mode } | undefined {
  const match = KEY_PATTERN.exec(key);
  if (!match) return undefined;
  const [, mode, randomPart = '', sum] = match;
  if (checksum(randomPart) !== sum) return undefined;
  return { mode: mode as Mode };
}

/** Keys are stored only as this hash; a fast hash suffices because keys carry 190 random bits. */
export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** What the dashboard and the CLI may show of a key after it was issued: `sk_test_AbCd…`. */
export function displayPrefix(key: string): string {
  return key.slice(0, 'sk_test_'.length + 4);
}
