import type { Selectable } from 'kysely';
import type { AccountsTable, ApiKeysTable } from './tables/accounts.js';
import type { BalancesTable, BalanceDaysTable, JournalTable } from './tables/ledger.js';
import type { OrderDaysTable, OrdersTable, OrderEventsTable, QuotesTable } from './tables/orders.js';
import type {
  PeopleTable,
  MembershipsTable,
  TeamInvitesTable,
  RecoveryCodesTable,
  DashboardSessionsTable,
  PasswordTokensTable,
  EmailTokensTable,
  SessionEndsTable,
  MailRequestsTable,
  AuthAttemptsTable,
  DepositMemosTable,
  DashboardSecretsTable,
  AuditLogTable,
  OperatorsTable,
  OperatorSessionsTable,
  OperatorLinksTable,
} from './tables/people.js';
import type { LiveSettingsTable, LiveBreakerTable, LivePaymentsTable, WalletStateTable, WalletMessagesTable, WalletMessageOrdersTable } from './tables/live.js';
import type { DepositsTable, JettonWalletsTable, DepositCursorsTable, DepositWalksTable } from './tables/deposits.js';
import type { WebhookEndpointsTable, WebhookMessagesTable, WebhookAttemptsTable } from './tables/webhooks.js';
import type {
  NotificationsTable,
  TelegramChatsTable,
  TelegramLinkTokensTable,
  NotificationSettingsTable,
  NotificationIncidentsTable,
  NotificationStateTable,
  SignInAddressesTable,
} from './tables/notifications.js';
import type { AccountPlansTable, PricePlansTable } from './tables/plans.js';

/**
 * The database's tables, one file per area under tables/ (each names the migrations that made
 * it). Integers are bigint on both engines (tables/columns.ts). Every feature imports its row
 * types from here.
 */
export type * from './tables/accounts.js';
export type * from './tables/ledger.js';
export type * from './tables/orders.js';
export type * from './tables/people.js';
export type * from './tables/live.js';
export type * from './tables/deposits.js';
export type * from './tables/webhooks.js';
export type * from './tables/notifications.js';
export type * from './tables/plans.js';

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
  operators: OperatorsTable;
  operator_sessions: OperatorSessionsTable;
  operator_links: OperatorLinksTable;
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
  price_plans: PricePlansTable;
  account_plans: AccountPlansTable;
}

export type OrderRow = Selectable<OrdersTable>;
export type OrderEventRow = Selectable<OrderEventsTable>;
export type AuditLogRow = Selectable<AuditLogTable>;
export type DepositRow = Selectable<DepositsTable>;
export type JournalRow = Selectable<JournalTable>;
