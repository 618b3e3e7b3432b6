import type { Logger } from 'pino';
import type { NotificationConfig } from './config.js';
import type { Db } from '../db/engine.js';
import { Outage } from '../db/outage.js';
import type { Brand } from '../domain/brand.js';
import { randomBase62 } from '../domain/random.js';
import { signHtml, signOff, signText } from './message.js';
import type { MailTransport, SendOutcome } from './channels.js';
import { remindIncidents } from './incidents.js';
import { nodeLostDatabase, thisNode } from './notices.js';
import { enqueueMail, enqueueTelegram, type NotificationRow, onNotificationsQueued, operatorMessage } from './outbox.js';
import { markChatGone, OPERATOR_OWNER } from './telegram-links.js';
import type { TelegramBot } from './telegram.js';
import { pollTelegramUpdates } from './telegram-updates.js';
import { checkWatcher } from './watchers.js';

/** Sends in flight at once per worker process. */
const CONCURRENCY = 4;
/** Finished notifications are kept this long (`mail list`), then pruned. */
export const NOTIFICATION_RETENTION_MS = 30 * 86_400_000;

export interface NotificationWorkerOptions {
  db: Db;
  logger: Logger;
  config: NotificationConfig;
  /** Undefined without SMTP_URL: e-mails are kept for `starport mail show`. */
  mail: MailTransport | undefined;
  telegram: TelegramBot | undefined;
  /** The deposit watcher's address (raw form) when it runs: its stalls are incidents. */
  depositAddress: string | undefined;
  /** The name and support contact every e-mail is signed with, and Telegram chat links are told. */
  brand: Brand;
  /** Told of each attempt (the metrics). */
  onAttempt?: (channel: string, outcome: 'sent' | 'kept' | 'failed' | 'retry') => void;
  pollMs?: number;
  now?: () => number;
}

/**
 * Sends the notification outbox (worker role). Like the webhook dispatcher it claims due rows
 * with a lease (FOR UPDATE SKIP LOCKED on PostgreSQL) that outlasts one attempt (the send's
 * deadline plus a margin), so with any number of workers each attempt is made by one of them;
 * a worker killed mid-send leaves a lease that runs out, and the next claim sends the message
 * once more. It also: fans operator rows out to the configured channels, queues incident
 * reminders, watches the deposit watcher, reports this node's database outages once they end,
 * and (one worker at a time, under a lease) reads the Telegram bot's updates for chat links.
 */
export class NotificationWorker {
  readonly id = `ntw_${randomBase62(12)}`;
  private running = false;
  private loops: Promise<void>[] = [];
  private readonly inflight = new Set<Promise<void>>();
  private wakeUp: (() => void) | undefined;
  private woken = false;
  private unsubscribe: (() => void) | undefined;
  private readonly outage = new Outage('notification worker');
  private lostSince: number | undefined;
  private readonly pollMs: number;
  private readonly now: () => number;
  private nextHousekeepingAt = 0;
  private nextPruneAt = 0;
  private startedAt = 0;
  private readonly abort = new AbortController();

  constructor(private readonly options: NotificationWorkerOptions) {
    this.pollMs = options.pollMs ?? 500;
    this.now = options.now ?? Date.now;
  }

