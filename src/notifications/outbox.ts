import type { Kysely, Selectable } from 'kysely';
import type { Database, NotificationsTable } from '../db/schema.js';
import { newId } from '../domain/random.js';
import { type Message, oneLine, renderHtml, renderTelegram, renderText } from './message.js';

/**
 * The notification outbox (docs/operations.md "Notifications"). Every function here writes rows
 * in the caller's transaction, so a notification commits with the event that causes it or not
 * at all; the worker role sends them (worker.ts) with retries, and nothing here waits on the
 * network. The one place to queue a notification:
 *
 * - `enqueueMail(tx, {to, message, secrets})`: one e-mail to one address. A `secrets` value (a
 *   one-time link) may appear in the message; it is never logged, `mail list` shows it as
 *   [redacted] and only `mail show ID` prints it (the operator's fallback without SMTP).
 * - `enqueueTelegram(tx, {chatId, message})`: one Telegram message.
 * - `notifyPerson` / `notifyAccount`: a person's, or an account's members', channels, each
 *   filtered by the person's switches (settings.ts); `security` notices ignore the switches.
 * - `notifyOperator`: the operator's channels (OPERATOR_EMAILS, the linked chat), fanned out by
 *   a worker, which knows the configuration.
 * - `openIncident` / `resolveIncident` (incidents.ts): operator alerts, one per incident.
 */

/** What a notification is about: the client's switches are per topic (settings.ts). */
export type ClientTopic = 'balance_low' | 'deposit_credited' | 'order_failed' | 'webhook_disabled';
export type Topic = ClientTopic | 'security' | 'operator' | 'test' | (string & {});

export const CLIENT_TOPICS: readonly ClientTopic[] = ['balance_low', 'deposit_credited', 'order_failed', 'webhook_disabled'];

export type Channel = 'email' | 'telegram';
export const CHANNELS: readonly Channel[] = ['email', 'telegram'];

export type NotificationRow = Selectable<NotificationsTable>;

export interface MailInput {
  to: string;
  message: Message;
  topic?: Topic;
  /** Values the message contains that must never be listed or logged (a one-time link). */
  secrets?: string[];
  personId?: string | null;
  accountId?: string | null;
}

/** A bad address: refused before anything is written (header injection, RFC 5321 length). */
export class MailAddressError extends Error {}

/** A simple address check: one @, no spaces or control characters, at most 254 characters. */
export function isMailAddress(address: string): boolean {
  return address.length <= 254 && /^[^\s@<>()\\",;:]+@[^\s@<>()\\",;:]+$/.test(address) && !/[\u0000-\u001f\u007f]/.test(address);
}

/** Queues one e-mail; returns its id. */
export async function enqueueMail(tx: Kysely<Database>, input: MailInput, now = Date.now()): Promise<string> {
  if (!isMailAddress(input.to)) throw new MailAddressError(`not an e-mail address: ${JSON.stringify(input.to.slice(0, 300))}`);
  return insert(tx, {
    channel: 'email',
    recipient: input.to,
    topic: input.topic ?? 'mail',
    subject: oneLine(input.message.subject),
    body_text: renderText(input.message),
    body_html: renderHtml(input.message),
    secrets: input.secrets,
    person_id: input.personId ?? null,
    account_id: input.accountId ?? null,
    now,
  });
}

export interface TelegramInput {
  chatId: string;
  message: Message;
  topic?: Topic;
  secrets?: string[];
  personId?: string | null;
  accountId?: string | null;
}

/** Queues one Telegram message; returns its id. */
export async function enqueueTelegram(tx: Kysely<Database>, input: TelegramInput, now = Date.now()): Promise<string> {
  return insert(tx, {
    channel: 'telegram',
    recipient: input.chatId,
    topic: input.topic ?? 'message',
    subject: oneLine(input.message.subject),
    body_text: renderTelegram(input.message),
    body_html: null,
    secrets: input.secrets,
    person_id: input.personId ?? null,
    account_id: input.accountId ?? null,
    now,
  });
}

