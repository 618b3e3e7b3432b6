import type { ColumnType } from 'kysely';
import type { Int, NullableInt } from './columns.js';

/** Webhook endpoints, the webhook outbox and delivery attempts (migration 0006). */

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