  get leaseMs(): number {
    return this.options.config.sendTimeoutMs + 5_000;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.startedAt = this.now();
    this.unsubscribe = onNotificationsQueued(() => this.wake());
    this.loops.push(this.run());
    const telegram = this.options.config.telegram;
    const bot = this.options.telegram;
    // With a webhook secret, updates arrive by the Bot API's webhook instead.
    if (bot && telegram && !telegram.webhookSecret) {
      this.loops.push(
        pollTelegramUpdates({
          db: this.options.db,
          logger: this.options.logger,
          bot,
          owner: this.id,
          pollSeconds: telegram.pollSeconds,
          now: this.now,
          running: () => this.running,
          signal: this.abort.signal,
          brand: this.options.brand.name,
        }),
      );
    }
  }

  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.unsubscribe?.();
    this.abort.abort();
    this.wake();
    await Promise.allSettled(this.loops);
    await Promise.allSettled([...this.inflight]);
    this.options.mail?.close();
  }

  private async run(): Promise<void> {
    while (this.running) {
      this.woken = false;
      let backoffMs: number | undefined;
      let claimed: NotificationRow[] = [];
      const free = CONCURRENCY - this.inflight.size;
      try {
        await this.housekeeping();
        if (free > 0) claimed = await this.claim(free, this.now());
        await this.databaseBack();
      } catch (error) {
        if (this.options.db.engine.isUnavailable(error)) {
          this.lostSince ??= this.now();
          backoffMs = this.outage.failed(this.options.logger, error);
        } else this.options.logger.error({ err: error, worker: this.id }, 'notification claim failed');
      }
      for (const row of claimed) this.track(this.deliver(row));
      if (!this.running) break;
      await this.sleep(backoffMs ?? (claimed.length === free && free > 0 ? 0 : this.pollMs), backoffMs !== undefined);
    }
  }

  /** This node's database came back: the operator is told how long it was gone. */
  private async databaseBack(): Promise<void> {
    this.outage.recovered(this.options.logger);
    if (this.lostSince === undefined) return;
    const lost = this.now() - this.lostSince;
    await this.options.db.kysely.transaction().execute((tx) => nodeLostDatabase(tx, thisNode(), lost, this.now()));
    this.lostSince = undefined;
  }

  private track(work: Promise<void>): void {
    const tracked = work
      .catch((error) => {
        // The outcome could not be stored: the lease runs out and the message is sent once more.
        this.options.logger.error({ err: error, worker: this.id }, 'notification delivery could not be recorded');
      })
      .finally(() => {
        this.inflight.delete(tracked);
        this.wake();
      });
    this.inflight.add(tracked);
  }

  /** Claims up to `limit` due notifications and counts their attempt. */
  async claim(limit: number, now: number): Promise<NotificationRow[]> {
    const { kysely, engine } = this.options.db;
    const at = BigInt(now);
    // A read first: an idle outbox (the common case) costs no write transaction per poll.
    const due = await kysely
      .selectFrom('notifications')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', at)
      .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', at)]))
      .limit(1)
      .execute();
    if (due.length === 0) return [];
    return kysely
      .updateTable('notifications')
      .set((eb) => ({ lease_owner: this.id, lease_until: now + this.leaseMs, attempts: eb('attempts', '+', 1n), last_attempt_at: now }))
      .where('id', 'in', (eb) =>
        engine.lockForClaim(
          eb
            .selectFrom('notifications')
            .select('id')
            .where('status', '=', 'pending')
            .where('next_attempt_at', '<=', at)
            .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', at)]))
            .orderBy('next_attempt_at')
            .limit(limit),
        ),
      )
      .returningAll()
      .execute();
  }

  /** Claims one notification by id, if due, and makes one attempt now (`starport notify test`). */
  async sendOne(id: string): Promise<void> {
    const now = this.now();
    const [row] = await this.options.db.kysely
      .updateTable('notifications')
      .set((eb) => ({ lease_owner: this.id, lease_until: now + this.leaseMs, attempts: eb('attempts', '+', 1n), last_attempt_at: now }))
      .where('id', '=', id)
      .where('status', '=', 'pending')
      .where((w) => w.or([w('lease_until', 'is', null), w('lease_until', '<', BigInt(now))]))
      .returningAll()
      .execute();
    if (row) await this.deliver(row);
    this.options.mail?.close();
  }

  /** One attempt of one claimed notification, and its outcome recorded. */
  async deliver(row: NotificationRow): Promise<void> {
    const { config, logger } = this.options;
    if (row.channel === 'operator') return this.fanOut(row);
    let outcome: SendOutcome | 'kept';
    if (row.channel === 'email') {
      if (!this.options.mail) outcome = 'kept';
      else {
        const lines = signOff(this.options.brand);
        const mail = { id: row.id, to: row.recipient, subject: row.subject, text: signText(row.body_text, lines), html: row.body_html && signHtml(row.body_html, lines) };
        outcome = await this.options.mail.send(mail, config.sendTimeoutMs);
      }
    } else if (!this.options.telegram) {
      outcome = { ok: false, permanent: true, error: 'TELEGRAM_BOT_TOKEN is not set' };
    } else {
      outcome = await this.options.telegram.sendMessage(row.recipient, row.body_text, config.sendTimeoutMs);
    }
    await this.record(row, outcome);
    const result = outcome === 'kept' ? 'kept' : outcome.ok ? 'sent' : outcome.permanent ? 'failed' : 'retry';
    this.options.onAttempt?.(row.channel, result);
    // Ids and topics only: a body or subject may hold a one-time link.
    if (outcome !== 'kept' && !outcome.ok) {
      logger.warn(
        { notification: row.id, channel: row.channel, topic: row.topic, attempt: Number(row.attempts), error: outcome.error, permanent: outcome.permanent },
        'notification attempt failed',
      );
    } else if (outcome === 'kept' && row.attempts === 1n) {
      logger.info({ notification: row.id, topic: row.topic }, 'e-mail kept in the database (no SMTP_URL): starport mail show');
    }
  }

  private async record(row: NotificationRow, outcome: SendOutcome | 'kept'): Promise<void> {
    const now = this.now();
    let status: NotificationRow['status'] = 'kept';
    let delay = 0;
    if (outcome !== 'kept') {
      if (outcome.ok) status = 'sent';
      else if (outcome.permanent) status = 'failed';
      else {
        status = 'pending';
        delay = outcome.retryAfterMs ?? this.retryDelay(Number(row.attempts));
      }
    }
    await this.options.db.kysely.transaction().execute(async (tx) => {
      await tx
        .updateTable('notifications')
        .set({
          status,
          next_attempt_at: status === 'pending' ? now + delay : null,
          lease_owner: null,
          lease_until: null,
          sent_at: status === 'sent' ? now : null,
          last_error: outcome === 'kept' || outcome.ok ? null : outcome.error,
        })
        .where('id', '=', row.id)
        .where('lease_owner', '=', this.id)
        .execute();
      if (outcome !== 'kept' && !outcome.ok && outcome.chatGone) await markChatGone(tx, row.recipient, now);
    });
  }

  private retryDelay(attempt: number): number {
    const delays = this.options.config.retryDelaysMs;
    const base = delays[Math.min(attempt - 1, delays.length - 1)] ?? 60_000;
    return Math.round(base * (0.9 + Math.random() * 0.2));
  }

  /** An operator row becomes one row per configured channel, in one transaction. */
  private async fanOut(row: NotificationRow): Promise<void> {
    const { config } = this.options;
    const now = this.now();
    const message = operatorMessage(row);
    await this.options.db.kysely.transaction().execute(async (tx) => {
      const taken = await tx
        .updateTable('notifications')
        .set({ status: 'sent', sent_at: now, lease_owner: null, lease_until: null, next_attempt_at: null })
        .where('id', '=', row.id)
        .where('lease_owner', '=', this.id)
        .executeTakeFirst();
      if (taken.numUpdatedRows !== 1n) return;
      let recipients = 0;
      for (const to of config.operatorEmails) {
        await enqueueMail(tx, { to, message, topic: row.topic }, now);
        recipients++;
      }
      const chat = config.telegram
        ? await tx.selectFrom('telegram_chats').select('chat_id').where('owner', '=', OPERATOR_OWNER).where('blocked_at', 'is', null).executeTakeFirst()
        : undefined;
      if (chat) {
        await enqueueTelegram(tx, { chatId: chat.chat_id, message, topic: row.topic }, now);
        recipients++;
      }
      if (recipients === 0) {
        await tx
          .updateTable('notifications')
          .set({ status: 'failed', sent_at: null, last_error: 'no operator channel: set OPERATOR_EMAILS or run starport notify link-telegram' })
          .where('id', '=', row.id)
          .execute();
      }
    });
    this.options.onAttempt?.('operator', 'sent');
  }

  /** About once a second: incident reminders, the deposit watcher's health, pruning. */
  private async housekeeping(): Promise<void> {
    const now = this.now();
    if (now < this.nextHousekeepingAt) return;
    this.nextHousekeepingAt = now + 1_000;
    const { db, config, depositAddress } = this.options;
    await remindIncidents(db.kysely, config.reminderMs, now);
    if (depositAddress) await checkWatcher(db.kysely, depositAddress, config.watcherStallMs, now, this.startedAt);
    if (now >= this.nextPruneAt) {
      this.nextPruneAt = now + 600_000;
      await db.kysely
        .deleteFrom('notifications')
        .where('status', 'in', ['sent', 'failed'])
        .where('created_at', '<', BigInt(now - NOTIFICATION_RETENTION_MS))
        .execute();
    }
  }

  private sleep(ms: number, unwoken: boolean): Promise<void> {
    if (this.woken && !unwoken) ms = 0;
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const self = this;
      function done() {
        clearTimeout(timer);
        self.wakeUp = undefined;
        resolve();
      }
      this.wakeUp = unwoken ? () => (self.running ? undefined : done()) : done;
    });
  }
}
