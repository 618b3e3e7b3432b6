import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { CircuitBreaker } from '../../src/live/breaker.js';
import { createLogger } from '../../src/logger.js';
import { createLinkToken, OPERATOR_OWNER } from '../../src/notifications/telegram-links.js';
import { enqueueTelegram } from '../../src/notifications/outbox.js';
import { type FreshDatabase, freshDatabase } from '../support/database.js';
import { pollUntil } from '../support/http.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';
import { startBotApi, type TestBotApi } from '../support/bot-api.js';
import { type ServeProcess, startServe } from '../support/serve-process.js';

/**
 * The operator is told, by e-mail and in a Telegram chat linked with a one-time deep link,
 * once per incident however many nodes see it: three `serve` processes share one database
 * (both engines) and send the notifications, while three breakers (as three nodes' would)
 * open on a rejected session at the same moment. A reminder follows while it
 * lasts, and one "resolved" when it ends. Also: the deposit watcher that never reads the chain
 * is an incident of its own, and the Bot API's 429 retry_after is honoured without a duplicate.
 */

let database: FreshDatabase;
let smtp: TestSmtpServer;
let bot: TestBotApi;
const nodes: ServeProcess[] = [];
let shared: Db;
const OPS = 'ops@example.com';
const OPS_CHAT = '5550001';

beforeAll(async () => {
  smtp = await startSmtpServer();
  bot = await startBotApi();
  database = await freshDatabase();
  const env = {
    ...database.env,
    TON_API_URL: 'http://127.0.0.1:9/api/v2',
    DEPOSIT_ADDRESS: 'EQAs9VlT6S776tq3unJcP5Ogsj-ELLunLXuOb1EKcOQi4wJB',
    DEPOSIT_POLL_MS: '200',
    SMTP_URL: smtp.url,
    MAIL_FROM: 'Starport <noreply@example.com>',
    OPERATOR_EMAILS: OPS,
    TELEGRAM_BOT_TOKEN: bot.token,
    TELEGRAM_API_URL: bot.url,
    TELEGRAM_POLL_SECONDS: '1',
    NOTIFY_REMINDER_SECONDS: '2',
    NOTIFY_WATCHER_STALL_SECONDS: '1',
    NOTIFY_RETRY_DELAYS_MS: '200',
  };
  shared = await openDatabase({ dataDir: database.dataDir, databaseUrl: database.env.DATABASE_URL });
  nodes.push(...(await Promise.all([startServe(env), startServe(env), startServe(env)])));
});
afterAll(async () => {
  await Promise.all(nodes.map((node) => node.stop()));
  await shared?.close();
  await database?.dispose();
  await bot?.close();
  await smtp?.close();
});

const db = () => shared.kysely;
/** The breaker as each of three nodes has it: one object per node, one row shared by all. */
const breakers = () => [1, 2, 3].map(() => new CircuitBreaker(shared.kysely, { cooldownMs: 60_000, threshold: 5, logger: createLogger('silent') }));
const opsMails = (subject: RegExp) => smtp.mails.filter((m) => m.to.includes(OPS) && subject.test(m.subject));
const opsChat = (text: RegExp) => bot.sent.filter((m) => m.chatId === OPS_CHAT && text.test(m.text));

async function settled(): Promise<void> {
  await pollUntil(
    () => db().selectFrom('notifications').select('id').where('status', '=', 'pending').execute(),
    (rows) => rows.length === 0,
    { what: 'an empty notification backlog' },
  );
}

test('the operator links a chat with a one-time deep link, received by one poller', async () => {
  const { token } = await createLinkToken(db(), OPERATOR_OWNER);
  bot.pushStart(OPS_CHAT, token, 'Ops room');
  await pollUntil(
    () => db().selectFrom('telegram_chats').selectAll().where('owner', '=', OPERATOR_OWNER).executeTakeFirst(),
    (row) => row?.chat_id === OPS_CHAT,
    { what: 'the operator chat linked' },
  );
  await pollUntil(
    async () => opsChat(/Chat linked/),
    (sent) => sent.length === 1,
    { what: 'the confirmation in the chat' },
  );
  // The same token again is refused (one-time), and said so in that chat.
  bot.pushStart('5550002', token);
  await pollUntil(
    async () => bot.sent.filter((m) => m.chatId === '5550002'),
    (sent) => sent.length === 1,
    { what: 'the refusal' },
  );
  expect(bot.sent.find((m) => m.chatId === '5550002')?.text).toMatch(/Link not accepted/);
  await settled();
  expect(opsChat(/Chat linked/)).toHaveLength(1);
});

