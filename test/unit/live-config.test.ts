import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { parseCookieHeader, SessionFormatError } from '../../src/live/fragment/session-store.js';

/** Live configuration (src/live/config.ts) and the Fragment session format. */

const WORDS = Array.from({ length: 24 }, (_, i) => `word${i}`).join(' ');

describe('live configuration', () => {
  test('defaults: Fragment at fragment.com, no session, no wallet, USD prices at the fixed rate', () => {
    const { live } = loadConfig({});
    expect(live.fragment).toEqual({ baseUrl: 'https://fragment.com', cookies: undefined, maxRps: 10, timeoutMs: 10_000 });
    expect(live.wallet).toEqual({
      mnemonic: undefined,
      version: 'v5r1',
      batchMax: 100,
      messageTtlSeconds: 180,
      confirmMarginSeconds: 120,
      pollMs: 2000,
      rebroadcastSeconds: 10,
      minBalance: 1_000_000_000n,
    });
    expect(live.workerConcurrency).toBe(8);
    expect(live.pricing).toEqual({ source: 'usd', rateFeed: 'fixed', rateFeedUrl: undefined, refreshSeconds: 60, maxAgeSeconds: 600 });
    expect(live).toMatchObject({ validateCacheSeconds: 60, maxWaitSeconds: 1800, breaker: { cooldownSeconds: 60, threshold: 5 }, feeAllowance: 10_000_000n });
    expect(live.priceTolerancePercent).toEqual({ units: 5n, scale: 0 });
  });

  test('wallet settings: bad values are refused with the variable named', () => {
    expect(loadConfig({ WALLET_BATCH_MAX: '50', WALLET_MIN_BALANCE_TON: '2.5' }).live.wallet).toMatchObject({ batchMax: 50, minBalance: 2_500_000_000n });
    expect(() => loadConfig({ WALLET_BATCH_MAX: '0' })).toThrow(/WALLET_BATCH_MAX/);
    expect(() => loadConfig({ WALLET_MESSAGE_TTL_SECONDS: '2' })).toThrow(/WALLET_MESSAGE_TTL_SECONDS/);
    expect(() => loadConfig({ WALLET_MIN_BALANCE_TON: '-1' })).toThrow(/WALLET_MIN_BALANCE_TON/);
    expect(() => loadConfig({ LIVE_WORKER_CONCURRENCY: 'many' })).toThrow(/LIVE_WORKER_CONCURRENCY/);
  });

  test('the mnemonic comes from WALLET_MNEMONIC or a file, never both, and is never in a message', () => {
    expect(loadConfig({ WALLET_MNEMONIC: WORDS }).live.wallet.mnemonic).toHaveLength(24);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'starport-mnemonic-'));
    try {
      const file = path.join(dir, 'mnemonic');
      fs.writeFileSync(file, `${WORDS}\n`);
      expect(loadConfig({ WALLET_MNEMONIC_FILE: file }).live.wallet.mnemonic?.[23]).toBe('word23');
      expect(() => loadConfig({ WALLET_MNEMONIC_FILE: file, WALLET_MNEMONIC: WORDS })).toThrow(ConfigError);
      expect(() => loadConfig({ WALLET_MNEMONIC_FILE: path.join(dir, 'missing') })).toThrow(/cannot be read \(ENOENT\)/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    try {
      loadConfig({ WALLET_MNEMONIC: 'secretword another' });
      throw new Error('no error');
    } catch (error) {
      expect((error as Error).message).toMatch(/24 words, got 2/);
      expect((error as Error).message).not.toContain('secretword');
    }
  });

  test.each([
    ['FRAGMENT_BASE_URL', 'ftp://x'],
    ['FRAGMENT_MAX_RPS', '0'],
    ['WALLET_VERSION', 'v3r2'],
    ['PRICE_SOURCE', 'eur'],
    ['RATE_FEED', 'binance'],
    ['RATE_FEED_URL', 'not a url'],
    ['RATE_MAX_AGE_SECONDS', '10'],
    ['LIVE_MAX_WAIT_SECONDS', '0'],
    ['LIVE_FEE_ALLOWANCE_TON', '0.0000000001'],
    ['LIVE_PRICE_TOLERANCE_PERCENT', '-1'],
  ])('%s=%s is refused, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(name === 'RATE_MAX_AGE_SECONDS' ? /RATE_MAX_AGE_SECONDS/ : new RegExp(name));
  });
});

describe('Fragment session (Cookie header)', () => {
  test('normalized; names listed', () => {
    expect(parseCookieHeader('Cookie: stel_ssid=a;stel_dt=-180;  stel_token=b; stel_ton_token=c\n')).toEqual({
      header: 'stel_ssid=a; stel_dt=-180; stel_token=b; stel_ton_token=c',
      names: ['stel_ssid', 'stel_dt', 'stel_token', 'stel_ton_token'],
    });
  });

  test.each(['stel_ssid=a; stel_dt=1; stel_token=b', 'garbage', 'stel_ssid=a b; stel_dt=1; stel_token=b; stel_ton_token=c', '=x; stel_ssid=a'])(
    '%j is refused without echoing values',
    (text) => {
      expect(() => parseCookieHeader(text)).toThrow(SessionFormatError);
      try {
        parseCookieHeader(text);
      } catch (error) {
        expect((error as Error).message).not.toMatch(/=a|=b|=c/);
      }
    },
  );
});