/** Queues a message for the operator: a worker sends it to every operator channel configured. */
export async function notifyOperator(tx: Kysely<Database>, message: Message, topic: Topic = 'operator', now = Date.now()): Promise<string> {
  return insert(tx, {
    channel: 'operator',
    recipient: '',
    topic,
    subject: oneLine(message.subject),
    body_text: JSON.stringify(message),
    body_html: null,
    person_id: null,
    account_id: null,
    now,
  });
}

/** The parts an operator row carries, for the worker's fan-out. */
export function operatorMessage(row: NotificationRow): Message {
  return JSON.parse(row.body_text) as Message;
}

/**
 * Queues `message` to one person's channels: e-mail to their address and Telegram to their
 * linked chat (unless the bot was blocked there). A client topic honours the person's switch
 * for `accountId`; `security` cannot be switched off. Returns the messages written.
 */
export async function notifyPerson(tx: Kysely<Database>, personId: string, message: Message, options: { topic: Topic; accountId?: string | null; now?: number }): Promise<number> {
  const person = await tx.selectFrom('people').select(['id', 'email', 'email_unverified_since']).where('id', '=', personId).executeTakeFirst();
  if (!person) return 0;
  return sendToPeople(
    tx,
    [{ personId: person.id, email: person.email, unverified: person.email_unverified_since !== null }],
    message,
    options.topic,
    options.accountId ?? null,
    options.now ?? Date.now(),
  );
}

/**
 * Queues `message` to the members of an account (every role; `roles` narrows it), each on the
 * channels where they keep `topic` on for this account. Returns the messages written.
 */
export async function notifyAccount(
  tx: Kysely<Database>,
  accountId: string,
  message: Message,
  options: { topic: Topic; roles?: Array<'owner' | 'developer' | 'viewer'>; now?: number },
): Promise<number> {
  let query = tx
    .selectFrom('memberships as m')
    .innerJoin('people as p', 'p.id', 'm.person_id')
    .select(['p.id', 'p.email', 'p.email_unverified_since'])
    .where('m.account_id', '=', accountId);
  if (options.roles) query = query.where('m.role', 'in', options.roles);
  const people = await query.execute();
  if (people.length === 0) return 0;
  // Which account: a person may belong to several.
  const account = await tx.selectFrom('accounts').select('email').where('id', '=', accountId).executeTakeFirst();
  return sendToPeople(
    tx,
    people.map((p) => ({ personId: p.id, email: p.email, unverified: p.email_unverified_since !== null })),
    account ? { ...message, parts: [...message.parts, `Account: ${account.email}`] } : message,
    options.topic,
    accountId,
    options.now ?? Date.now(),
  );
}

async function sendToPeople(
  tx: Kysely<Database>,
  people: Array<{ personId: string; email: string; unverified: boolean }>,
  message: Message,
  topic: Topic,
  accountId: string | null,
  now: number,
): Promise<number> {
  if (people.length === 0) return 0;
  const ids = people.map((p) => p.personId);
  const switchable = (CLIENT_TOPICS as readonly string[]).includes(topic);
  const off = new Set<string>();
  if (switchable && accountId !== null) {
    const rows = await tx
      .selectFrom('notification_settings')
      .select(['person_id', 'channel'])
      .where('person_id', 'in', ids)
      .where('account_id', '=', accountId)
      .where('topic', '=', topic)
      .where('enabled', '=', 0n)
      .execute();
    for (const row of rows) off.add(`${row.person_id}\0${row.channel}`);
  }
  const chats = await tx.selectFrom('telegram_chats').select(['owner', 'chat_id']).where('owner', 'in', ids).where('blocked_at', 'is', null).execute();
  let written = 0;
  for (const person of people) {
    // An address still waiting for its verification link gets nothing but that link (docs/dashboard.md).
    if (!off.has(`${person.personId}\0email`) && !person.unverified && isMailAddress(person.email)) {
      await enqueueMail(tx, { to: person.email, message, topic, personId: person.personId, accountId }, now);
      written++;
    }
    const chat = chats.find((c) => c.owner === person.personId);
    if (chat && !off.has(`${person.personId}\0telegram`)) {
      await enqueueTelegram(tx, { chatId: chat.chat_id, message, topic, personId: person.personId, accountId }, now);
      written++;
    }
  }
  return written;
}

