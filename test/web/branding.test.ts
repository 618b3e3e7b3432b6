import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MAX_LOGO_BYTES } from '../../src/domain/brand.js';
import { startBotApi, type TestBotApi } from '../support/bot-api.js';
import { BRAND, type BrandFixtures, brandEnv, brandFixtures, LOGO_SVG, UNBRANDED } from '../support/brand.js';
import { type Harness, startHarness } from '../support/harness.js';
import { pollUntil } from '../support/http.js';
import { startServe } from '../support/serve-process.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';
import { WebClient } from '../support/web.js';

/**
 * Branding over HTTP, on both engines (docs/operations.md "Branding"): with BRAND_* set, no
 * client page's HTML (text, titles, attributes, meta tags), no e-mail and no Telegram message
 * says "Starport"; the logo and the accent are served from our origin, the SVG under a policy
 * that runs no script; the OpenAPI document and /docs carry the name. A failing colour or a bad
 * logo stops `serve` at start-up. test/browser/branding.test.ts crawls the same pages in Chromium.
 */
/** The default name where it appears, with its surroundings; undefined when it does not. */
function unbranded(text: string): string | undefined {
  const found = UNBRANDED.exec(text);
  return found ? text.slice(Math.max(0, found.index - 80), found.index + 80) : undefined;
}

let smtp: TestSmtpServer;
let bot: TestBotApi;
let h: Harness;
let fixtures: BrandFixtures;

beforeAll(async () => {
  smtp = await startSmtpServer();
  bot = await startBotApi();
  h = await startHarness({ ...brandEnv(smtp), TELEGRAM_BOT_TOKEN: bot.token, TELEGRAM_API_URL: bot.url, TELEGRAM_POLL_SECONDS: '1' });
  fixtures = await brandFixtures(h, smtp);
}, 60_000);
afterAll(async () => {
  await h?.close();
  await bot?.close();
  await smtp?.close();
});

