import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Mode } from '../../../domain/api-key.js';
import { CHANNELS, CLIENT_TOPICS, type ClientTopic, enqueueMail, enqueueTelegram, isMailAddress } from '../../../notifications/outbox.js';
import { type NotificationSwitches, notificationSwitches, setNotificationSwitches } from '../../../notifications/settings.js';
import { createLinkToken, deepLink, handleUpdate, linkedChat, unlinkChat } from '../../../notifications/telegram-links.js';
import type { TelegramUpdate } from '../../../notifications/telegram.js';
import { safeEqual } from '../../../accounts/secrets.js';
import { html, type Slot } from '../../html/html.js';
import { field, redirect, sendHtml } from '../../html/http.js';
import { csrfField, dashboardPage, notice, type View } from '../layout.js';
import type { WebContext } from '../context.js';

/**
 * Notifications (docs/dashboard.md "Notifications"): the signed-in person's switches for the
 * account being viewed, per topic and channel; their Telegram chat (linked by a one-time deep
 * link, and shown as unlinked when the bot was blocked); a test message per channel. The
 * security notices have no switch. Every member may use it: it is about their own mail.
 */

const TOPIC_LABELS: Record<ClientTopic, string> = {
  balance_low: 'Low balance (your low-balance alert is crossed)',
  deposit_credited: 'Deposit credited (TON and USDT)',
  order_failed: 'A live order failed',
  webhook_disabled: 'A webhook endpoint was disabled after failures',
};

const NOTICES: Record<string, Slot> = {
  saved: notice('success', 'Notification settings saved.'),
  'test-email': notice('success', 'A test e-mail is on its way.'),
  'test-telegram': notice('success', 'A test Telegram message is on its way.'),
  'no-telegram': notice('error', 'Link a Telegram chat first.'),
  'no-email': notice('error', 'Your sign-in e-mail cannot receive mail, so no test was sent.'),
  unlinked: notice('success', 'Telegram chat unlinked.'),
  'bot-unreachable': notice('error', 'The Telegram bot cannot be reached right now; try again in a minute.'),
};

type PreHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/** What this page uses of plugin.ts's `Web` (stated here: importing it would make a cycle). */
export interface NotificationsWeb {
  ctx: WebContext;
  authenticated: PreHandler;
  sessionCsrf: PreHandler;
  view(request: FastifyRequest, mode: Mode): View;
}

