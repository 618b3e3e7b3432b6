import { afterAll, beforeAll, expect, test } from 'vitest';
import { enqueueMail, enqueueTelegram, type NotificationRow } from '../../src/notifications/outbox.js';
import { startBotApi, type TestBotApi } from '../support/bot-api.js';
import { type Harness, startHarness } from '../support/harness.js';
import { pollUntil } from '../support/http.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';
import { startTcpFaultProxy, type TcpFaultProxy } from '../support/tcp-fault-proxy.js';

/**
 * Peers that hang (docs/operations.md "Notifications", NOTIFY_SEND_TIMEOUT_MS): an SMTP server
 * that accepts the connection and never says a word (a TCP proxy holding it, as a network
 * partition does), an SMTP connection cut while the server holds its answer to the message,
 * and a Bot API that takes sendMessage and never answers. Each attempt ends at the deadline or
 * the cut, is retried, and once the peer answers again the message arrives once.
 */

const SEND_TIMEOUT_MS = 500;
let h: Harness;
let smtp: TestSmtpServer;
let proxy: TcpFaultProxy;
let bot: TestBotApi;

beforeAll(async () => {
  [smtp, bot] = await Promise.all([startSmtpServer(), startBotApi()]);
  proxy = await startTcpFaultProxy(smtp.port);
  h = await startHarness({
    SMTP_URL: `smtp://127.0.0.1:${proxy.port}`,
    MAIL_FROM: 'Starport <noreply@example.com>',
    TELEGRAM_BOT_TOKEN: bot.token,
    TELEGRAM_API_URL: bot.url,
    NOTIFY_SEND_TIMEOUT_MS: String(SEND_TIMEOUT_MS),
    NOTIFY_RETRY_DELAYS_MS: '100',
  });
});
afterAll(async () => {
  await h?.close();
  await proxy?.close();
  await Promise.all([smtp?.close(), bot?.close()]);
});

const db = () => h.service.db.kysely;
const notification = (id: string): Promise<NotificationRow> => db().selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

test('an SMTP server that never answers: each attempt ends at the deadline; the mail arrives once it answers', async () => {
  await proxy.setMode('partition');
  const to = `hung-${Date.now()}@example.com`;
  const id = await db()
    .transaction()
    .execute((tx) => enqueueMail(tx, { to, message: { subject: 'Through a hang', parts: ['hello'] } }));
  const hung = await pollUntil(
    () => notification(id),
    (row) => Number(row.attempts) >= 2 && row.last_error !== null,
    { what: 'two attempts ended by the deadline', timeoutMs: 20_000 },
  );
  expect(hung.status).toBe('pending');
  expect(hung.last_error).toMatch(/time/i);
  expect(smtp.dataCount).toBe(0);
  await proxy.setMode('pass');
  await pollUntil(
    () => notification(id),
    (row) => row.status === 'sent',
    { what: 'the mail sent', timeoutMs: 20_000 },
  );
  expect(smtp.mails.filter((m) => m.to.includes(to))).toHaveLength(1);
});

test('an SMTP connection cut mid-message: retried, and accepted once', async () => {
  smtp.hold = true;
  const held = new Promise<void>((resolve) => {
    smtp.onHeld = resolve;
  });
  const to = `cut-${Date.now()}@example.com`;
  const id = await db()
    .transaction()
    .execute((tx) => enqueueMail(tx, { to, message: { subject: 'Through a cut', parts: ['hello'] } }));
  await held;
  smtp.hold = false;
  smtp.onHeld = undefined;
  // The message's bytes reached the server, which had not answered yet: the connection dies.
  proxy.resetAll();
  const row = await pollUntil(
    () => notification(id),
    (r) => r.status === 'sent',
    { what: 'the mail sent again', timeoutMs: 20_000 },
  );
  expect(Number(row.attempts)).toBe(2);
  // Only the retry was accepted (the held answer never came: a server that delivers it anyway
  // makes the one duplicate docs/operations.md allows).
  expect(smtp.mails.filter((m) => m.to.includes(to))).toHaveLength(1);
});

test('a Bot API that takes sendMessage and never answers: retried at the deadline, sent once it answers', async () => {
  bot.hold = true;
  const chatId = '7770001';
  const id = await db()
    .transaction()
    .execute((tx) => enqueueTelegram(tx, { chatId, message: { subject: 'Through a hang', parts: ['hello'] } }));
  const hung = await pollUntil(
    () => notification(id),
    (row) => Number(row.attempts) >= 2 && row.last_error !== null,
    { what: 'two attempts ended by the deadline', timeoutMs: 20_000 },
  );
  expect(hung.status).toBe('pending');
  expect(hung.last_error).toMatch(new RegExp(`no answer within ${SEND_TIMEOUT_MS} ms`));
  expect(bot.sendCalls).toBeGreaterThanOrEqual(2);
  bot.hold = false;
  await pollUntil(
    () => notification(id),
    (row) => row.status === 'sent',
    { what: 'the message sent', timeoutMs: 20_000 },
  );
  expect(bot.sent.filter((m) => m.chatId === chatId)).toHaveLength(1);
  // Nothing else was left in the outbox by the hangs.
  expect(await db().selectFrom('notifications').select('id').where('status', '=', 'pending').execute()).toEqual([]);
});
