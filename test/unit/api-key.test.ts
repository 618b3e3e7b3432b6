import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { API_KEY_LENGTH, checksum, displayPrefix, generateApiKey, hashApiKey, isMode, parseApiKey } from '../../src/domain/api-key.js';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Reference CRC32 (IEEE 802.3, reflected polynomial 0xEDB88320), written out independently. */
function referenceCrc32(text: string): number {
  let crc = 0xffffffff;
  for (const byte of Buffer.from(text, 'utf8')) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function referenceBase62(value: number, width: number): string {
  let n = BigInt(value);
  let out = '';
  do {
    out = ALPHABET[Number(n % 62n)] + out;
    n /= 62n;
  } while (n > 0n);
  return out.padStart(width, '0');
}

function otherChar(c: string): string {
  return c === 'A' ? 'B' : 'A';
}

describe('reference helpers', () => {
  it('CRC32 of "123456789" is the standard check value 0xCBF43926', () => {
    expect(referenceCrc32('123456789')).toBe(0xcbf43926);
  });
});

describe('generateApiKey', () => {
  it.each(['live', 'test'] as const)('makes a well-formed %s key', (mode) => {
    const key = generateApiKey(mode);
    expect(key).toHaveLength(46);
    expect(API_KEY_LENGTH).toBe(46);
    expect(key.startsWith(`sk_${mode}_`)).toBe(true);
    expect(key.slice(8)).toMatch(/^[0-9A-Za-z]{38}$/);
    expect(parseApiKey(key)).toEqual({ mode });
  });

  it('never repeats', () => {
    const keys = new Set(Array.from({ length: 200 }, () => generateApiKey('live')));
    expect(keys.size).toBe(200);
  });

  it('appends the CRC32 of the random part in base62', () => {
    for (let i = 0; i < 50; i++) {
      const key = generateApiKey('test');
      const random = key.slice(8, 40);
      expect(key.slice(40)).toBe(referenceBase62(referenceCrc32(random), 6));
    }
  });
});

describe('checksum', () => {
  it.each(['abcdefghijklmnopqrstuvwxyzABCDEF', '00000000000000000000000000000000', 'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz', '0123456789ABCDEFGHIJKLMNOPQRSTUV', '123456789'])(
    'matches an independent CRC32 → base62 for %s',
    (random) => {
      expect(checksum(random)).toBe(referenceBase62(referenceCrc32(random), 6));
    },
  );

  it('is 6 characters of base62, left-padded with 0', () => {
    // CRC32('123456789') = 0xCBF43926 = 3421780262
    const sum = checksum('123456789');
    expect(sum).toMatch(/^[0-9A-Za-z]{6}$/);
    expect(sum).toBe(referenceBase62(3421780262, 6));
  });

  it('pads with zeros when the CRC is small (CRC32 of the empty string is 0)', () => {
    expect(checksum('')).toBe('000000');
  });
});

describe('parseApiKey', () => {
  const live = generateApiKey('live');
  const test = generateApiKey('test');

  it('returns the mode of a valid key', () => {
    expect(parseApiKey(live)).toEqual({ mode: 'live' });
    expect(parseApiKey(test)).toEqual({ mode: 'test' });
  });

  it('accepts a hand-built key with a correct checksum', () => {
    const random = 'abcdefghijklmnopqrstuvwxyzABCDEF';
    const key = `sk_test_${random}${referenceBase62(referenceCrc32(random), 6)}`;
    expect(parseApiKey(key)).toEqual({ mode: 'test' });
  });

  it('rejects every single-character change in the random part or checksum', () => {
    for (let i = 8; i < 46; i++) {
      const tampered = live.slice(0, i) + otherChar(live[i]!) + live.slice(i + 1);
      expect(parseApiKey(tampered), `position ${i}`).toBeUndefined();
    }
  });

  it('rejects a checksum that belongs to another key', () => {
    const other = generateApiKey('live');
    expect(parseApiKey(live.slice(0, 40) + other.slice(40))).toBeUndefined();
  });

  it('rejects wrong prefixes', () => {
    const rest = live.slice(8);
    for (const prefix of ['sk_prod_', 'SK_LIVE_', 'sk-live_', 'pk_live_', 'sk_Live_']) {
      expect(parseApiKey(prefix + rest), prefix).toBeUndefined();
    }
    expect(parseApiKey(`sk_prod${rest}`)).toBeUndefined();
  });

  it('rejects wrong lengths', () => {
    expect(parseApiKey(live.slice(0, 45))).toBeUndefined();
    expect(parseApiKey(`${live}A`)).toBeUndefined();
    expect(parseApiKey('')).toBeUndefined();
    expect(parseApiKey('sk_live_')).toBeUndefined();
  });

  it('rejects non-base62 characters', () => {
    for (const bad of ['-', '_', '+', '/', '=', ' ', 'é']) {
      expect(parseApiKey(live.slice(0, 20) + bad + live.slice(21)), bad).toBeUndefined();
    }
  });

  it('rejects surrounding whitespace', () => {
    expect(parseApiKey(` ${live}`)).toBeUndefined();
    expect(parseApiKey(`${live}\n`)).toBeUndefined();
  });

  it('takes the mode from the prefix (the checksum covers only the random part)', () => {
    expect(parseApiKey(`sk_live_${test.slice(8)}`)).toEqual({ mode: 'live' });
  });
});

describe('hashApiKey', () => {
  it('is the SHA-256 hex digest of the key', () => {
    const key = generateApiKey('live');
    expect(hashApiKey(key)).toBe(createHash('sha256').update(key).digest('hex'));
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('matches a known vector', () => {
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});

describe('displayPrefix', () => {
  it('shows the mode prefix and 4 characters', () => {
    const key = generateApiKey('test');
    expect(displayPrefix(key)).toBe(key.slice(0, 12));
    expect(displayPrefix(key)).toMatch(/^sk_test_[0-9A-Za-z]{4}$/);
    expect(displayPrefix('sk_live_AbCdEfGh')).toBe('sk_live_AbCd');
  });
});

describe('isMode', () => {
  it('accepts only live and test', () => {
    expect(isMode('live')).toBe(true);
    expect(isMode('test')).toBe(true);
    for (const v of ['LIVE', 'prod', '', null, undefined, 1]) expect(isMode(v)).toBe(false);
  });
});