export function notificationRoutes(app: FastifyInstance, web: NotificationsWeb): void {
  const { ctx } = web;
  const guarded = { preHandler: [web.authenticated, web.sessionCsrf] };
  const signedIn = { preHandler: web.authenticated };
  const viewOf = (request: FastifyRequest): View => web.view(request, 'live');
  const telegram = ctx.notifications?.telegram;

  const page = async (view: View, options: { status?: Slot; link?: string } = {}) => {
    const { session } = view;
    const switches = await notificationSwitches(ctx.db.kysely, session.personId, session.accountId);
    const chat = telegram ? await linkedChat(ctx.db.kysely, session.personId) : undefined;
    const rows = CLIENT_TOPICS.map(
      (topic) => html`<tr>
  <th scope="row">${TOPIC_LABELS[topic]}</th>
  ${CHANNELS.map(
    (channel) =>
      html`<td><input type="checkbox" name="${topic}.${channel}" value="on" aria-label="${TOPIC_LABELS[topic]} by ${channel === 'email' ? 'e-mail' : 'Telegram'}" data-testid="switch-${topic}-${channel}"${switches[topic][channel] ? html` checked` : ''}></td>`,
  )}
</tr>`,
    );
    const telegramState = !telegram
      ? html`<p data-testid="telegram-state">Telegram is not set up on this service.</p>`
      : chat?.blockedAt
        ? html`<p data-testid="telegram-state" class="field-error">The bot was blocked in your linked chat${chat.title ? html` (${chat.title})` : ''}, so it was unlinked. Link a chat again to get Telegram messages.</p>`
        : chat
          ? html`<p data-testid="telegram-state">Linked to ${chat.title ?? 'a chat'}.</p>`
          : html`<p data-testid="telegram-state">No chat linked.</p>`;
    const linkForms = telegram
      ? html`<p class="button-row">
  <form method="post" action="/account/notifications/telegram/link" class="inline-form">${csrfField(view.csrf)}<button type="submit" class="button button-secondary" data-testid="telegram-link">${chat ? 'Link another chat' : 'Link Telegram'}</button></form>
  ${chat ? html`<form method="post" action="/account/notifications/telegram/unlink" class="inline-form">${csrfField(view.csrf)}<button type="submit" class="button button-secondary">Unlink</button></form>` : ''}
</p>
${options.link ? html`<p data-testid="telegram-deep-link">Open <a href="${options.link}" rel="noopener">${options.link}</a> in Telegram and press Start. The link works once, for 15 minutes.</p>` : ''}`
      : '';
    const body = html`<div class="page-head"><h1>Notifications</h1></div>
<p class="lead">What you, ${session.email}, are told about ${session.accountEmail}, by e-mail and Telegram.</p>
<section class="card" aria-labelledby="topics-heading">
  <h2 id="topics-heading">Topics</h2>
  <form method="post" action="/account/notifications" class="stack">
    ${csrfField(view.csrf)}
    <div class="table-wrap"><table class="table">
    <caption class="visually-hidden">Notification switches</caption>
    <thead><tr><th scope="col">Topic</th><th scope="col">E-mail</th><th scope="col">Telegram</th></tr></thead>
    <tbody>${rows}</tbody></table></div>
    <p class="hint">Security notices cannot be switched off: your password changed, two-factor sign-in turned off, an API key reissued or revoked, a sign-in from an address not seen before.</p>
    <p><button type="submit" class="button button-primary" data-testid="save-notifications">Save</button></p>
  </form>
</section>
<section class="card section" aria-labelledby="telegram-heading">
  <h2 id="telegram-heading">Telegram</h2>
  ${telegramState}
  ${linkForms}
</section>
<section class="card section" aria-labelledby="test-heading">
  <h2 id="test-heading">Send a test notification</h2>
  <p class="button-row">
    <form method="post" action="/account/notifications/test" class="inline-form">${csrfField(view.csrf)}<input type="hidden" name="channel" value="email"><button type="submit" class="button button-secondary" data-testid="test-email">Test e-mail</button></form>
    ${telegram ? html`<form method="post" action="/account/notifications/test" class="inline-form">${csrfField(view.csrf)}<input type="hidden" name="channel" value="telegram"><button type="submit" class="button button-secondary" data-testid="test-telegram">Test Telegram</button></form>` : ''}
  </p>
</section>`;
    return dashboardPage(view, { title: 'Notifications', section: 'account', body, notice: options.status });
  };

  app.get('/account/notifications', signedIn, async (request, reply) => sendHtml(reply, await page(viewOf(request), { status: NOTICES[field(request.query, 'notice')] })));

  app.post('/account/notifications', guarded, async (request, reply) => {
    const { session } = viewOf(request);
    const switches = Object.fromEntries(
      CLIENT_TOPICS.map((topic) => [topic, Object.fromEntries(CHANNELS.map((channel) => [channel, field(request.body, `${topic}.${channel}`) === 'on']))]),
    ) as NotificationSwitches;
    await setNotificationSwitches(ctx.db.kysely, session.personId, session.accountId, switches);
    return redirect(reply, '/account/notifications?notice=saved');
  });

  app.post('/account/notifications/test', guarded, async (request, reply) => {
    const { session } = viewOf(request);
    const channel = field(request.body, 'channel');
    const message = {
      subject: `${ctx.brand.name} test notification`,
      parts: [`This is a test, sent from the dashboard by ${session.email}. Notifications for ${session.accountEmail} reach you here.`],
    };
    if (channel === 'telegram') {
      const chat = telegram ? await linkedChat(ctx.db.kysely, session.personId) : undefined;
      if (!chat || chat.blockedAt) return redirect(reply, '/account/notifications?notice=no-telegram');
      await ctx.db.kysely.transaction().execute((tx) => enqueueTelegram(tx, { chatId: chat.chatId, message, topic: 'test', personId: session.personId }));
      return redirect(reply, '/account/notifications?notice=test-telegram');
    }
    // A sign-in name that is no deliverable address (sign-up accepts more than SMTP does) gets nothing.
    if (!isMailAddress(session.email)) return redirect(reply, '/account/notifications?notice=no-email');
    await ctx.db.kysely.transaction().execute((tx) => enqueueMail(tx, { to: session.email, message, topic: 'test', personId: session.personId }));
    return redirect(reply, '/account/notifications?notice=test-email');
  });

  app.post('/account/notifications/telegram/link', guarded, async (request, reply) => {
    const view = viewOf(request);
    if (!telegram) return redirect(reply, '/account/notifications');
    let username: string;
    try {
      username = await telegram.botUsername();
    } catch (error) {
      request.log.warn({ err: { message: (error as Error).message } }, 'telegram getMe failed');
      return redirect(reply, '/account/notifications?notice=bot-unreachable');
    }
    const { token } = await createLinkToken(ctx.db.kysely, view.session.personId);
    // The page shows the link once; it is not logged.
    return sendHtml(reply, await page(view, { link: deepLink(username, token) }));
  });

  // TELEGRAM_WEBHOOK_SECRET: the Bot API posts updates here (setWebhook), with the secret in a
  // header; an update without it is refused.
  const secret = ctx.notifications?.telegramWebhookSecret;
  if (secret) {
    app.post('/telegram/webhook', async (request, reply) => {
      const given = request.headers['x-telegram-bot-api-secret-token'];
      if (typeof given !== 'string' || !safeEqual(given, secret)) return reply.code(401).send();
      const update = request.body as TelegramUpdate | undefined;
      if (update && typeof update === 'object' && typeof update.update_id === 'number') await handleUpdate(ctx.db.kysely, update, Date.now(), ctx.brand.name);
      return reply.code(200).send();
    });
  }

  app.post('/account/notifications/telegram/unlink', guarded, async (request, reply) => {
    await unlinkChat(ctx.db.kysely, viewOf(request).session.personId);
    return redirect(reply, '/account/notifications?notice=unlinked');
  });
}
