import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Harness, startHarness } from '../support/harness.js';
import { pollUntil } from '../support/http.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';
import { startBotApi, type TestBotApi } from '../support/bot-api.js';
import { issuePasswordLink } from '../../src/accounts/dashboard-users.js';
import { signedUp, WebClient } from '../support/web.js';

/**
 * The dashboard's notifications page (docs/dashboard.md "Notifications"), server-rendered over
 * HTTP: the switches are saved per person and account, a test per channel arrives, a Telegram
 * chat is linked through the deep link, and a bot blocked by the person unlinks the chat and
 * says so on the page. With TELEGRAM_WEBHOOK_SECRET, updates come through /telegram/webhook.
 */

let smtp: TestSmtpServer;
let bot: TestBotApi;

beforeAll(async () => {
  smtp = await startSmtpServer();
  bot = await startBotApi();
});
afterAll(async () => {
  await bot?.close();
  await smtp?.close();
});

/** A signed-up person whose address is verified: an unverified one is sent nothing but its verification link. */
async function verifiedSignUp(h: Harness): Promise<{ client: WebClient; email: string }> {
  const signed = await signedUp(h);
  await h.service.db.kysely.updateTable('people').set({ email_unverified_since: null }).where('email', '=', signed.email).execute();
  return signed;
}

const baseEnv = () => ({
  SMTP_URL: smtp.url,
  MAIL_FROM: 'Starport <noreply@example.com>',
  TELEGRAM_BOT_TOKEN: bot.token,
  TELEGRAM_API_URL: bot.url,
  TELEGRAM_POLL_SECONDS: '1',
  NOTIFY_RETRY_DELAYS_MS: '200',
});

describe('getUpdates', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(baseEnv());
  });
  afterAll(async () => {
    await h?.close();
  });

  test('switches, a test per channel, a linked chat, and a blocked bot shown as unlinked', async () => {
    const { client, email } = await signedUp(h);
    const page = await client.get('/account/notifications');
    expect(page.status).toBe(200);
    expect(page.body).toContain('data-testid="switch-balance_low-email" checked');
    expect(page.body).toContain('No chat linked.');

    const saved = await client.submit('/account/notifications', { 'deposit_credited.email': 'on', 'order_failed.email': 'on', 'webhook_disabled.email': 'on' });
    expect(saved.status).toBe(303);
    const after = await client.get(saved.location as string);
    expect(after.body).toContain('Notification settings saved.');
    expect(after.body).not.toContain('data-testid="switch-balance_low-email" checked');
    expect(after.body).toContain('data-testid="switch-deposit_credited-email" checked');

    await client.submit('/account/notifications', { channel: 'email' }, '/account/notifications/test');
    await pollUntil(
      async () => smtp.mails.filter((m) => m.to.includes(email) && m.subject === 'Starport test notification'),
      (mails) => mails.length === 1,
      { what: 'the test e-mail' },
    );

    const linked = await client.submit('/account/notifications', {}, '/account/notifications/telegram/link');
    const link = /https:\/\/t\.me\/starport_test_bot\?start=([A-Za-z0-9_-]{20,64})/.exec(linked.body);
    expect(link, linked.body.slice(0, 2000)).toBeTruthy();
    const chat = '7770001';
    bot.pushStart(chat, link![1]!);
    await pollUntil(
      async () => (await client.get('/account/notifications')).body,
      (body) => body.includes('Linked to Tester.'),
      { what: 'the chat linked on the page' },
    );

    await client.submit('/account/notifications', { channel: 'telegram' }, '/account/notifications/test');
    await pollUntil(
      async () => bot.sent.filter((m) => m.chatId === chat && /Starport test notification/.test(m.text)),
      (sent) => sent.length === 1,
      { what: 'the test message' },
    );

    bot.blocked.add(chat);
    await client.submit('/account/notifications', { channel: 'telegram' }, '/account/notifications/test');
    const blocked = await pollUntil(
      async () => (await client.get('/account/notifications')).body,
      (body) => body.includes('The bot was blocked in your linked chat'),
      { what: 'the blocked chat on the page' },
    );
    expect(blocked).toContain('Link a chat again');
    const failed = await h.service.db.kysely.selectFrom('notifications').selectAll().where('recipient', '=', chat).where('status', '=', 'failed').execute();
    expect(failed).toHaveLength(1);
    expect(failed[0]?.last_error).toMatch(/^403 Forbidden: bot was blocked/);
    // A blocked chat gets nothing more.
    await client.submit('/account/notifications', { channel: 'telegram' }, '/account/notifications/test');
    expect((await client.get('/account/notifications?notice=x')).status).toBe(200);
    expect(bot.sent.filter((m) => m.chatId === chat)).toHaveLength(2);
  });
});

