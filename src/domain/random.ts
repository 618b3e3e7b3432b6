import { randomBytes } from 'node:crypto';

export const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` uniformly random base62 characters (rejection sampling keeps them unbiased). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 * 62: bytes above it would favour the first characters of the alphabet.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** Public identifiers: a type prefix and 22 base62 characters (~131 bits), never sequential. */
export type IdPrefix = 'ord' | 'evt' | 'req' | 'acct' | 'key' | 'jrn';
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${randomBase62(22)}`;
}
