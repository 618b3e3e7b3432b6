import { loadConfig } from '../../config.js';
import { createLogger } from '../../logger.js';
import { openIncidents } from '../../notifications/incidents.js';
import { enqueueMail, enqueueTelegram, isMailAddress, listMails, type NotificationRow, outboxStatus, readNotification } from '../../notifications/outbox.js';
import { SmtpTransport } from '../../notifications/smtp.js';
import { createLinkToken, deepLink, linkedChat, OPERATOR_OWNER } from '../../notifications/telegram-links.js';
import { TelegramBot } from '../../notifications/telegram.js';
import { NotificationWorker } from '../../notifications/worker.js';
import type { Db } from '../../db/engine.js';
import { type Command, UsageError } from '../command.js';
import { withDatabase } from '../database.js';
import { limitOf, operatorCommand, positional, refuse, table, time } from '../operator.js';

/**
 * E-mail and Telegram for the operator (docs/operations.md "Notifications"): the e-mails the
 * service wrote (without SMTP_URL they are kept here, the one-machine fallback), a test per
 * channel, the operator's Telegram chat, and the outbox's state.
 */

function mailJson(row: NotificationRow, whole: boolean) {
  return {
    id: row.id,
    to: row.recipient,
    subject: row.subject,
    topic: row.topic,
    status: row.status,
    attempts: Number(row.attempts),
    last_error: row.last_error,
    created_at: time(Number(row.created_at)),
    sent_at: time(row.sent_at === null ? null : Number(row.sent_at)),
    ...(whole && { text: row.body_text, html: row.body_html }),
  };
}

export const mailList: Command = operatorCommand({
  path: ['mail', 'list'],
  summary: 'List the e-mails the service wrote, newest first (one-time links redacted)',
  usage:
    'starport mail list [--to ADDRESS] [--limit N (50)] [--json]\n\n' +
    'Statuses: pending (waiting or being retried), sent, kept (no SMTP_URL: read it with mail show), failed (refused for good).\n' +
    'One-time links show as [redacted]; starport mail show ID prints the whole message.',
  options: { to: { type: 'string' }, limit: { type: 'string' } },
  async run(values, io) {
    const rows = await withDatabase((db) => listMails(db.kysely, { limit: limitOf(values, 50), to: typeof values.to === 'string' ? values.to : undefined }));
    io.result(
      { mails: rows.map((r) => mailJson(r, false)) },
      rows.length === 0
        ? 'no e-mails'
        : table(
            ['ID', 'CREATED', 'STATUS', 'TO', 'SUBJECT'],
            rows.map((r) => [r.id, time(Number(r.created_at)), r.status, r.recipient, r.subject]),
          ),
    );
    return 0;
  },
});

export const mailShow: Command = operatorCommand({
  path: ['mail', 'show'],
  summary: 'Print one e-mail whole, one-time links included',
  usage: 'starport mail show ID [--html] [--json]\n\nPrints the plain-text part (--html: the HTML part). It may hold a one-time link: hand it only to its recipient.',
  options: { html: { type: 'boolean' } },
  positionals: ['id'],
  async run(values, io) {
    const id = positional(values, 'id', 'ID');
    const row = await withDatabase((db) => readNotification(db.kysely, id));
    if (row?.channel !== 'email') return refuse(io, `no e-mail ${id}`);
    io.result(
      mailJson(row, true),
      `To: ${row.recipient}\nSubject: ${row.subject}\nStatus: ${row.status}${row.last_error ? ` (${row.last_error})` : ''}\nCreated: ${time(Number(row.created_at))}\n\n${values.html ? (row.body_html ?? '') : row.body_text}`,
    );
    return 0;
  },
});

/** Sends one notification now from the CLI, through the same code as the worker. */
async function sendNow(db: Db, id: string): Promise<NotificationRow | undefined> {
  const { notifications, brand } = loadConfig();
  const worker = new NotificationWorker({
    db,
    brand,
    logger: createLogger('silent'),
    config: notifications,
    mail: notifications.smtp ? new SmtpTransport(notifications.smtp, notifications.mailFrom, notifications.sendTimeoutMs) : undefined,
    telegram: notifications.telegram ? new TelegramBot(notifications.telegram.apiUrl, notifications.telegram.token) : undefined,
    depositAddress: undefined,
  });
  await worker.sendOne(id);
  return readNotification(db.kysely, id);
}

