import type { ColumnType, Generated, Selectable } from 'kysely';

/**
 * Table types. Integers come back as bigint on both engines (better-sqlite3 safe-integer mode;
 * pg's int8 parser), so every integer column is typed bigint here and converted to domain
 * types in the row mappers of each feature. Timestamps are epoch milliseconds.
 */
type Int = ColumnType<bigint, bigint | number, bigint | number>;
type NullableInt = ColumnType<bigint | null, bigint | number | null, bigint | number | null>;

export interface AccountsTable {
  id: string;
  email: string;
  status: 'active' | 'disabled';
  created_at: Int;
  /** Set when an owner turned on "require two-factor" for every member (migration 0019). */
  two_factor_required_at: ColumnType<bigint | null, bigint | number | null | undefined, bigint | number | null>;
  /** Set while no owner has verified an address since sign-up (migration 0022). */
  unverified_since: ColumnType<bigint | null, bigint | number | null | undefined, bigint | number | null>;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  mode: 'live' | 'test';
  key_hash: string;
  display_prefix: string;
  created_at: Int;
  revoked_at: NullableInt;
}

export interface BalancesTable {
  account_id: string;
  mode: 'live' | 'test';
  available: Int;
  reserved: Int;
  /** The `seq` of the balance's last journal row (bumped by the movement's own UPDATE). */
  journal_seq: ColumnType<bigint, bigint | number | undefined, bigint | number>;
  /** The low-balance alert's threshold (nanotons), null when none is set (src/ledger/low-balance.ts). */
  low_balance_threshold: ColumnType<bigint | null, bigint | number | null | undefined, bigint | number | null>;
}

/** Per account, mode and UTC day of creation: the orders that reached a final status (migration 0018; src/orders/order-days.ts). */
export interface OrderDaysTable {
  account_id: string;
  mode: 'live' | 'test';
  /** `created_at / 86400000` of the orders counted. */
  day: Int;
  delivered: Int;
  delivered_amount: Int;
  failed: Int;
  failed_amount: Int;
}

/** Per account, mode and UTC day: the net change of the available balance (migration 0018; src/ledger/balance-days.ts). */
export interface BalanceDaysTable {
  account_id: string;
  mode: 'live' | 'test';
  /** `created_at / 86400000` of the movements summed. */
  day: Int;
  available_net: Int;
}

export interface JournalTable {
  /** `jrn_` + 22 random base62 + the seq (src/ledger/entry-id.ts); no index covers every id. */
  id: string;
  account_id: string;
  mode: 'live' | 'test';
  kind: 'deposit' | 'adjustment' | 'reserve' | 'debit' | 'release';
  order_id: string | null;
  /** The order's `order_no` (the index of an order's movements); null without an order. */
  order_no: NullableInt;
  available_delta: Int;
  reserved_delta: Int;
  reason: string | null;
  created_at: Int;
  /** Per account and mode: 1, 2, 3… in the order the movements were applied. */
  seq: Int;
  /** The balance right after this movement. */
  balance_available: Int;
  balance_reserved: Int;
}

export interface OrdersTable {
  id: string;
  account_id: string;
  mode: 'live' | 'test';
  idempotency_key: string;
  fingerprint: string;
  product: 'stars' | 'premium';
  recipient: string;
  quantity: Int;
  amount: Int;
  external_id: string | null;
  status: 'fulfillment_pending' | 'processing' | 'delivered' | 'failed';
  failure_reason: string | null;
  created_at: Int;
  updated_at: Int;
  /** When a worker should next act on the order; null once final. */
  next_run_at: NullableInt;
  lease_owner: string | null;
  lease_until: NullableInt;
  attempts: Generated<bigint>;
  /**
   * Internal, never in the API: ascending in creation order, so that the rows keyed by it (an
   * order's events and movements) are appended to the same few index pages. PostgreSQL fills it
   * (identity); on SQLite the insert does (order-store.ts nextOrderNumber).
   */
  order_no: Generated<bigint>;
}

