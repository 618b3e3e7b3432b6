import { createHmac, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BASE62 } from '../../src/domain/random.js';
import { issueQuote, readQuote } from '../../src/quotes/quotes.js';

/**
 * The quote id's encoding (src/quotes/quotes.ts), checked against a reference written the
 * plain way: each 7-character group is one 40-bit number in base 62, decoded with BigInt.
 */
function referenceDecode(id: string): Buffer {
  const token = Buffer.alloc(45);
  for (let group = 0; group < 9; group++) {
    let n = 0n;
    for (const char of id.slice(4 + group * 7, 4 + (group + 1) * 7)) n = n * 62n + BigInt(BASE62.indexOf(char));
    token.writeUIntBE(Number(n), group * 5, 5);
  }
  return token;
}

const key = randomBytes(32);
const accountId = 'acct_2L7x8d9JkQ3mN5pR1sT4vW';

describe('quote ids', () => {
  it('carry the quote, signed over the account and mode, in 63 base62 characters', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('stars' as const, 'premium' as const),
        fc.integer({ min: 1, max: 65_535 }),
        fc.bigInt({ min: 0n, max: 2n ** 56n - 1n }),
        fc.integer({ min: 0, max: 2 ** 47 }),
        fc.constantFrom('live' as const, 'test' as const),
        (product, quantity, amount, now, mode) => {
          const quote = issueQuote(key, { accountId, mode, product, quantity, amount, now, ttlSeconds: 60 });
          expect(quote.id).toMatch(/^quo_[0-9A-Za-z]{63}$/);
          const token = referenceDecode(quote.id);
          expect(token[0]).toBe(1);
          expect(token[1]).toBe(product === 'stars' ? 0 : 1);
          expect(token.readUInt16BE(2)).toBe(quantity);
          expect((BigInt(token[4]!) << 48n) | BigInt(token.readUIntBE(5, 6))).toBe(amount);
          expect(token.readUIntBE(11, 6)).toBe(now + 60_000);
          const mac = createHmac('sha256', key).update(token.subarray(0, 29)).update(`\0${accountId}\0${mode}`).digest().subarray(0, 16);
          expect(token.subarray(29).equals(mac)).toBe(true);
          expect(readQuote(key, quote.id, accountId, mode)).toEqual(quote);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('are signed with HMAC-SHA256 for any key up to a block and any account id, however long', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.string({ unit: 'grapheme', maxLength: 150 }), (keyBytes, account) => {
        const someKey = Buffer.from(keyBytes);
        const quote = issueQuote(someKey, { accountId: account, mode: 'live', product: 'premium', quantity: 3, amount: 1n, now: 0, ttlSeconds: 60 });
        const token = referenceDecode(quote.id);
        const mac = createHmac('sha256', someKey).update(token.subarray(0, 29)).update(`\0${account}\0live`).digest().subarray(0, 16);
        expect(token.subarray(29).equals(mac)).toBe(true);
        expect(readQuote(someKey, quote.id, account, 'live')).toEqual(quote);
      }),
      { numRuns: 500 },
    );
  });

  it('are not quotes for another account, another mode, or with one character changed', () => {
    const quote = issueQuote(key, { accountId, mode: 'test', product: 'stars', quantity: 100, amount: 500_000_000n, now: Date.now(), ttlSeconds: 60 });
    expect(readQuote(key, quote.id, 'acct_0000000000000000000000', 'test')).toBeUndefined();
    expect(readQuote(key, quote.id, accountId, 'live')).toBeUndefined();
    for (const at of [4, 30, quote.id.length - 1]) {
      const changed = quote.id.slice(0, at) + (quote.id[at] === 'a' ? 'b' : 'a') + quote.id.slice(at + 1);
      expect(readQuote(key, changed, accountId, 'test')).toBeUndefined();
    }
  });
});
