import { randomBytes } from 'node:crypto';

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * Random bytes drawn from a pool refilled 4 KiB at a time: one CSPRNG call per ~100 ids
 * instead of one per id (a request id is made for every request).
 */
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

function nextRandomByte(): number {
  if (offset === POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  return pool[offset++] as number;
}

/** Copies `length` random bytes into `target` at `at`, from the same pool. */
export function fillRandom(target: Buffer, at: number, length: number): void {
  for (let i = 0; i < length; i++) target[at + i] = nextRandomByte();
}

/** BASE62 as ASCII codes: ids are written as bytes and decoded once (below). */
export const BASE62_CODES = Buffer.from(BASE62, 'latin1');

// One scratch buffer for every id: a string built a character at a time is a chain of
// concatenations that V8 must flatten again when the id is written (docs/performance-history.md "Ninth round": a request id is
// made for every request).
const scratch = Buffer.alloc(256);

/** `length` uniformly random base62 characters (rejection sampling keeps them unbiased). */
export function randomBase62(length: number): string {
  const out = length <= scratch.length ? scratch : Buffer.alloc(length);
  for (let n = 0; n < length; ) {
    const byte = nextRandomByte();
    // 248 = 4 * 62: bytes above it would favour the first characters of the alphabet.
    if (byte < 248) out[n++] = BASE62_CODES[byte % 62] as number;
  }
  return out.toString('latin1', 0, length);
}

/** Public identifiers: a type prefix and 22 base62 characters (~131 bits), never sequential. */
export type IdPrefix = 'ord' | 'evt' | 'req' | 'acct' | 'key' | 'jrn' | 'quo' | 'we' | 'msg' | 'wha' | 'dep' | 'psn' | 'ntf' | 'opr';
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(22)}`;
}

/**
 * Whether `value` has the shape of a public id with this prefix. A lookup is skipped for
 * anything else: it cannot exist, and PostgreSQL refuses some strings outright (a NUL byte).
 */
export function isPublicId(prefix: IdPrefix, value: string): boolean {
  return value.length <= prefix.length + 65 && value.startsWith(`${prefix}_`) && /^[0-9A-Za-z]+$/.test(value.slice(prefix.length + 1));
}
