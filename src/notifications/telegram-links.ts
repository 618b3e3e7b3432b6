import type { Kysely } from 'kysely';
import { hashSecret, newSecret } from '../accounts/secrets.js';
import { DEFAULT_BRAND_NAME } from '../domain/brand.js';
import type { Database } from '../db/schema.js';
import { enqueueTelegram } from './outbox.js';
import type { TelegramUpdate } from './telegram.js';

/**
 * Linking a Telegram chat (docs/operations.md "Notifications"): a one-time token in a deep link
 * `https://t.me/<bot>?start=<token>`; the bot receives `/start <token>` from the chat that
 * opened it, and that chat becomes the owner's (a person's id, or 'operator'). The token is
 * stored as a hash and works once, for LINK_TTL_MS. A chat where the bot was blocked keeps its
 * row with `blocked_at` (the dashboard says so) until linked again or removed.
 */
export const LINK_TTL_MS = 15 * 60_000;
export const OPERATOR_OWNER = 'operator';

export async function createLinkToken(db: Kysely<Database>, owner: string, now = Date.now()): Promise<{ token: string; expiresAt: number }> {
  const token = newSecret();
  await db
    .insertInto('telegram_link_tokens')
    .values({ token_hash: hashSecret(token), owner, created_at: now, expires_at: now + LINK_TTL_MS, used_at: null })
    .execute();
  return { token, expiresAt: now + LINK_TTL_MS };
}

export function deepLink(botUsername: string, token: string): string {
  return `https://t.me/${botUsername}?start=${token}`;
}

export interface LinkedChat {
  owner: string;
  chatId: string;
  title: string | null;
  linkedAt: number;
  blockedAt: number | null;
}

export async function linkedChat(db: Kysely<Database>, owner: string): Promise<LinkedChat | undefined> {
  const row = await db.selectFrom('telegram_chats').selectAll().where('owner', '=', owner).executeTakeFirst();
  return row && { owner: row.owner, chatId: row.chat_id, title: row.title, linkedAt: Number(row.linked_at), blockedAt: row.blocked_at === null ? null : Number(row.blocked_at) };
}

export async function unlinkChat(db: Kysely<Database>, owner: string): Promise<boolean> {
  const deleted = await db.deleteFrom('telegram_chats').where('owner', '=', owner).executeTakeFirst();
  return deleted.numDeletedRows > 0n;
}

/** The bot was blocked in this chat (a 403): every owner linked to it is unlinked. */
export async function markChatGone(tx: Kysely<Database>, chatId: string, now: number): Promise<void> {
  await tx.updateTable('telegram_chats').set({ blocked_at: now }).where('chat_id', '=', chatId).where('blocked_at', 'is', null).execute();
}

/**
 * Handles one update: `/start <token>` links the chat when the token is valid and unused, and
 * the chat is told either way (through the outbox). Anything else is ignored. Returns the owner
 * linked, if any.
 */
export async function handleUpdate(db: Kysely<Database>, update: TelegramUpdate, now = Date.now(), brand = DEFAULT_BRAND_NAME): Promise<string | undefined> {
  const message = update.message;
  const match = /^\/start(?:@\w+)?\s+([A-Za-z0-9_-]{1,64})\s*$/.exec(message?.text ?? '');
  if (!message || !match) return undefined;
  const chatId = String(message.chat.id);
  const title = message.chat.title ?? (message.chat.username ? `@${message.chat.username}` : (message.chat.first_name ?? null));
  const tokenHash = hashSecret(match[1] as string);
  return db.transaction().execute(async (tx) => {
    const [spent] = await tx
      .updateTable('telegram_link_tokens')
      .set({ used_at: now })
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', BigInt(now))
      .returning('owner')
      .execute();
    if (!spent) {
      await enqueueTelegram(
        tx,
        {
          chatId,
          topic: 'link',
          message: {
            subject: 'Link not accepted',
            parts: [
              `This link is unknown, already used or expired. Open a new one from the dashboard${brand === DEFAULT_BRAND_NAME ? ' (or starport notify link-telegram)' : ''}.`,
            ],
          },
        },
        now,
      );
      return undefined;
    }
    await tx.deleteFrom('telegram_chats').where('owner', '=', spent.owner).execute();
    await tx.insertInto('telegram_chats').values({ owner: spent.owner, chat_id: chatId, title, linked_at: now, blocked_at: null }).execute();
    const who = spent.owner === OPERATOR_OWNER ? 'the operator’s alerts' : `your ${brand} notifications`;
    await enqueueTelegram(tx, { chatId, topic: 'link', message: { subject: 'Chat linked', parts: [`This chat now receives ${who}.`] } }, now);
    return spent.owner;
  });
}