export const notifyTest: Command = operatorCommand({
  path: ['notify', 'test'],
  summary: 'Send a test e-mail (--email ADDRESS) or a test message to the operator’s Telegram chat (--telegram)',
  usage:
    'starport notify test --email ADDRESS | --telegram [--json]\n\n' +
    'Sends at once and prints the outcome (the server’s answer when it refused). Without SMTP_URL the e-mail is\n' +
    'kept: starport mail list shows it. Exit 1 when the channel refused it.',
  options: { email: { type: 'string' }, telegram: { type: 'boolean' } },
  async run(values, io) {
    const email = values.email;
    if ((email === undefined) === !values.telegram) throw new UsageError('give either --email ADDRESS or --telegram');
    if (typeof email === 'string' && !isMailAddress(email)) throw new UsageError(`--email must be one e-mail address, got "${email}"`);
    const message = { subject: 'Starport test notification', parts: ['This is a test from starport notify test. The channel works.'] };
    const row = await withDatabase(async (db) => {
      let id: string;
      if (typeof email === 'string') id = await db.kysely.transaction().execute((tx) => enqueueMail(tx, { to: email, message, topic: 'test' }));
      else {
        if (!loadConfig().notifications.telegram) throw new UsageError('TELEGRAM_BOT_TOKEN is not set');
        const chat = await linkedChat(db.kysely, OPERATOR_OWNER);
        if (!chat || chat.blockedAt) throw new UsageError('no operator chat is linked (or the bot was blocked there): run starport notify link-telegram');
        id = await db.kysely.transaction().execute((tx) => enqueueTelegram(tx, { chatId: chat.chatId, message, topic: 'test' }));
      }
      return sendNow(db, id);
    });
    if (!row) return refuse(io, 'the test notification disappeared');
    const ok = row.status === 'sent' || row.status === 'kept';
    const text =
      row.status === 'kept'
        ? `kept ${row.id} (no SMTP_URL): starport mail show ${row.id}`
        : ok
          ? `sent ${row.id}`
          : `not sent: ${row.last_error ?? 'unknown error'} (${row.status === 'pending' ? 'the worker retries it' : 'given up'})`;
    io.result({ ok, id: row.id, status: row.status, error: row.last_error }, text);
    return ok ? 0 : 1;
  },
});

export const notifyLinkTelegram: Command = operatorCommand({
  path: ['notify', 'link-telegram'],
  summary: 'Print a one-time link that makes a Telegram chat receive the operator’s alerts',
  usage:
    'starport notify link-telegram [--json]\n\n' +
    'Open the link in Telegram (in the chat or group that should get the alerts) and press Start. A running worker\n' +
    'receives it and links the chat; the link works once, for 15 minutes. A new link replaces the chat linked before.',
  options: {},
  async run(_values, io) {
    const { telegram } = loadConfig().notifications;
    if (!telegram) throw new UsageError('TELEGRAM_BOT_TOKEN is not set');
    const bot = new TelegramBot(telegram.apiUrl, telegram.token);
    const username = await bot.botUsername().catch((error: unknown) => {
      throw new UsageError(`the Bot API did not answer getMe: ${(error as Error).message}`);
    });
    const { token, expiresAt } = await withDatabase((db) => createLinkToken(db.kysely, OPERATOR_OWNER));
    const url = deepLink(username, token);
    io.result({ url, expires_at: time(expiresAt) }, `Open this link in Telegram and press Start (works once, until ${time(expiresAt)}):\n${url}`);
    return 0;
  },
});

export const notifyStatus: Command = operatorCommand({
  path: ['notify', 'status'],
  summary: 'Show the notification channels configured, the backlog, the last failure and open incidents',
  usage: 'starport notify status [--json]',
  options: {},
  async run(_values, io) {
    const { notifications } = loadConfig();
    const { status, chat, incidents } = await withDatabase(async (db) => ({
      status: await outboxStatus(db.kysely),
      chat: await linkedChat(db.kysely, OPERATOR_OWNER),
      incidents: await openIncidents(db.kysely),
    }));
    const document = {
      email: { smtp: notifications.smtp?.display ?? null, from: notifications.mailFrom, operator_emails: notifications.operatorEmails },
      telegram: {
        configured: notifications.telegram !== undefined,
        api_url: notifications.telegram?.apiUrl ?? null,
        updates: notifications.telegram ? (notifications.telegram.webhookSecret ? 'webhook' : 'getUpdates') : null,
        operator_chat: chat ? { title: chat.title, linked_at: time(chat.linkedAt), blocked_at: time(chat.blockedAt) } : null,
      },
      backlog: status.backlog,
      sent: status.sent,
      last_failure: status.lastFailure
        ? { id: status.lastFailure.id, channel: status.lastFailure.channel, error: status.lastFailure.error, at: time(status.lastFailure.at) }
        : null,
      open_incidents: incidents.map((i) => ({ key: i.key, title: i.title, opened_at: time(i.openedAt) })),
    };
    const lines = [
      `e-mail:    ${notifications.smtp ? `SMTP ${notifications.smtp.display}` : 'no SMTP_URL: e-mails are kept (starport mail list)'}; operator: ${notifications.operatorEmails.join(', ') || 'none (OPERATOR_EMAILS)'}`,
      `telegram:  ${notifications.telegram ? `on (${document.telegram.updates}); operator chat: ${chat ? (chat.blockedAt ? 'blocked the bot' : (chat.title ?? 'linked')) : 'none (starport notify link-telegram)'}` : 'off (TELEGRAM_BOT_TOKEN)'}`,
      `backlog:   e-mail ${status.backlog.email}, telegram ${status.backlog.telegram}, operator ${status.backlog.operator}`,
      `sent:      e-mail ${status.sent.email}, telegram ${status.sent.telegram}`,
      `last failure: ${document.last_failure ? `${document.last_failure.at} ${document.last_failure.channel} ${document.last_failure.id}: ${document.last_failure.error}` : 'none'}`,
      `incidents: ${incidents.length === 0 ? 'none open' : incidents.map((i) => `${i.title} (since ${time(i.openedAt)})`).join('; ')}`,
    ];
    io.result(document, lines.join('\n'));
    return 0;
  },
});
