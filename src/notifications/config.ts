/**
 * Notification settings (docs/operations.md "Notifications"): the SMTP server and sender, the
 * Telegram bot, the operator's addresses, and the incident, retry and send timings.
 */
import fs from 'node:fs';
import { ConfigError, type Env, httpUrl, integer, millisecondList, tonAmount } from '../env.js';

export interface SmtpConfig {
  /** SMTP_URL without its password (safe to print). */
  display: string;
  host: string;
  port: number;
  /** smtps:// (TLS from the first byte); smtp:// upgrades with STARTTLS when offered. */
  secure: boolean;
  user: string | undefined;
  /** From the URL or SMTP_PASSWORD_FILE; never logged. */
  password: string | undefined;
}

export interface TelegramConfig {
  /** TELEGRAM_BOT_TOKEN; never logged. */
  token: string;
  /** TELEGRAM_API_URL: the Bot API's origin (default https://api.telegram.org). */
  apiUrl: string;
  /** TELEGRAM_WEBHOOK_SECRET: set = updates come by setWebhook to PUBLIC_URL, not by getUpdates. */
  webhookSecret: string | undefined;
  /** TELEGRAM_POLL_SECONDS: getUpdates' long-poll timeout. */
  pollSeconds: number;
}

export interface NotificationConfig {
  /** SMTP_URL; undefined = e-mails are kept in the database (`starport mail list`). */
  smtp: SmtpConfig | undefined;
  /** MAIL_FROM: the From header. */
  mailFrom: string;
  /** TELEGRAM_BOT_TOKEN and its companions; undefined = no Telegram. */
  telegram: TelegramConfig | undefined;
  /** OPERATOR_EMAILS: where operator alerts are mailed. */
  operatorEmails: string[];
  /** NOTIFY_REMINDER_SECONDS: a reminder while an incident lasts, at most this often (default 30 min). */
  reminderMs: number;
  /** NOTIFY_WATCHER_STALL_SECONDS: the deposit watcher without a successful poll this long is an incident. */
  watcherStallMs: number;
  /** NOTIFY_WALLET_LOW_TON (nanotons; 0 = off): the paying wallet's spendable TON below this is an incident. */
  walletLowNanotons: bigint;
  /** NOTIFY_WALLET_LOW_ORDERS (0 = off): … or below this many orders of the size being paid. */
  walletLowOrders: number;
  /** NOTIFY_RETRY_DELAYS_MS: waits after each failed attempt; the last repeats (a notification is never dropped). */
  retryDelaysMs: number[];
  /** NOTIFY_SEND_TIMEOUT_MS: one attempt, connection to answer. */
  sendTimeoutMs: number;
}

const TELEGRAM_API_DEFAULT = 'https://api.telegram.org';