async function insert(
  tx: Kysely<Database>,
  row: {
    channel: NotificationRow['channel'];
    recipient: string;
    topic: string;
    subject: string;
    body_text: string;
    body_html: string | null;
    secrets?: string[];
    person_id: string | null;
    account_id: string | null;
    now: number;
  },
): Promise<string> {
  const id = newId('ntf');
  const secrets = (row.secrets ?? []).filter((s) => s.length > 0);
  await tx
    .insertInto('notifications')
    .values({
      id,
      channel: row.channel,
      recipient: row.recipient,
      person_id: row.person_id,
      account_id: row.account_id,
      topic: row.topic,
      subject: row.subject,
      body_text: row.body_text,
      body_html: row.body_html,
      secrets: secrets.length > 0 ? JSON.stringify(secrets) : null,
      status: 'pending',
      attempts: 0,
      next_attempt_at: row.now,
      created_at: row.now,
    })
    .execute();
  announceQueued();
  return id;
}

/** Replaces every secret of the row in `text` with [redacted]. */
export function redact(row: Pick<NotificationRow, 'secrets'>, text: string): string {
  if (!row.secrets) return text;
  let out = text;
  for (const secret of JSON.parse(row.secrets) as string[]) out = out.split(secret).join('[redacted]');
  return out;
}

/**
 * How soon after a message is queued this process's notification worker looks for it (its
 * transaction commits first); other processes find it at their next poll.
 */
const QUEUED_WAKE_DELAY_MS = 15;
const queuedListeners = new Set<() => void>();
let queuedWake: NodeJS.Timeout | undefined;

/** Calls `listener` soon after this process queues notifications; returns the unsubscribe. */
export function onNotificationsQueued(listener: () => void): () => void {
  queuedListeners.add(listener);
  return () => queuedListeners.delete(listener);
}

function announceQueued(): void {
  if (queuedWake || queuedListeners.size === 0) return;
  queuedWake = setTimeout(() => {
    queuedWake = undefined;
    for (const listener of queuedListeners) listener();
  }, QUEUED_WAKE_DELAY_MS);
  queuedWake.unref();
}

/** The e-mails, newest first, with secrets redacted (`starport mail list`). */
export async function listMails(db: Kysely<Database>, options: { limit: number; to?: string }): Promise<NotificationRow[]> {
  let query = db.selectFrom('notifications').selectAll().where('channel', '=', 'email');
  if (options.to) query = query.where('recipient', '=', options.to);
  const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(options.limit).execute();
  return rows.map((row) => ({ ...row, subject: redact(row, row.subject), body_text: redact(row, row.body_text), body_html: row.body_html && redact(row, row.body_html) }));
}

/** One notification, whole, secrets included (`starport mail show ID`). */
export async function readNotification(db: Kysely<Database>, id: string): Promise<NotificationRow | undefined> {
  return db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst();
}

export interface OutboxStatus {
  /** Pending messages per channel. */
  backlog: Record<string, number>;
  lastFailure: { id: string; channel: string; error: string | null; at: number } | undefined;
  sent: Record<string, number>;
}

/** The backlog per channel and the newest failure (`notify status`, the metrics). */
export async function outboxStatus(db: Kysely<Database>): Promise<OutboxStatus> {
  const rows = await db
    .selectFrom('notifications')
    .select(['channel', 'status', (eb) => eb.fn.countAll().as('n')])
    .groupBy(['channel', 'status'])
    .execute();
  const backlog: Record<string, number> = { email: 0, telegram: 0, operator: 0 };
  const sent: Record<string, number> = { email: 0, telegram: 0 };
  for (const row of rows) {
    if (row.status === 'pending') backlog[row.channel] = Number(row.n);
    if (row.status === 'sent' || row.status === 'kept') sent[row.channel] = (sent[row.channel] ?? 0) + Number(row.n);
  }
  const last = await db
    .selectFrom('notifications')
    .select(['id', 'channel', 'last_error', 'last_attempt_at'])
    .where('last_error', 'is not', null)
    .orderBy('last_attempt_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return { backlog, sent, lastFailure: last && { id: last.id, channel: last.channel, error: last.last_error, at: Number(last.last_attempt_at ?? 0) } };
}
