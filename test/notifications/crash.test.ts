import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { enqueueMail, enqueueTelegram } from '../../src/notifications/outbox.js';
import { startBotApi, type TestBotApi } from '../support/bot-api.js';
import { type FreshDatabase, freshDatabase } from '../support/database.js';
import { pollUntil } from '../support/http.js';
import { type ServeProcess, startServe } from '../support/serve-process.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';

/**
 * A worker killed with SIGKILL in the middle of an SMTP conversation (the server holds its
 * answer to the message): the notification is not lost, another worker sends it once its lease
 * (NOTIFY_SEND_TIMEOUT_MS + 5 s) has run out, and it is sent at most once more. The same for a
 * Telegram message whose sendMessage the Bot API holds unanswered. Both engines.
 */

let database: FreshDatabase;
let db: Db;
let smtp: TestSmtpServer;
let bot: TestBotApi;
const nodes: ServeProcess[] = [];

beforeAll(async () => {
  database = await freshDatabase();
  db = await openDatabase({ dataDir: database.dataDir, databaseUrl: database.env.DATABASE_URL });
  smtp = await startSmtpServer();
  bot = await startBotApi();
});
// Each test's nodes go with it: a node configured without Telegram would claim the next test's message.
afterEach(async () => {
  await Promise.all(nodes.splice(0).map((node) => node.stop('SIGKILL')));
});
afterAll(async () => {
  await db?.close();
  await database?.dispose();
  await smtp?.close();
  await bot?.close();
});

/** A peer that holds its answer to a send until told: the test SMTP server or Bot API. */
interface Holding {
  hold: boolean;
  onHeld: (() => void) | undefined;
}

/**
 * Starts a worker, lets `peer` hold the send of the notification `enqueue` writes, kills the
 * worker with SIGKILL, and starts another: returns the row once that one sent it.
 */
async function killedMidSend(env: Record<string, string | undefined>, peer: Holding, enqueue: () => Promise<string>) {
  const first = await startServe({ ...env, NOTIFY_SEND_TIMEOUT_MS: '1000' });
  nodes.push(first);
  peer.hold = true;
  const held = new Promise<void>((resolve) => {
    peer.onHeld = resolve;
  });
  const id = await enqueue();
  await held;
  await first.stop('SIGKILL');
  peer.hold = false;
  peer.onHeld = undefined;
  const row = () => db.kysely.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const claimed = await row();
  expect(claimed.status).toBe('pending');
  expect(claimed.lease_owner).not.toBeNull();

  nodes.push(await startServe({ ...env, NOTIFY_SEND_TIMEOUT_MS: '1000' }));
  const sent = await pollUntil(row, (r) => r.status === 'sent', { what: 'the notification sent by the second worker', timeoutMs: 20_000 });
  expect(Number(sent.attempts)).toBe(2);
  return sent;
}

test('kill -9 mid-send: the mail is sent by the next worker, once', async () => {
  const to = `crash-${Date.now()}@example.com`;
  const row = await killedMidSend({ ...database.env, SMTP_URL: smtp.url, MAIL_FROM: 'Starport <noreply@example.com>' }, smtp, () =>
    db.kysely.transaction().execute((tx) => enqueueMail(tx, { to, message: { subject: 'Survives a crash', parts: ['body'] } })),
  );
  // The held message was never answered, so not delivered: only the second worker's arrived.
  expect(smtp.mails.filter((m) => m.to.includes(to))).toHaveLength(1);
  expect(smtp.mails.find((m) => m.to.includes(to))?.messageId).toBe(`<${row.id}@starport>`);
}, 90_000);

test('kill -9 while sendMessage is unanswered: the next worker sends the Telegram message, once', async () => {
  const chatId = '8880001';
  await killedMidSend({ ...database.env, TELEGRAM_BOT_TOKEN: bot.token, TELEGRAM_API_URL: bot.url }, bot, () =>
    db.kysely.transaction().execute((tx) => enqueueTelegram(tx, { chatId, message: { subject: 'Survives a crash', parts: ['body'] } })),
  );
  expect(bot.sent.filter((m) => m.chatId === chatId)).toHaveLength(1);
}, 90_000);
