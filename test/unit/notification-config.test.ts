import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const TOKEN = '123456789:AAHtestTOKENtestTOKENtestTOKENtest12';

describe('notification configuration', () => {
  test('defaults: no SMTP (mails kept), no Telegram, a reminder every 30 min, a 5 min watcher stall', () => {
    const { notifications } = loadConfig({});
    expect(notifications).toMatchObject({
      smtp: undefined,
      telegram: undefined,
      operatorEmails: [],
      reminderMs: 1_800_000,
      watcherStallMs: 300_000,
      walletLowNanotons: 0n,
      walletLowOrders: 5,
      sendTimeoutMs: 30_000,
    });
  });

  test('SMTP_URL: smtps with credentials, smtp with the default port, a password from a file', () => {
    const secure = loadConfig({ SMTP_URL: 'smtps://mailer%40example.com:p%3Ass@mail.example.com', MAIL_FROM: 'Starport <ops@example.com>' }).notifications.smtp;
    expect(secure).toEqual({
      display: 'smtps://mailer%40example.com@mail.example.com',
      host: 'mail.example.com',
      port: 465,
      secure: true,
      user: 'mailer@example.com',
      password: 'p:ss',
    });
    const plain = loadConfig({ SMTP_URL: 'smtp://mail.example.com', MAIL_FROM: 'ops@example.com' }).notifications.smtp;
    expect(plain).toMatchObject({ port: 587, secure: false, user: undefined, password: undefined });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'smtp-pass-'));
    try {
      const file = path.join(dir, 'password');
      fs.writeFileSync(file, 'from-file\n');
      expect(loadConfig({ SMTP_URL: 'smtp://u@mail.example.com:2525', SMTP_PASSWORD_FILE: file, MAIL_FROM: 'a@example.com' }).notifications.smtp).toMatchObject({
        port: 2525,
        user: 'u',
        password: 'from-file',
      });
      expect(() => loadConfig({ SMTP_URL: 'smtp://u:x@mail.example.com', SMTP_PASSWORD_FILE: file, MAIL_FROM: 'a@example.com' })).toThrow(/keep one/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    expect(() => loadConfig({ SMTP_URL: 'smtp://mail.example.com', SMTP_PASSWORD_FILE: '/nonexistent/file', MAIL_FROM: 'a@example.com' })).toThrow(
      /^SMTP_PASSWORD_FILE cannot be read/,
    );
  });

  test('bad values name their variable and never echo a secret', () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ SMTP_URL: 'mail.example.com:25' }, /^SMTP_URL must/],
      [{ SMTP_URL: 'https://u:secret@mail.example.com' }, /^SMTP_URL must start with smtp:\/\/ or smtps:\/\//],
      [{ SMTP_URL: 'smtp://mail.example.com/path' }, /^SMTP_URL must be smtp\(s\):\/\//],
      [{ SMTP_URL: 'smtp://mail.example.com' }, /^MAIL_FROM must be set/],
      [{ MAIL_FROM: 'a@example.com\r\nBcc: x@example.com' }, /^MAIL_FROM must be one e-mail address/],
      [{ OPERATOR_EMAILS: 'ops@example.com, not an address' }, /^OPERATOR_EMAILS must be comma-separated e-mail addresses/],
      [{ TELEGRAM_BOT_TOKEN: 'secret-token' }, /^TELEGRAM_BOT_TOKEN must be a bot token/],
      [{ TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_API_URL: 'ftp://x' }, /^TELEGRAM_API_URL must be an http\(s\) URL/],
      [{ TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_WEBHOOK_SECRET: 'short' }, /^TELEGRAM_WEBHOOK_SECRET must be 16 to 256 characters/],
      [{ TELEGRAM_WEBHOOK_SECRET: 'a'.repeat(20) }, /^TELEGRAM_WEBHOOK_SECRET is set but TELEGRAM_BOT_TOKEN is not/],
      [{ NOTIFY_REMINDER_SECONDS: '0' }, /^NOTIFY_REMINDER_SECONDS must be an integer/],
      [{ NOTIFY_RETRY_DELAYS_MS: '5s' }, /^NOTIFY_RETRY_DELAYS_MS must be/],
    ];
    for (const [env, message] of cases) {
      let error: unknown;
      try {
        loadConfig(env);
      } catch (caught) {
        error = caught;
      }
      expect(error, JSON.stringify(env)).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).not.toMatch(/secret/);
    }
  });

  test('Telegram: the token, the default Bot API, getUpdates unless a webhook secret is set', () => {
    expect(loadConfig({ TELEGRAM_BOT_TOKEN: TOKEN }).notifications.telegram).toEqual({
      token: TOKEN,
      apiUrl: 'https://api.telegram.org',
      webhookSecret: undefined,
      pollSeconds: 25,
    });
    expect(
      loadConfig({ TELEGRAM_BOT_TOKEN: TOKEN, TELEGRAM_API_URL: 'http://127.0.0.1:8081/', TELEGRAM_WEBHOOK_SECRET: 'abcdefghijklmnop_-' }).notifications.telegram,
    ).toMatchObject({
      apiUrl: 'http://127.0.0.1:8081',
      webhookSecret: 'abcdefghijklmnop_-',
    });
  });
});
