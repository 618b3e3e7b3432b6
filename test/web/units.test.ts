import { describe, expect, test } from 'vitest';
import { derivedMemo, MEMO_PATTERN } from '../../src/accounts/deposit-memo.js';
import { passwordProblem } from '../../src/accounts/passwords.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { depositAddressForm, TonAddressError } from '../../src/domain/ton-address.js';
import { html, trustedHtml } from '../../src/http/html/html.js';
import { safeNext } from '../../src/http/html/http.js';
import { decodeCursor, encodeCursor } from '../../src/http/web/order-list.js';
import { parseAmountInput, qrSvg, transferLink } from '../../src/ton/transfer-link.js';

/** The dashboard's pure pieces (no database). */
describe('html escaping', () => {
  test('every interpolated value is escaped unless it is Html', () => {
    const evil = `<script>alert("x")</script>&'`;
    expect(html`<p title="${evil}">${evil}</p>`.text).toBe(
      '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</p>',
    );
    expect(html`<ul>${['<a>', html`<li>ok</li>`]}</ul>`.text).toBe('<ul>&lt;a&gt;<li>ok</li></ul>');
    expect(html`${null}${undefined}${false}${true}${0}${12n}`.text).toBe('012');
    expect(html`${trustedHtml('<svg/>')}`.text).toBe('<svg/>');
  });
});

describe('deposit address (published vectors of ton-org/ton-core and ton-org/docs)', () => {
  test('raw and user-friendly forms become user-friendly, URL-safe, non-bounceable', () => {
    const nonBounceable = 'UQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi41-E';
    for (const input of [
      '0:2cf55953e92efbeadab7ba725c3f93a0b23f842cbba72d7b8e6f510a70e422e3',
      '0:2CF55953E92EFBEADAB7BA725C3F93A0B23F842CBBA72D7B8E6F510A70E422E3',
      'EQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi4wJB',
      'EQAs9VlT6S776tq3unJcP5Ogsj+ELLunLXuOb1EKcOQi4wJB',
      nonBounceable,
      `  ${nonBounceable}\n`,
    ]) {
      expect(depositAddressForm(input), input).toBe(nonBounceable);
    }
    expect(depositAddressForm('EQDKbjIcfM6ezt8KjKJJLshZJJSqX7XOA4ff-W72r5gqPrHF')).toBe('UQDKbjIcfM6ezt8KjKJJLshZJJSqX7XOA4ff-W72r5gqPuwA');
    // A testnet-only address keeps its flag: 0Q….
    expect(depositAddressForm('kQDKbjIcfM6ezt8KjKJJLshZJJSqX7XOA4ff-W72r5gqPgpP')).toBe('0QDKbjIcfM6ezt8KjKJJLshZJJSqX7XOA4ff-W72r5gqPleK');
  });

  test('anything else is refused', () => {
    for (const bad of [
      '',
      'hello',
      '0:2cf55953e92efbeadab7ba725c3f93a0b23f842cbba72d7b8e6f510a70e422e',
      'EQDKbjIcfM6ezt8KjKJJLshZJJSqX7XOA4ff-W72r5gqPrHG',
      'xQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi4wJB',
    ]) {
      expect(() => depositAddressForm(bad), bad).toThrow(TonAddressError);
    }
  });
});

describe('config', () => {
  test('SIGNUP defaults to open and accepts only open or closed', () => {
    expect(loadConfig({}).signup).toBe('open');
    expect(loadConfig({ SIGNUP: '' }).signup).toBe('open');
    expect(loadConfig({ SIGNUP: 'closed' }).signup).toBe('closed');
    expect(() => loadConfig({ SIGNUP: 'no' })).toThrow(ConfigError);
  });

  test('DEPOSIT_ADDRESS is optional, validated and normalised', () => {
    expect(loadConfig({}).depositAddress).toBeUndefined();
    expect(loadConfig({ DEPOSIT_ADDRESS: 'EQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi4wJB' }).depositAddress).toBe('UQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi41-E');
    expect(() => loadConfig({ DEPOSIT_ADDRESS: 'not an address' })).toThrow(/DEPOSIT_ADDRESS must be a TON address/);
  });
});

