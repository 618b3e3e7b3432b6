import type { ColumnType } from 'kysely';
import type { Int, NullableInt } from './columns.js';

/** People who sign in, teams, sessions, one-time links, sign-in throttling and the audit log and the console's operators (migrations 0002, 0003, 0019, 0020, 0022, 0023). */

/** A member's role on an account (src/accounts/team.ts). */
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
  /** The console person who acted (migration 0023); null for the CLI and the dashboard. */
  operator_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** Their address (the console's rows). */
  ip: ColumnType<string | null, string | null | undefined, string | null>;
}

/** The operator console's people, sessions and set-password links (migration 0023). */
export type OperatorRole = 'admin' | 'support';

export interface OperatorsTable {
  id: string;
  email: string;
  role: OperatorRole;
  password_hash: string | null;
  totp_secret: string | null;
  totp_enabled_at: NullableInt;
  totp_last_step: NullableInt;
  created_at: Int;
  updated_at: Int;
}

export interface OperatorSessionsTable {
  /** SHA-256 (hex) of the session id in the console's cookie. */
  id_hash: string;
  operator_id: string;
  stage: 'enrol' | 'second_factor' | 'active';
  created_at: Int;
  last_seen_at: Int;
  expires_at: Int;
  /** When the code was last given (money moves ask for it again). */
  second_factor_at: NullableInt;
}

export interface OperatorLinksTable {
  /** SHA-256 (hex) of the token in the set-password link. */
  token_hash: string;
  operator_id: string;
  created_at: Int;
  expires_at: Int;
  used_at: NullableInt;
  voided_at: NullableInt;
}
