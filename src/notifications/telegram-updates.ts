/**
 * The Telegram bot's updates read by long polling (getUpdates), when no webhook secret is set:
 * one worker at a time holds the lease, and each update (a chat linking itself) is handled once.
 */
import type { Logger } from 'pino';
import type { Db } from '../db/engine.js';
import { handleUpdate } from './telegram-links.js';
import type { TelegramBot } from './telegram.js';

/** The notification_state row that holds the update offset and the polling lease. */
const TELEGRAM_STATE = 'telegram_updates';

export interface TelegramPollOptions {
  db: Db;
  logger: Logger;
  bot: TelegramBot;
  /** The worker polling: the lease's owner. */
  owner: string;
  /** TELEGRAM_POLL_SECONDS: getUpdates' long-poll timeout. */
  pollSeconds: number;
  now: () => number;
  /** False once the worker stops. */
  running: () => boolean;
  /** Aborted when the worker stops: ends a long poll and a wait. */
  signal: AbortSignal;
  /** BRAND_NAME, in the chat's confirmation. */
  brand: string;
}

/**
 * Reads the bot's updates by long polling, in one worker at a time: a lease on the
 * `telegram_updates` row, renewed before each poll and longer than one. The offset is stored
 * with it, so a restart neither loses nor repeats an update beyond the one being handled.
 */
export async function pollTelegramUpdates(options: TelegramPollOptions): Promise<void> {
  const { db, bot, owner, signal } = options;
  const seconds = options.pollSeconds;
  let failures = 0;
  while (options.running()) {
    let waitMs = 0;
    try {
      const offset = await takeLease(options, seconds * 1000 + 15_000);
      if (offset === undefined) waitMs = 5_000;
      else {
        const updates = await bot.getUpdates(offset, seconds, signal);
        for (const update of updates) {
          await handleUpdate(db.kysely, update, options.now(), options.brand);
          await db.kysely
            .updateTable('notification_state')
            .set({ value: String(update.update_id + 1) })
            .where('name', '=', TELEGRAM_STATE)
            .where('lease_owner', '=', owner)
            .execute();
        }
        failures = 0;
      }
    } catch (error) {
      if (!options.running()) break;
      failures++;
      waitMs = Math.min(30_000, 500 * 2 ** Math.min(failures, 6));
      options.logger.warn({ err: { message: (error as Error).message } }, 'telegram getUpdates failed; retrying');
    }
    if (waitMs > 0 && options.running()) await pause(waitMs, signal);
  }
  await db.kysely
    .updateTable('notification_state')
    .set({ lease_owner: null, lease_until: null })
    .where('name', '=', TELEGRAM_STATE)
    .where('lease_owner', '=', owner)
    .execute()
    .catch(() => undefined);
}

/** The offset to poll from when this worker holds (or took) the lease; undefined when another does. */
async function takeLease(options: TelegramPollOptions, ms: number): Promise<number | undefined> {
  const { kysely } = options.db;
  const { owner } = options;
  const now = options.now();
  await kysely
    .insertInto('notification_state')
    .values({ name: TELEGRAM_STATE, value: '0', lease_owner: null, lease_until: null })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const [row] = await kysely
    .updateTable('notification_state')
    .set({ lease_owner: owner, lease_until: now + ms })
    .where('name', '=', TELEGRAM_STATE)
    .where((w) => w.or([w('lease_owner', '=', owner), w('lease_owner', 'is', null), w('lease_until', '<', BigInt(now))]))
    .returning('value')
    .execute();
  return row ? Number(row.value ?? 0) : undefined;
}

/** Waits `ms`, or less when the worker stops. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