export interface OrderEventsTable {
  id: string;
  order_id: string;
  /** The order's `order_no`: with `seq`, the key. */
  order_no: Int;
  /** Per-order sequence: breaks timestamp ties in the events array. */
  seq: Int;
  type: string;
  status: string;
  data: string;
  created_at: Int;
}

/** A person who logs in to the dashboard: one per account. */
export type TeamRole = 'owner' | 'developer' | 'viewer';

export interface PeopleTable {
  id: string;
  email: string;
  /** argon2id (PHC string); null until set through a one-time link. */
  password_hash: string | null;
  /** Base32 TOTP secret; enrolled once totp_enabled_at is set. */
  totp_secret: string | null;
  totp_enabled_at: NullableInt;
  totp_last_step: NullableInt;
  /** Set while the address waits for its verification link (migration 0022). */
  email_unverified_since: ColumnType<bigint | null, bigint | number | null | undefined, bigint | number | null>;
  created_at: Int;
  updated_at: Int;
}

export interface MembershipsTable {
  account_id: string;
  person_id: string;
  role: TeamRole;
  created_at: Int;
}

export interface TeamInvitesTable {
  /** SHA-256 (hex) of the token in the invite link. */
  token_hash: string;
  account_id: string;
  email: string;
  role: TeamRole;
  invited_by: string;
  created_at: Int;
  expires_at: Int;
  used_at: NullableInt;
  /** Voided before use: by an owner, or because the inviter lost the right to invite. */
  revoked_at: NullableInt;
  /** Why, as shown to whoever opens the link. */
  revoked_reason: string | null;
}

export interface RecoveryCodesTable {
  person_id: string;
  /** SHA-256 (hex) of the code. */
  code_hash: string;
  created_at: Int;
  used_at: NullableInt;
}

export interface DashboardSessionsTable {
  /** SHA-256 (hex) of the session id in the cookie. */
  id_hash: string;
  /** The account the session is looking at (switchable among the person's memberships). */
  account_id: string;
  person_id: string | null;
  created_at: Int;
  last_seen_at: Int;
  expires_at: Int;
  /** When the second factor was last given in this session (step-up after 10 minutes). */
  second_factor_at: NullableInt;
  /** 'active', or 'second_factor' between a right password and the code. */
  stage: ColumnType<'active' | 'second_factor', 'active' | 'second_factor' | undefined, 'active' | 'second_factor'>;
}

export interface PasswordTokensTable {
  /** SHA-256 (hex) of the token in the set-password link. */
  token_hash: string;
  account_id: string;
  person_id: string | null;
  created_at: Int;
  expires_at: Int;
  used_at: NullableInt;
}

export interface EmailTokensTable {
  /** SHA-256 (hex) of the token in the e-mailed link. */
  token_hash: string;
  purpose: 'password_reset' | 'verify_email' | 'change_email';
  /** Null for a reset asked for an address nobody has (never usable). */
  person_id: string | null;
  /** The address the link was sent to (for change_email: the new address). */
  email: string;
  created_at: Int;
  expires_at: Int;
  used_at: NullableInt;
  /** Replaced by a newer link before use. */
  voided_at: NullableInt;
}

export interface SessionEndsTable {
  id_hash: string;
  reason: 'removed';
  ended_at: Int;
}

export interface MailRequestsTable {
  id: string;
  kind: string;
  email: string;
  ip: string;
  created_at: Int;
}

export interface AuthAttemptsTable {
  id: string;
  kind: 'login_failed' | 'signup';
  email: string;
  ip: string;
  created_at: Int;
}

export interface DepositMemosTable {
  account_id: string;
  memo: string;
  created_at: Int;
}

export interface DashboardSecretsTable {
  name: string;
  value: string;
  created_at: Int;
}

export interface AuditLogTable {
  id: string;
  created_at: Int;
  actor: string;
  source: string;
  action: string;
  account_id: string | null;
  mode: 'live' | 'test' | null;
  order_id: string | null;
  reason: string | null;
  /** JSON object. */
  details: string;
}