describe('a branded installation', () => {
  test('no client page names Starport; each has the brand in its title, the logo, the accent and the links', async () => {
    const { client } = fixtures.owner;
    const anonymous = new WebClient(h);
    // /docs has its own policy (no script at all): test 'the OpenAPI document and /docs carry the name'.
    const pages = [...fixtures.signedOut.filter((url) => url !== '/docs').map((url) => ({ url, as: anonymous })), ...fixtures.signedIn.map((url) => ({ url, as: client }))];
    for (const { url, as } of pages) {
      const page = await as.get(url, { accept: 'text/html' });
      expect(page.status, `${url}: ${page.body.slice(0, 200)}`).toBeLessThan(url === '/no-such-page' ? 500 : 400);
      expect(unbranded(page.body), url).toBeUndefined();
      expect(/<title>([^<]*)<\/title>/.exec(page.body)?.[1], url).toContain(BRAND.name);
      expect(page.body, url).toMatch(/<img class="brand-logo" src="\/assets\/brand-logo\.[0-9a-f]{10}\.svg" alt=""/);
      expect(page.body, url).toMatch(/<link rel="stylesheet" href="\/assets\/brand\.[0-9a-f]{10}\.css">/);
    }
    const signup = await anonymous.get('/signup');
    expect(signup.body).toContain(`<a href="${BRAND.termsUrl}" data-testid="signup-terms">Terms of service</a>`);
    expect(signup.body).toContain(`<a href="${BRAND.privacyUrl}" data-testid="signup-privacy">Privacy policy</a>`);
    for (const page of [signup, await client.get('/test')]) {
      expect(page.body).toContain(`<a href="${BRAND.supportUrl}" data-testid="support-link">Support</a>`);
      expect(page.body).toContain(`<a href="${BRAND.termsUrl}" data-testid="terms-link">Terms</a>`);
      expect(page.body).toContain(`<a href="${BRAND.privacyUrl}" data-testid="privacy-link">Privacy</a>`);
    }
    expect((await client.get('/test/guide')).body).toContain('export ACME_STARS_API_KEY=');
  });

  test('the logo is served from our origin as an image that runs no script; the accent stylesheet sets the colour', async () => {
    const page = (await h.inject({ url: '/login' })).body;
    const logoUrl = /src="(\/assets\/brand-logo\.[0-9a-f]{10}\.svg)"/.exec(page)?.[1] as string;
    const logo = await h.inject({ url: logoUrl });
    expect(logo.statusCode).toBe(200);
    expect(logo.body).toBe(LOGO_SVG);
    expect(logo.headers['content-type']).toBe('image/svg+xml');
    expect(logo.headers['x-content-type-options']).toBe('nosniff');
    expect(logo.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    expect(logo.headers['cache-control']).toContain('immutable');
    const cssUrl = /href="(\/assets\/brand\.[0-9a-f]{10}\.css)"/.exec(page)?.[1] as string;
    const css = await h.inject({ url: cssUrl });
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.body).toContain(`--primary: ${BRAND.color};`);
    expect(css.headers['content-security-policy']).toContain("default-src 'none'");
    expect((await h.inject({ url: '/assets/brand-logo.0000000000.svg', headers: { accept: 'text/html' } })).statusCode).toBe(404);
  });

  test('the OpenAPI document and /docs carry the name', async () => {
    const doc = (await h.inject({ url: '/api/v1/openapi.json' })).json() as { info: { title: string; description: string }; servers: { description: string }[] };
    expect(doc.info.title).toBe('Acme Stars API');
    expect(doc.info.description).toMatch(/^Acme Stars sells Telegram Stars/);
    expect(doc.servers[0]?.description).toBe('This Acme Stars service');
    const docs = (await h.inject({ url: '/docs' })).body;
    expect(docs).toContain('<title>Acme Stars API reference</title>');
    expect(docs).toContain('$ACME_STARS_API_KEY');
    expect(unbranded(docs)).toBeUndefined();
  });

  test('e-mails: branded subjects and bodies, signed with the name and the support contact', async () => {
    expect(fixtures.mails.map((m) => m.subject)).toEqual([
      'Verify your e-mail address for Acme Stars',
      `You are invited to a Acme Stars account`,
      'Reset your Acme Stars password',
    ]);
    for (const mail of fixtures.mails) {
      for (const part of [mail.subject, mail.text, mail.html]) expect(part, mail.subject).not.toMatch(UNBRANDED);
      expect(mail.text, mail.subject).toMatch(/\n-- \nAcme Stars\nSupport: help@acme\.example · https:\/\/acme\.example\/help\n$/);
      expect(mail.html, mail.subject).toContain('<p style="color:#777">Acme Stars<br>Support: help@acme.example · https://acme.example/help</p>');
      expect(mail.parsed.from?.value[0]).toMatchObject({ name: 'Acme Stars', address: 'noreply@acme.example' });
    }
  });

  test('Telegram: the chat link and a test message name the brand', async () => {
    const { client } = fixtures.owner;
    await h.service.db.kysely.updateTable('people').set({ email_unverified_since: null }).where('email', '=', fixtures.owner.email).execute();
    const linked = await client.submit('/account/notifications', {}, '/account/notifications/telegram/link');
    const start = /https:\/\/t\.me\/[A-Za-z0-9_]+\?start=([A-Za-z0-9_-]{20,64})/.exec(linked.body)?.[1] as string;
    expect(start).toBeTruthy();
    const chat = '8880001';
    bot.pushStart(chat, start);
    await pollUntil(
      async () => (await client.get('/account/notifications')).body,
      (body) => body.includes('Linked to'),
      { what: 'the chat linked' },
    );
    await client.submit('/account/notifications', { channel: 'telegram' }, '/account/notifications/test');
    const sent = await pollUntil(
      async () => bot.sent.filter((m) => m.chatId === chat),
      (messages) => messages.some((m) => m.text.includes('test notification')),
      { what: 'the link confirmation and the test message' },
    );
    expect(sent.map((m) => m.text).join('\n')).toContain('This chat now receives your Acme Stars notifications.');
    expect(sent.map((m) => m.text).join('\n')).toContain('<b>Acme Stars test notification</b>');
    for (const message of sent) expect(message.text).not.toMatch(UNBRANDED);
  });
});

describe('start-up refuses a bad brand', () => {
  const refused = async (env: Record<string, string>) => {
    const serve = await startServe({ DATA_DIR: '/nonexistent-brand-test', ...env }).catch((error: Error) => error);
    expect(serve).toBeInstanceOf(Error);
    expect((serve as Error).message).toMatch(/^serve exited \(code [1-9]\d*, signal null\) before listening/);
    return (serve as Error).message;
  };

  test('a colour below 4.5:1, naming the variable and the ratio', async () => {
    const message = await refused({ BRAND_COLOR: '#ffcc00' });
    expect(message).toContain('BRAND_COLOR #ffcc00 has a contrast ratio of 1.');
    expect(message).toMatch(/contrast ratio of 1\.\d\d:1 against .*WCAG AA needs at least 4\.5:1/);
  });

  test('a logo that is not SVG or PNG, or too big', async () => {
    expect(await refused({ BRAND_LOGO_FILE: '/etc/hostname' })).toContain('BRAND_LOGO_FILE must be an SVG or PNG image, "/etc/hostname" is neither');
    const big = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'brand-big-')), 'logo.svg');
    fs.writeFileSync(big, LOGO_SVG.replace('</svg>', `<!--${'x'.repeat(MAX_LOGO_BYTES)}--></svg>`));
    expect(await refused({ BRAND_LOGO_FILE: big })).toContain(`BRAND_LOGO_FILE must be at most 256 KiB, "${big}" has ${fs.statSync(big).size} bytes`);
  });
});