export function notificationConfig(env: Env): NotificationConfig {
  const smtp = smtpConfig(env);
  const mailFrom = (env.MAIL_FROM ?? '').trim();
  if (smtp && mailFrom === '') throw new ConfigError('MAIL_FROM must be set when SMTP_URL is (the From address, such as "Starport <starport@example.com>")');
  if (/[\r\n]/.test(mailFrom) || (mailFrom !== '' && !/@/.test(mailFrom))) throw new ConfigError(`MAIL_FROM must be one e-mail address, optionally with a name, got "${mailFrom}"`);
  const operatorEmails = (env.OPERATOR_EMAILS ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  for (const address of operatorEmails) {
    if (address.length > 254 || !/^[^\s@<>]+@[^\s@<>]+$/.test(address)) throw new ConfigError(`OPERATOR_EMAILS must be comma-separated e-mail addresses; "${address}" is not one`);
  }
  return {
    smtp,
    mailFrom: mailFrom || 'Starport <starport@localhost>',
    telegram: telegramConfig(env),
    operatorEmails,
    reminderMs: integer(env, 'NOTIFY_REMINDER_SECONDS', 1800, 1, 7 * 86_400) * 1000,
    watcherStallMs: integer(env, 'NOTIFY_WATCHER_STALL_SECONDS', 300, 1, 7 * 86_400) * 1000,
    walletLowNanotons: tonAmount(env, 'NOTIFY_WALLET_LOW_TON', '0'),
    walletLowOrders: integer(env, 'NOTIFY_WALLET_LOW_ORDERS', 5, 0, 10_000),
    retryDelaysMs: millisecondList(env, 'NOTIFY_RETRY_DELAYS_MS', [5_000, 30_000, 120_000, 600_000, 1_800_000]),
    sendTimeoutMs: integer(env, 'NOTIFY_SEND_TIMEOUT_MS', 30_000, 100, 300_000),
  };
}

function smtpConfig(env: Env): SmtpConfig | undefined {
  const raw = env.SMTP_URL;
  if (!raw) {
    if (env.SMTP_PASSWORD_FILE) throw new ConfigError('SMTP_PASSWORD_FILE is set but SMTP_URL is not');
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('SMTP_URL must be a URL such as smtps://user@mail.example.com:465 (the value is not shown: it may hold a password)');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new ConfigError(`SMTP_URL must start with smtp:// or smtps://, got "${url.protocol}//…"`);
  if (!url.hostname) throw new ConfigError('SMTP_URL must name the SMTP server, as in smtp://mail.example.com:587');
  if ((url.pathname !== '' && url.pathname !== '/') || url.search || url.hash)
    throw new ConfigError('SMTP_URL must be smtp(s)://[user[:password]@]host[:port], without a path or query');
  const secure = url.protocol === 'smtps:';
  let password = url.password ? decodeURIComponent(url.password) : undefined;
  const file = env.SMTP_PASSWORD_FILE;
  if (file) {
    if (password !== undefined) throw new ConfigError('SMTP_URL holds a password and SMTP_PASSWORD_FILE is set too: keep one');
    try {
      password = fs.readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (error) {
      throw new ConfigError(`SMTP_PASSWORD_FILE cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)} (${file})`);
    }
  }
  const user = url.username ? decodeURIComponent(url.username) : undefined;
  const port = url.port ? Number(url.port) : secure ? 465 : 587;
  const display = `${url.protocol}//${user ? `${encodeURIComponent(user)}@` : ''}${url.host}`;
  return { display, host: url.hostname.replace(/^\[|\]$/g, ''), port, secure, user, password };
}

function telegramConfig(env: Env): TelegramConfig | undefined {
  const token = env.TELEGRAM_BOT_TOKEN?.trim();
  if (!token) {
    if (env.TELEGRAM_WEBHOOK_SECRET) throw new ConfigError('TELEGRAM_WEBHOOK_SECRET is set but TELEGRAM_BOT_TOKEN is not');
    return undefined;
  }
  // The shape BotFather gives: the bot's id, a colon, 35 characters. The value is not echoed.
  if (!/^\d{1,20}:[A-Za-z0-9_-]{20,100}$/.test(token))
    throw new ConfigError('TELEGRAM_BOT_TOKEN must be a bot token as BotFather gives it (123456789:AA…); the value is not shown');
  const apiUrl = httpUrl(env, 'TELEGRAM_API_URL', TELEGRAM_API_DEFAULT) as string;
  const webhookSecret = env.TELEGRAM_WEBHOOK_SECRET || undefined;
  if (webhookSecret !== undefined && !/^[A-Za-z0-9_-]{16,256}$/.test(webhookSecret)) {
    throw new ConfigError('TELEGRAM_WEBHOOK_SECRET must be 16 to 256 characters of A-Z, a-z, 0-9, _ and - (Telegram sends it back in a header)');
  }
  return { token, apiUrl, webhookSecret, pollSeconds: integer(env, 'TELEGRAM_POLL_SECONDS', 25, 0, 50) };
}