/** Operator-set values every process reads on its next call (migration 0007-live). */
export interface LiveSettingsTable {
  name: string;
  /** May be a secret (the Fragment session): never logged or printed. */
  value: string;
  updated_at: Int;
}

/** The live upstream's circuit breaker, shared by every process. */
export interface LiveBreakerTable {
  name: string;
  state: 'closed' | 'open';
  reason: string | null;
  message: string | null;
  failures: Generated<bigint>;
  opened_at: NullableInt;
  retry_at: NullableInt;
  probe_until: NullableInt;
  updated_at: Int;
}

/** The payment request Fragment issued for a live order. */
export interface LivePaymentsTable {
  order_id: string;
  fragment_req_id: string;
  recipient_name: string | null;
  quoted_amount: Int;
  destination: string;
  amount: Int;
  /** base64url BOC exactly as Fragment sent it. */
  payload: string;
  /** Epoch milliseconds. */
  valid_until: Int;
  created_at: Int;
  updated_at: Int;
}

/** The per-wallet lock row (migration 0008-wallet). */
export interface WalletStateTable {
  address: string;
  locked_at: Int;
}

export type WalletMessageState = 'signed' | 'broadcast' | 'confirmed' | 'expired' | 'held';

/** A signed external message of the paying wallet, stored before broadcast (0008-wallet). */
export interface WalletMessagesTable {
  hash: string;
  wallet: string;
  seqno: Int;
  valid_until: Int;
  boc: string;
  state: WalletMessageState;
  total: Int;
  tx_hash: string | null;
  tx_lt: string | null;
  broadcasts: Generated<bigint>;
  last_broadcast_at: Int | null;
  checked_at: Int | null;
  created_at: Int;
  resolved_at: Int | null;
  updated_at: Int;
}

/** An order paid by a wallet message (0008-wallet). */
export interface WalletMessageOrdersTable {
  message_hash: string;
  order_id: string;
  destination: string;
  amount: Int;
  body_hash: string;
  outcome: 'pending' | 'paid' | 'unpaid' | 'held';
}

/** An incoming transfer to the deposit wallet (migration 0005-deposits). */
export interface DepositsTable {
  id: string;
  tx_hash: string;
  lt: Int;
  address: string;
  sender: string;
  amount: Int;
  comment: string | null;
  /**
   * `returned` (migration 0010-deposit-returns): the operator sent the TON back by hand.
   * `awaiting_rate`, `ignored` (migration 0016-usdt-deposits): a matched USDT deposit waiting
   * for a fresh rate; a notification from a jetton wallet that is not ours.
   */
  status: 'credited' | 'unmatched' | 'returned' | 'awaiting_rate' | 'ignored';
  reason: 'no_comment' | 'memo_invalid' | 'memo_unknown' | 'below_minimum' | 'unknown_jetton' | null;
  account_id: string | null;
  chain_time: Int;
  created_at: Int;
  credited_at: NullableInt;
  credited_by: 'watcher' | 'operator' | null;
  /** Set exactly when status is `returned`. */
  returned_at: ColumnType<bigint | null, bigint | number | null | undefined, bigint | number | null>;
  /** Migration 0016-usdt-deposits. */
  asset: ColumnType<'TON' | 'USDT' | 'jetton', 'TON' | 'USDT' | 'jetton' | undefined, 'TON' | 'USDT' | 'jetton'>;
  /** Token units (USDT: 6 decimals); text on SQLite, numeric on PostgreSQL. */
  jetton_amount: ColumnType<string | null, string | null | undefined, string | null>;
  jetton_wallet: ColumnType<string | null, string | null | undefined, string | null>;
  /** USD per TON, exact decimal text. */
  rate: ColumnType<string | null, string | null | undefined, string | null>;
  rate_at: ColumnType<bigint | null, bigint | number | null | undefined, bigint | number | null>;
}

/** The deposit wallet's jetton wallet per master (migration 0016-usdt-deposits). */
export interface JettonWalletsTable {
  owner: string;
  master: string;
  wallet: string;
  computed_at: Int;
}

