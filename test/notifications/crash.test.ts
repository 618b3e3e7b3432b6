import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { enqueueMail } from '../../src/notifications/outbox.js';
import { type FreshDatabase, freshDatabase } from '../support/database.js';
import { pollUntil } from '../support/http.js';
import { type ServeProcess, startServe } from '../support/serve-process.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';

/**
 * A worker killed with SIGKILL in the middle of an SMTP conversation (the server holds its
 * answer to the message): the notification is not lost, another worker sends it once its lease
 * (NOTIFY_SEND_TIMEOUT_MS + 5 s) has run out, and it is sent at most once more. Both engines.
 */

let database: FreshDatabase;
let db: Db;
let smtp: TestSmtpServer;
const nodes: ServeProcess[] = [];

beforeAll(async () => {
  database = await freshDatabase();
  db = await openDatabase({ dataDir: database.dataDir, databaseUrl: database.env.DATABASE_URL });
  smtp = await startSmtpServer();
});
afterAll(async () => {
  await Promise.all(nodes.map((node) => node.stop('SIGKILL')));
  await db?.close();
  await database?.dispose();
  await smtp?.close();
});

test('kill -9 mid-send: the mail is sent by the next worker, once', async () => {
  const env = { ...database.env, SMTP_URL: smtp.url, MAIL_FROM: 'Starport <noreply@example.com>', NOTIFY_SEND_TIMEOUT_MS: '1000' };
  const first = await startServe(env);
  nodes.push(first);
  smtp.hold = true;
  const held = new Promise<void>((resolve) => {
    smtp.onHeld = resolve;
  });
  const to = `crash-${Date.now()}@example.com`;
  const id = await db.kysely.transaction().execute((tx) => enqueueMail(tx, { to, message: { subject: 'Survives a crash', parts: ['body'] } }));
  await held;
  await first.stop('SIGKILL');
  smtp.hold = false;
  smtp.onHeld = undefined;
  // The held message was never answered: it was not delivered.
  expect(smtp.mails.filter((m) => m.to.includes(to))).toHaveLength(0);
  const claimed = await db.kysely.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  expect(claimed.status).toBe('pending');
  expect(claimed.lease_owner).not.toBeNull();

  nodes.push(await startServe(env));
  const row = await pollUntil(
    () => db.kysely.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
    (r) => r.status === 'sent',
    { what: 'the mail sent by the second worker', timeoutMs: 20_000 },
  );
  expect(Number(row.attempts)).toBe(2);
  expect(smtp.mails.filter((m) => m.to.includes(to))).toHaveLength(1);
  expect(smtp.mails.find((m) => m.to.includes(to))?.messageId).toBe(`<${id}@starport>`);
}, 90_000);