describe('top-up link', () => {
  test('ton://transfer with the amount in nanotons and the memo as text', () => {
    expect(transferLink('UQabc', 'ABCDEFGH23', 12_500_000_000n)).toBe('ton://transfer/UQabc?amount=12500000000&text=ABCDEFGH23');
    expect(transferLink('UQabc', 'ABCDEFGH23', undefined)).toBe('ton://transfer/UQabc?text=ABCDEFGH23');
    expect(transferLink('UQabc', 'a b+c', 1n)).toBe('ton://transfer/UQabc?amount=1&text=a%20b%2Bc');
  });

  test('amount input: empty is allowed, otherwise a positive TON decimal of at most 9 places', () => {
    expect(parseAmountInput('')).toEqual({ ok: true, nanotons: undefined });
    expect(parseAmountInput(' 1.5 ')).toEqual({ ok: true, nanotons: 1_500_000_000n });
    expect(parseAmountInput('2,5')).toEqual({ ok: true, nanotons: 2_500_000_000n });
    expect(parseAmountInput('0.000000001')).toEqual({ ok: true, nanotons: 1n });
    for (const bad of ['0', '-1', '1e3', 'abc', '1.0000000001', '1000001', 'Infinity', '0x10']) expect(parseAmountInput(bad).ok, bad).toBe(false);
    expect(parseAmountInput('10001', 10_000n).ok).toBe(false);
  });

  test('the QR code is an SVG rendered here', async () => {
    const svg = await qrSvg('ton://transfer/UQabc?amount=1&text=X');
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"[^>]*viewBox/);
    expect(svg).not.toMatch(/style=|<script|href=/);
  });
});

describe('memo, cursor, passwords, next', () => {
  test('the memo is ten unambiguous characters and a check character, stable per account and different between accounts', () => {
    expect(derivedMemo('acct_1')).toMatch(MEMO_PATTERN);
    expect(derivedMemo('acct_1')).toBe(derivedMemo('acct_1'));
    const memos = new Set(Array.from({ length: 1000 }, (_, i) => derivedMemo(`acct_${i}`)));
    expect(memos.size).toBe(1000);
  });

  test('cursors round-trip and garbage is refused', () => {
    expect(decodeCursor(encodeCursor({ createdAt: 1_795_000_000_123, id: 'ord_abcDEF123' }))).toEqual({ createdAt: 1_795_000_000_123, id: 'ord_abcDEF123' });
    for (const bad of ['', 'x', '1.2', '12.ord_', "1.ord_a'--", '1.ord_a.b']) expect(decodeCursor(bad), bad).toBeUndefined();
  });

  test('password rules', () => {
    expect(passwordProblem('123456789')).toMatch(/at least 10/);
    expect(passwordProblem('          ')).toMatch(/only spaces/);
    expect(passwordProblem('x'.repeat(257))).toMatch(/at most 256/);
    expect(passwordProblem('ünïcödé pässwörd')).toBeUndefined();
  });

  test('login redirects stay on this site', () => {
    expect(safeNext('/test/orders?status=failed')).toBe('/test/orders?status=failed');
    for (const bad of ['', '//evil', '/\\evil', 'https://evil', 'evil', '/login', '/a\nb']) expect(safeNext(bad), bad).toBe('/');
  });
});

describe('TON config', () => {
  test('TON_NETWORK picks the API default and the address form; mismatches and bad values are refused', () => {
    const mainnet = loadConfig({ DEPOSIT_ADDRESS: '0:2cf55953e92efbeadab7ba725c3f93a0b23f842cbba72d7b8e6f510a70e422e3' });
    expect(mainnet).toMatchObject({
      tonNetwork: 'mainnet',
      tonApiUrl: 'https://toncenter.com/api/v2',
      depositAddress: 'UQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi41-E',
      depositMinNanotons: 100_000_000n,
      depositPollMs: 5000,
    });
    const testnet = loadConfig({ TON_NETWORK: 'testnet', DEPOSIT_ADDRESS: 'EQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi4wJB' });
    expect(testnet).toMatchObject({ tonApiUrl: 'https://testnet.toncenter.com/api/v2', depositAddress: '0QAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi4-QO' });
    expect(() => loadConfig({ DEPOSIT_ADDRESS: 'kQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi47nL' })).toThrow(/testnet-only address but TON_NETWORK is mainnet/);
    expect(loadConfig({ TON_API_URL: 'http://127.0.0.1:8081/api/v2/', DEPOSIT_MIN_TON: '0.000000001', DEPOSIT_POLL_MS: '250', TON_API_KEY: 'k' })).toMatchObject({
      tonApiUrl: 'http://127.0.0.1:8081/api/v2',
      depositMinNanotons: 1n,
      depositPollMs: 250,
      tonApiKey: 'k',
    });
    expect(() => loadConfig({ TON_NETWORK: 'devnet' })).toThrow(/TON_NETWORK must be mainnet or testnet/);
    expect(() => loadConfig({ TON_API_URL: 'toncenter.com' })).toThrow(/TON_API_URL/);
    expect(() => loadConfig({ TON_API_URL: 'https://user:pw@toncenter.com/api/v2' })).toThrow(/TON_API_KEY/);
    expect(() => loadConfig({ DEPOSIT_MIN_TON: '0.0000000001' })).toThrow(/DEPOSIT_MIN_TON/);
    expect(() => loadConfig({ DEPOSIT_MIN_TON: '-1' })).toThrow(/DEPOSIT_MIN_TON/);
    expect(() => loadConfig({ DEPOSIT_POLL_MS: '10' })).toThrow(/DEPOSIT_POLL_MS/);
  });
});