export interface DepositCursorsTable {
  address: string;
  lt: Int;
  hash: string;
  chain_time: Int;
  checked_at: Int;
}

/** A backlog walk in progress, at most one per deposit wallet (migration 0009-deposit-walks). */
export interface DepositWalksTable {
  address: string;
  top_lt: Int;
  top_hash: string;
  top_chain_time: Int;
  resume_lt: Int;
  resume_hash: string;
  started_at: Int;
  updated_at: Int;
}

/** Webhook endpoints per account and mode (migration 0006-webhooks). */
export interface WebhookEndpointsTable {
  id: string;
  account_id: string;
  mode: 'live' | 'test';
  url: string;
  /** JSON array of event types, or ["*"]. */
  events: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: NullableInt;
  status: 'enabled' | 'disabled';
  disabled_reason: string | null;
  disabled_at: NullableInt;
  failing_since: NullableInt;
  created_at: Int;
  updated_at: Int;
}

/** The webhook outbox: one message per event and matching endpoint. */
export interface WebhookMessagesTable {
  id: string;
  endpoint_id: string;
  account_id: string;
  mode: 'live' | 'test';
  event_id: string;
  event_type: string;
  payload: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: ColumnType<bigint, bigint | number | undefined, bigint | number>;
  next_attempt_at: NullableInt;
  lease_owner: string | null;
  lease_until: NullableInt;
  last_attempt_at: NullableInt;
  created_at: Int;
}

export interface WebhookAttemptsTable {
  id: string;
  message_id: string;
  endpoint_id: string;
  attempt: Int;
  started_at: Int;
  duration_ms: Int;
  status_code: NullableInt;
  outcome: 'succeeded' | 'failed';
  error: string | null;
  response_snippet: string | null;
}

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

/** A price given by GET /quote, which one order may lock (POST /orders `quote_id`). */
export interface QuotesTable {
  id: string;
  account_id: string;
  mode: 'live' | 'test';
  product: 'stars' | 'premium';
  quantity: Int;
  amount: Int;
  created_at: Int;
  expires_at: Int;
  used_by_order_id: string | null;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  balances: BalancesTable;
  journal: JournalTable;
  balance_days: BalanceDaysTable;
  orders: OrdersTable;
  order_days: OrderDaysTable;
  order_events: OrderEventsTable;
  people: PeopleTable;
  memberships: MembershipsTable;
  team_invites: TeamInvitesTable;
  recovery_codes: RecoveryCodesTable;
  dashboard_sessions: DashboardSessionsTable;
  password_tokens: PasswordTokensTable;
  auth_attempts: AuthAttemptsTable;
  email_tokens: EmailTokensTable;
  mail_requests: MailRequestsTable;
  session_ends: SessionEndsTable;
  deposit_memos: DepositMemosTable;
  dashboard_secrets: DashboardSecretsTable;
  audit_log: AuditLogTable;
  live_settings: LiveSettingsTable;
  live_breaker: LiveBreakerTable;
  live_payments: LivePaymentsTable;
  deposits: DepositsTable;
  deposit_cursors: DepositCursorsTable;
  deposit_walks: DepositWalksTable;
  jetton_wallets: JettonWalletsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_messages: WebhookMessagesTable;
  webhook_attempts: WebhookAttemptsTable;
  quotes: QuotesTable;
  wallet_state: WalletStateTable;
  wallet_messages: WalletMessagesTable;
  wallet_message_orders: WalletMessageOrdersTable;
  notifications: NotificationsTable;
  telegram_chats: TelegramChatsTable;
  telegram_link_tokens: TelegramLinkTokensTable;
  notification_settings: NotificationSettingsTable;
  notification_incidents: NotificationIncidentsTable;
  notification_state: NotificationStateTable;
  sign_in_addresses: SignInAddressesTable;
}

export type OrderRow = Selectable<OrdersTable>;
export type OrderEventRow = Selectable<OrderEventsTable>;
export type AuditLogRow = Selectable<AuditLogTable>;
export type DepositRow = Selectable<DepositsTable>;
export type JournalRow = Selectable<JournalTable>;
