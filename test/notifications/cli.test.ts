import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Db } from '../../src/db/engine.js';
import { openDatabase } from '../../src/db/open.js';
import { enqueueMail } from '../../src/notifications/outbox.js';
import { cliFor, describeRun, parseJsonStdout } from '../support/cli.js';
import { type FreshDatabase, freshDatabase } from '../support/database.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';

/**
 * The notification commands as the operator runs them (bin/starport, both engines): without
 * SMTP_URL a mail is kept and `mail list` shows it with its one-time link redacted while `mail
 * show` prints it whole; `notify test` sends at once and reports a refusal; `notify status`
 * tells what is configured and waiting; a bad SMTP_URL or bot token is refused naming the
 * variable, without echoing a secret.
 */

let database: FreshDatabase;
let db: Db;
let smtp: TestSmtpServer;
let cli: ReturnType<typeof cliFor>;

beforeAll(async () => {
  database = await freshDatabase();
  db = await openDatabase({ dataDir: database.dataDir, databaseUrl: database.env.DATABASE_URL });
  smtp = await startSmtpServer();
  cli = cliFor(database.env);
});
afterAll(async () => {
  await db?.close();
  await database?.dispose();
  await smtp?.close();
});

const LINK = 'https://starport.example/reset/Zq8xSECRETsecretSECRET123';

test('mail list redacts a one-time link, mail show prints it, and no SMTP_URL keeps the mail', async () => {
  const id = await db.kysely.transaction().execute((tx) =>
    enqueueMail(tx, {
      to: 'client@example.com',
      message: { subject: 'Reset your password', parts: ['Someone asked to reset your password.', { link: LINK, label: 'Choose a new password' }] },
      secrets: [LINK],
      topic: 'password_reset',
    }),
  );
  const listed = await cli(['mail', 'list', '--json']);
  expect(listed.code, describeRun(['mail', 'list'], listed)).toBe(0);
  expect(listed.stdout).not.toContain('SECRET');
  const mails = parseJsonStdout(listed).mails;
  expect(mails).toEqual([expect.objectContaining({ id, to: 'client@example.com', subject: 'Reset your password', status: 'pending' })]);
  const text = await cli(['mail', 'list']);
  expect(text.stdout).toContain(id);
  expect(text.stdout).not.toContain('SECRET');

  const shown = await cli(['mail', 'show', id]);
  expect(shown.code, describeRun(['mail', 'show', id], shown)).toBe(0);
  expect(shown.stdout).toContain(`Choose a new password: ${LINK}`);
  const html = await cli(['mail', 'show', id, '--html']);
  expect(html.stdout).toContain(`<a href="${LINK}">Choose a new password</a>`);
  expect((await cli(['mail', 'show', 'ntf_nothing'])).code).toBe(1);

  // notify test without SMTP_URL: kept, and found by mail list.
  const test = await cli(['notify', 'test', '--email', 'me@example.com', '--json']);
  expect(test.code, describeRun(['notify', 'test'], test)).toBe(0);
  const kept = parseJsonStdout(test);
  expect(kept).toMatchObject({ ok: true, status: 'kept' });
  const mine = parseJsonStdout(await cli(['mail', 'list', '--to', 'me@example.com', '--json'])).mails;
  expect(mine).toEqual([expect.objectContaining({ id: kept.id, status: 'kept', subject: 'Starport test notification' })]);

  const status = await cli(['notify', 'status', '--json']);
  expect(status.code, describeRun(['notify', 'status'], status)).toBe(0);
  expect(parseJsonStdout(status)).toMatchObject({ email: { smtp: null }, telegram: { configured: false }, backlog: { email: 1 } });
});

test('notify test over SMTP: sent, or refused with the server’s answer', async () => {
  const env = { SMTP_URL: smtp.url, MAIL_FROM: 'Starport <noreply@example.com>' };
  const sent = await cli(['notify', 'test', '--email', 'ops@example.com'], { env });
  expect(sent.code, describeRun(['notify', 'test'], sent)).toBe(0);
  expect(smtp.mails.filter((m) => m.to.includes('ops@example.com'))).toHaveLength(1);
  smtp.rejectRecipients = /^nobody@/;
  try {
    const refused = await cli(['notify', 'test', '--email', 'nobody@example.com'], { env });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/not sent: .*550.*given up/);
  } finally {
    smtp.rejectRecipients = undefined;
  }
  const status = parseJsonStdout(await cli(['notify', 'status', '--json'], { env }));
  expect(status.email.smtp).toBe(smtp.url);
  expect(status.last_failure.error).toMatch(/550/);
});

test('a bad SMTP_URL or bot token is refused naming the variable, without its secret', async () => {
  const bad = await cli(['notify', 'status'], { env: { SMTP_URL: 'http://user:hunter2@mail.example.com' } });
  expect(bad.code).toBe(1);
  expect(bad.stderr).toMatch(/SMTP_URL must start with smtp:\/\/ or smtps:\/\//);
  expect(bad.stderr).not.toContain('hunter2');
  const noFrom = await cli(['notify', 'status'], { env: { SMTP_URL: 'smtp://mail.example.com' } });
  expect(noFrom.stderr).toMatch(/MAIL_FROM must be set/);
  const token = await cli(['notify', 'status'], { env: { TELEGRAM_BOT_TOKEN: 'not-a-token-secret' } });
  expect(token.code).toBe(1);
  expect(token.stderr).toMatch(/TELEGRAM_BOT_TOKEN must be a bot token/);
  expect(token.stderr).not.toContain('not-a-token-secret');
});