describe('security notices', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(baseEnv());
  });
  afterAll(async () => {
    await h?.close();
  });

  test('a sign-in from an address not seen before is mailed; a known one is not', async () => {
    const { email } = await verifiedSignUp(h);
    const newSignIns = () => smtp.mails.filter((m) => m.to.includes(email) && m.subject === 'New sign-in to Starport');
    expect((await new WebClient(h, '192.0.2.10').logIn(email)).status).toBe(303);
    expect((await new WebClient(h, '192.0.2.10').logIn(email)).status).toBe(303);
    expect((await new WebClient(h, '192.0.2.77').logIn(email)).status).toBe(303);
    const [mail] = await pollUntil(
      async () => newSignIns(),
      (mails) => mails.length === 1,
      { what: 'the new sign-in notice' },
    );
    expect(mail?.text).toContain('from 192.0.2.77, an address not seen before');
    // /readyz stays green whatever the channels do, and /metrics counts the sends.
    smtp.tempFail = true;
    try {
      expect((await h.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    } finally {
      smtp.tempFail = false;
    }
    // Counted once the outcome is recorded, just after the server took the mail.
    const metrics = await pollUntil(
      async () => (await h.inject({ method: 'GET', url: '/metrics' })).body,
      (body) => /starport_notification_attempts_total\{channel="email",outcome="sent"\} [1-9]/.test(body),
      { what: 'the sent counter' },
    );
    expect(metrics).toMatch(/starport_notification_backlog\{channel="email"\} \d+/);
    expect(newSignIns()).toHaveLength(1);
  });
});

describe('password changed', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness(baseEnv());
  });
  afterAll(async () => {
    await h?.close();
  });

  test('a password set over an earlier one is a security notice', async () => {
    const { email } = await verifiedSignUp(h);
    const link = await issuePasswordLink(h.service.db, email);
    const page = await new WebClient(h).submit(`/set-password/${link.token}`, { password: 'another horse battery', password_again: 'another horse battery' });
    expect(page.status).toBe(303);
    const [mail] = await pollUntil(
      async () => smtp.mails.filter((m) => m.to.includes(email) && m.subject === 'Your Starport password was changed'),
      (mails) => mails.length === 1,
      { what: 'the password notice' },
    );
    expect(mail?.text).toContain('every session was ended');
  });
});

describe('setWebhook', () => {
  let h: Harness;
  const SECRET = 'webhook-secret-0123456789abcdef';
  beforeAll(async () => {
    h = await startHarness({ ...baseEnv(), TELEGRAM_WEBHOOK_SECRET: SECRET, PUBLIC_URL: 'https://starport.example' });
  });
  afterAll(async () => {
    await h?.close();
    bot.webhook = undefined;
  });

  test('the worker sets the webhook; updates need the secret header', async () => {
    await pollUntil(
      async () => bot.webhook,
      (webhook) => webhook !== undefined,
      { what: 'setWebhook' },
    );
    expect(bot.webhook).toEqual({ url: 'https://starport.example/telegram/webhook', secretToken: SECRET });
    const { client } = await signedUp(h);
    const linked = await client.submit('/account/notifications', {}, '/account/notifications/telegram/link');
    const token = /\?start=([A-Za-z0-9_-]{20,64})/.exec(linked.body)?.[1] as string;
    const update = { update_id: 1, message: { message_id: 1, date: 1, text: `/start ${token}`, chat: { id: 8880001, type: 'private', first_name: 'Hooked' } } };
    const refused = await h.inject({ method: 'POST', url: '/telegram/webhook', payload: update });
    expect(refused.statusCode).toBe(401);
    const wrong = await h.inject({ method: 'POST', url: '/telegram/webhook', payload: update, headers: { 'x-telegram-bot-api-secret-token': 'nope' } });
    expect(wrong.statusCode).toBe(401);
    const accepted = await h.inject({ method: 'POST', url: '/telegram/webhook', payload: update, headers: { 'x-telegram-bot-api-secret-token': SECRET } });
    expect(accepted.statusCode).toBe(200);
    expect((await client.get('/account/notifications')).body).toContain('Linked to Hooked.');
  });
});
