import type { Kysely, Selectable } from 'kysely';
import { ApiError } from '../domain/api-error.js';
import type { Mode } from '../domain/api-key.js';
import { isPublicId, newId } from '../domain/random.js';
import type { Database, WebhookEndpointsTable } from '../db/schema.js';
import { WEBHOOK_EVENT_TYPES } from '../domain/webhook-events.js';
import { newWebhookSecret } from './signing.js';

/** Webhook endpoints of one account and mode: create, list, delete, rotate, enable. */

const MAX_ENDPOINTS_PER_MODE = 16;
/** `webhook.test`: sent only by "send test event"; never matched by an events filter. */
export const TEST_EVENT_TYPE = 'webhook.test';
export { WEBHOOK_EVENT_TYPES };

export interface WebhookEndpoint {
  id: string;
  accountId: string;
  mode: Mode;
  url: string;
  /** Event types, or ['*'] for all. */
  events: string[];
  status: 'enabled' | 'disabled';
  disabledReason: string | null;
  disabledAt: number | null;
  failingSince: number | null;
  createdAt: number;
  secret: string;
  /** Still signed with until previousSecretUntil (rotation grace). */
  previousSecret: string | null;
  previousSecretUntil: number | null;
}

export interface Scope {
  accountId: string;
  mode: Mode;
}

const optional = (value: bigint | null) => (value === null ? null : Number(value));

export function endpointFromRow(row: Selectable<WebhookEndpointsTable>): WebhookEndpoint {
  return {
    id: row.id,
    accountId: row.account_id,
    mode: row.mode,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    status: row.status,
    disabledReason: row.disabled_reason,
    disabledAt: optional(row.disabled_at),
    failingSince: optional(row.failing_since),
    createdAt: Number(row.created_at),
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretUntil: optional(row.previous_secret_until),
  };
}

/** The secrets a delivery at `now` is signed with: the current one, and the previous one during its grace. */
export function signingSecrets(endpoint: WebhookEndpoint, now: number): string[] {
  const previous = endpoint.previousSecret && (endpoint.previousSecretUntil ?? 0) > now ? [endpoint.previousSecret] : [];
  return [endpoint.secret, ...previous];
}

/** Whether an endpoint subscribed to `type`. */
export function matches(endpoint: Pick<WebhookEndpoint, 'events'>, type: string): boolean {
  return endpoint.events.includes('*') || endpoint.events.includes(type);
}

/** The events filter of a request: absent = all; otherwise known types, or exactly ['*']. */
export function parseEvents(raw: unknown): string[] {
  if (raw === undefined) return ['*'];
  const invalid = (message: string) => new ApiError('invalid_events', message, 'events');
  if (!Array.isArray(raw) || raw.length === 0) throw invalid('events must be a non-empty array of event types, or ["*"] for all.');
  const unique = [...new Set(raw)];
  for (const type of unique) {
    if (typeof type !== 'string' || (type !== '*' && !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(type))) {
      throw invalid(`events may only contain ${WEBHOOK_EVENT_TYPES.join(', ')} or "*"; got ${JSON.stringify(type)}.`);
    }
  }
  if (unique.includes('*') && unique.length > 1) throw invalid('"*" already means every event type; send it alone.');
  return unique as string[];
}

export async function listEndpoints(db: Kysely<Database>, scope: Scope): Promise<WebhookEndpoint[]> {
  const rows = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', scope.accountId)
    .where('mode', '=', scope.mode)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(endpointFromRow);
}

/** The disabled endpoints of an account, both modes, oldest first (the overview calls them out). */
export async function disabledEndpoints(db: Kysely<Database>, accountId: string): Promise<WebhookEndpoint[]> {
  const rows = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('mode', 'in', ['live', 'test'])
    .where('status', '=', 'disabled')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(endpointFromRow);
}

export async function findEndpoint(db: Kysely<Database>, id: string, scope: Scope): Promise<WebhookEndpoint | undefined> {
  if (!isPublicId('we', id)) return undefined;
  const row = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).where('account_id', '=', scope.accountId).where('mode', '=', scope.mode).executeTakeFirst();
  return row && endpointFromRow(row);
}