test('three nodes opening the breaker on a rejected session: one alert by e-mail and Telegram, a reminder, one resolved', async () => {
  const upstream = 'Fragment: Session expired <please log in> & retry';
  await Promise.all(breakers().map((breaker) => breaker.open('session_expired', upstream)));
  const [mail] = await pollUntil(
    async () => opsMails(/new cookies needed/),
    (mails) => mails.length >= 1,
    { what: 'the alert e-mail' },
  );
  expect(mail?.subject).toBe('Fragment refused the session: new cookies needed');
  expect(mail?.text).toContain(`Fragment said: ${upstream}`);
  expect(mail?.html).toContain('Fragment said: Fragment: Session expired &lt;please log in&gt; &amp; retry');
  const [message] = await pollUntil(
    async () => opsChat(/new cookies needed/),
    (sent) => sent.length >= 1,
    { what: 'the alert in Telegram' },
  );
  expect(message?.parseMode).toBe('HTML');
  expect(message?.text).toContain('&lt;please log in&gt; &amp; retry');

  // While it lasts: a reminder (NOTIFY_REMINDER_SECONDS=2), one per interval over all nodes.
  await pollUntil(
    async () => opsMails(/^Still ongoing: Fragment refuses the session/),
    (mails) => mails.length >= 1,
    { what: 'a reminder', timeoutMs: 15_000 },
  );
  await Promise.all(breakers().map((breaker) => breaker.recordSuccess()));
  await pollUntil(
    async () => [opsMails(/^Resolved: live fulfilment resumed/), opsChat(/Resolved: live fulfilment resumed/)],
    ([mails, sent]) => mails!.length >= 1 && sent!.length >= 1,
    { what: 'the resolved message' },
  );
  await settled();
  expect(opsMails(/new cookies needed/)).toHaveLength(1);
  expect(opsChat(/new cookies needed/)).toHaveLength(1);
  expect(opsMails(/^Resolved: live fulfilment resumed/)).toHaveLength(1);
  expect(opsChat(/Resolved: live fulfilment resumed/)).toHaveLength(1);
  // The reminders stop with the incident.
  const reminders = opsMails(/^Still ongoing: Fragment/).length;
  const incident = await db().selectFrom('notification_incidents').selectAll().where('key', '=', 'live_paused').executeTakeFirstOrThrow();
  expect(incident.state).toBe('resolved');
  expect(reminders).toBeGreaterThanOrEqual(1);
});

test('a deposit watcher without a successful poll is an incident, alerted once', async () => {
  // TON_API_URL refuses: the watcher never reads the chain (NOTIFY_WATCHER_STALL_SECONDS=1).
  const [mail] = await pollUntil(
    async () => opsMails(/^Deposit watcher stalled/),
    (mails) => mails.length >= 1,
    { what: 'the stall alert' },
  );
  expect(mail?.text).toMatch(/has not read the chain successfully for \d+ s/);
  await settled();
  expect(opsMails(/^Deposit watcher stalled/)).toHaveLength(1);
});

test('a 429 with retry_after is waited out and the message arrives once', async () => {
  bot.rateLimit = { remaining: 1, retryAfter: 1 };
  const id = await db()
    .transaction()
    .execute((tx) => enqueueTelegram(tx, { chatId: OPS_CHAT, message: { subject: 'Flood test', parts: ['one'] } }));
  const row = await pollUntil(
    () => db().selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
    (r) => r.status === 'sent',
    { what: 'the message sent after the wait' },
  );
  expect(Number(row.attempts)).toBe(2);
  expect(opsChat(/Flood test/)).toHaveLength(1);
});

test('Bot API 5xx answers are retried without loss or duplicate', async () => {
  // Only this message's sends fail: another node's reminder must not take one of the 502s.
  bot.serverErrors = 2;
  bot.serverErrorsFor = /Gateway test/;
  const id = await db()
    .transaction()
    .execute((tx) => enqueueTelegram(tx, { chatId: OPS_CHAT, message: { subject: 'Gateway test', parts: ['two'] } }));
  const row = await pollUntil(
    () => db().selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
    (r) => r.status === 'sent',
    { what: 'the message sent after two 502s' },
  );
  expect(Number(row.attempts)).toBe(3);
  expect(opsChat(/Gateway test/)).toHaveLength(1);
  bot.serverErrorsFor = undefined;
});
