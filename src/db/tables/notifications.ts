import type { ColumnType } from 'kysely';
import type { Int, NullableInt } from './columns.js';

/** The notification outbox, linked Telegram chats, switches, incidents and sign-in addresses (migration 0021). */

/** The notification outbox (migration 0021-notifications): one message per channel and recipient. */
export interface NotificationsTable {
  id: string;
  channel: 'email' | 'telegram' | 'operator';
  /** An e-mail address, a Telegram chat id, or '' for an operator row (fanned out by a worker). */
  recipient: string;
  person_id: string | null;
  account_id: string | null;
  topic: string;
  subject: string;
  body_text: string;
  body_html: string | null;
  /** JSON array of values in the bodies never shown in lists or logs (a one-time link). */
  secrets: string | null;
  status: 'pending' | 'sent' | 'kept' | 'failed';
  attempts: ColumnType<bigint, bigint | number | undefined, bigint | number>;
  next_attempt_at: NullableInt;
  lease_owner: string | null;
  lease_until: NullableInt;
  last_attempt_at: NullableInt;
  last_error: string | null;
  sent_at: NullableInt;
  created_at: Int;
}

/** A linked Telegram chat: `owner` is a person's id, or 'operator'. */
export interface TelegramChatsTable {
  owner: string;
  chat_id: string;
  title: string | null;
  linked_at: Int;
  blocked_at: NullableInt;
}

export interface TelegramLinkTokensTable {
  token_hash: string;
  owner: string;
  created_at: Int;
  expires_at: Int;
  used_at: NullableInt;
}

export interface NotificationSettingsTable {
  person_id: string;
  account_id: string;
  topic: string;
  channel: string;
  enabled: Int;
}

export interface NotificationIncidentsTable {
  key: string;
  state: 'open' | 'resolved';
  title: string;
  detail: string | null;
  opened_at: Int;
  reminded_at: Int;
  resolved_at: NullableInt;
}

export interface NotificationStateTable {
  name: string;
  value: string | null;
  lease_owner: string | null;
  lease_until: NullableInt;
}

export interface SignInAddressesTable {
  person_id: string;
  address: string;
  first_seen_at: Int;
}