export function endpointNotFound(id: string, mode: Mode): ApiError {
  return new ApiError('webhook_endpoint_not_found', `No webhook endpoint ${id} in ${mode} mode for this account.`, 'id');
}

export async function requireEndpoint(db: Kysely<Database>, id: string, scope: Scope): Promise<WebhookEndpoint> {
  const endpoint = await findEndpoint(db, id, scope);
  if (!endpoint) throw endpointNotFound(id, scope.mode);
  return endpoint;
}

/** Creates an endpoint (the URL already vetted); refuses past MAX_ENDPOINTS_PER_MODE. */
export async function createEndpoint(db: Kysely<Database>, scope: Scope, input: { url: string; events: string[]; now: number }): Promise<WebhookEndpoint> {
  const id = newId('we');
  await db.transaction().execute(async (tx) => {
    const count = await tx
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll().as('n'))
      .where('account_id', '=', scope.accountId)
      .where('mode', '=', scope.mode)
      .executeTakeFirstOrThrow();
    if (Number(count.n) >= MAX_ENDPOINTS_PER_MODE) {
      throw new ApiError('webhook_endpoint_limit', `An account can have at most ${MAX_ENDPOINTS_PER_MODE} webhook endpoints per mode; delete one first.`);
    }
    await tx
      .insertInto('webhook_endpoints')
      .values({
        id,
        account_id: scope.accountId,
        mode: scope.mode,
        url: input.url,
        events: JSON.stringify(input.events),
        secret: newWebhookSecret(),
        previous_secret: null,
        previous_secret_until: null,
        status: 'enabled',
        disabled_reason: null,
        disabled_at: null,
        failing_since: null,
        created_at: input.now,
        updated_at: input.now,
      })
      .execute();
  });
  return (await findEndpoint(db, id, scope)) as WebhookEndpoint;
}

/** Deletes an endpoint with its messages and attempt log; false when there was none. */
export async function deleteEndpoint(db: Kysely<Database>, id: string, scope: Scope): Promise<boolean> {
  if (!(await findEndpoint(db, id, scope))) return false;
  await db.transaction().execute(async (tx) => {
    await tx.deleteFrom('webhook_attempts').where('endpoint_id', '=', id).execute();
    await tx.deleteFrom('webhook_messages').where('endpoint_id', '=', id).execute();
    await tx.deleteFrom('webhook_endpoints').where('id', '=', id).execute();
  });
  return true;
}

/**
 * A new secret; the old one keeps signing (as a second `v1,` signature) for `graceMs`, so
 * receivers can switch without dropping deliveries. Rotating again inside the grace ends the
 * oldest secret at once.
 *
 * One statement, which reads the secret it demotes from the row it writes (the row lock on
 * PostgreSQL, the single writer on SQLite): concurrent rotations apply one after the other, and
 * the previous secret is always the one the last rotation replaced, never an older one read
 * before another rotation wrote. Each caller gets back the row as its own rotation left it.
 */
export async function rotateSecret(db: Kysely<Database>, endpoint: WebhookEndpoint, input: { now: number; graceMs: number }): Promise<WebhookEndpoint> {
  const keepsOld = input.graceMs > 0;
  const row = await db
    .updateTable('webhook_endpoints')
    .set((eb) => ({
      secret: newWebhookSecret(),
      previous_secret: keepsOld ? eb.ref('secret') : null,
      previous_secret_until: keepsOld ? input.now + input.graceMs : null,
      updated_at: input.now,
    }))
    .where('id', '=', endpoint.id)
    .returningAll()
    .executeTakeFirst();
  // Deleted since it was found.
  if (!row) throw endpointNotFound(endpoint.id, endpoint.mode);
  return endpointFromRow(row);
}

/** Re-enables a disabled endpoint: its pending messages resume, the failure streak restarts. */
export async function enableEndpoint(db: Kysely<Database>, endpoint: WebhookEndpoint, now: number): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set({ status: 'enabled', disabled_reason: null, disabled_at: null, failing_since: null, updated_at: now })
    .where('id', '=', endpoint.id)
    .execute();
}
