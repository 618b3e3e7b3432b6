import os from 'node:os';
import type { Kysely } from 'kysely';
import { DEFAULT_BRAND_NAME } from '../domain/brand.js';
import type { Database } from '../db/schema.js';
import type { Mode } from '../domain/api-key.js';
import { formatTon } from '../domain/money.js';
import { formatDuration, openIncident, resolveIncident } from './incidents.js';
import { notifyAccount, notifyOperator, notifyPerson } from './outbox.js';

/**
 * The notifications each feature sends, one function per event, each called inside the
 * transaction of that event (docs/operations.md "Notifications"). Client values (usernames,
 * external ids, URLs, e-mail addresses) go into the message as text: message.ts escapes them
 * in every HTML form.
 */

export const LIVE_INCIDENT = 'live_paused';
export const WALLET_INCIDENT = 'wallet_low';

// ---- The operator ----

/** The live breaker opened (src/live/breaker.ts): one alert however many nodes saw the fault. */
export async function liveFulfilmentPaused(tx: Kysely<Database>, reason: string, upstreamMessage: string | null, now: number): Promise<void> {
  // "Access denied" means the session's account lacks the right (wallet not linked, no KYC:
  // docs/upstreams.md) or the session is no longer logged in: either way the operator acts on it.
  const session = reason === 'session_expired' || reason === 'access_denied';
  const parts = [
    session
      ? 'Fragment refused the session: live fulfilment is paused until new cookies are set (starport fragment session set).'
      : `Live fulfilment is paused (${reason}). New live orders answer 503 live_unavailable; queued ones wait up to LIVE_MAX_WAIT_SECONDS, then fail.`,
  ];
  if (reason === 'access_denied') parts.push('If new cookies do not help, check that the Fragment account has its TON wallet linked and KYC done (starport live check).');
  if (upstreamMessage) parts.push(`Fragment said: ${upstreamMessage.slice(0, 500)}`);
  await openIncident(
    tx,
    LIVE_INCIDENT,
    {
      title: session ? 'Fragment refuses the session' : `Live fulfilment paused (${reason})`,
      message: { subject: session ? 'Fragment refused the session: new cookies needed' : `Live fulfilment paused: ${reason}`, parts },
    },
    now,
  );
}

/** The live breaker closed again. */
export async function liveFulfilmentResumed(tx: Kysely<Database>, now: number): Promise<void> {
  await resolveIncident(
    tx,
    LIVE_INCIDENT,
    (lasted) => ({ subject: 'Resolved: live fulfilment resumed', parts: [`Live orders are taken and fulfilled again, after a pause of ${formatDuration(lasted)}.`] }),
    now,
  );
}

/** The operator's maintenance pause (src/operator/live-pause.ts): its own incident, apart from the breaker's. */
export const OPERATOR_PAUSE_INCIDENT = 'live_operator_pause';

/** The operator paused live fulfilment: every operator is told who and why (and reminded while it lasts). */
export async function liveOperatorPaused(tx: Kysely<Database>, reason: string, by: string, now: number): Promise<void> {
  await openIncident(
    tx,
    OPERATOR_PAUSE_INCIDENT,
    {
      title: 'Live fulfilment paused by an operator',
      message: {
        subject: 'Live fulfilment paused by an operator',
        parts: [
          `${by} paused live fulfilment: ${reason.slice(0, 500)}`,
          "New live orders answer 503 live_unavailable; queued ones wait up to LIVE_MAX_WAIT_SECONDS, then fail. It stays paused until an operator resumes it (starport live resume, or the console's Live page).",
        ],
      },
    },
    now,
  );
}

/** The operator resumed live fulfilment. */
export async function liveOperatorResumed(tx: Kysely<Database>, by: string, now: number): Promise<void> {
  await resolveIncident(
    tx,
    OPERATOR_PAUSE_INCIDENT,
    (lasted) => ({ subject: 'Resolved: live fulfilment resumed by an operator', parts: [`${by} resumed live fulfilment after a pause of ${formatDuration(lasted)}.`] }),
    now,
  );
}

/** The paying wallet's spendable TON is below the warning threshold, or back above it. */
export async function walletCover(tx: Kysely<Database>, low: boolean, spendable: bigint, now: number): Promise<void> {
  if (low) {
    await openIncident(
      tx,
      WALLET_INCIDENT,
      {
        title: 'The paying wallet is running low',
        message: {
          subject: 'The paying wallet cannot cover the next orders',
          parts: [
            `The paying wallet has ${formatTon(spendable)} TON to spend above WALLET_MIN_BALANCE_TON (NOTIFY_WALLET_LOW_TON / NOTIFY_WALLET_LOW_ORDERS). Top it up before live fulfilment pauses.`,
          ],
        },
      },
      now,
    );
  } else {
    await resolveIncident(
      tx,
      WALLET_INCIDENT,
      (lasted) => ({
        subject: 'Resolved: the paying wallet covers the next orders',
        parts: [`It was low for ${formatDuration(lasted)}; it now has ${formatTon(spendable)} TON to spend.`],
      }),
      now,
    );
  }
}

/**
 * A node could not reach its database for `lostMs`, and can again: told by the node itself
 * (its notification worker, or on an API-only node its database watch), once it is back.
 */
export async function nodeLostDatabase(tx: Kysely<Database>, node: string, lostMs: number, now: number): Promise<void> {
  await notifyOperator(
    tx,
    { subject: 'A node lost its database', parts: [`Node ${node} could not reach its database for ${formatDuration(lostMs)}; it is back now.`] },
    'incident:database',
    now,
  );
}

/** This process, as the operator's alerts name it. */
export const thisNode = () => `${os.hostname()} (pid ${process.pid})`;

/** Live orders held for review (a payment whose fate is unknown: docs/operations.md). */
export async function ordersHeld(tx: Kysely<Database>, orderIds: string[], messageHash: string, now: number): Promise<void> {
  if (orderIds.length === 0) return;
  await notifyOperator(
    tx,
    {
      subject: `${orderIds.length === 1 ? 'An order is' : `${orderIds.length} orders are`} held for review`,
      parts: [`Wallet message ${messageHash} was not seen on chain and its seqno moved: its orders wait for you (starport order resolve).`, `Orders: ${orderIds.join(', ')}`],
    },
    'order_held',
    now,
  );
}

/** A deposit the watcher could not credit (starport deposit assign / return). */
export async function depositUnmatched(
  tx: Kysely<Database>,
  deposit: { txHash: string; amount: bigint; reason: string | null; comment: string | null },
  now: number,
): Promise<void> {
  await notifyOperator(
    tx,
    {
      subject: 'A deposit could not be matched',
      parts: [
        `${formatTon(deposit.amount)} TON arrived (transaction ${deposit.txHash}) and was not credited: ${deposit.reason ?? 'unmatched'}.`,
        ...(deposit.comment ? [`Its comment: ${deposit.comment.slice(0, 200)}`] : []),
        `Credit it with starport deposit assign --tx ${deposit.txHash} --account ACCOUNT_ID, or record its return with starport deposit return.`,
      ],
    },
    'deposit_unmatched',
    now,
  );
}

// ---- Clients ----

const modeName = (mode: Mode) => (mode === 'live' ? 'live' : 'test');

/** The low-balance crossing (the same one as the balance.low webhook event). */
export async function balanceLow(
  tx: Kysely<Database>,
  movement: { accountId: string; mode: Mode; crossedBelow: bigint | null; after: { available: bigint }; createdAt: number },
): Promise<void> {
  if (movement.crossedBelow === null) return;
  await notifyAccount(
    tx,
    movement.accountId,
    {
      subject: `Your ${modeName(movement.mode)} balance is low`,
      parts: [`Your ${modeName(movement.mode)} balance is ${formatTon(movement.after.available)} TON, below your alert of ${formatTon(movement.crossedBelow)} TON.`],
    },
    { topic: 'balance_low', now: movement.createdAt },
  );
}

/** A deposit credited to an account (TON or USDT). */
export async function depositCredited(tx: Kysely<Database>, deposit: { accountId: string; amount: bigint; usdt?: string | null; txHash: string }, now: number): Promise<void> {
  const what = deposit.usdt ? `${deposit.usdt} USDT (${formatTon(deposit.amount)} TON)` : `${formatTon(deposit.amount)} TON`;
  await notifyAccount(
    tx,
    deposit.accountId,
    { subject: 'Deposit credited', parts: [`${what} was credited to your live balance.`, `Transaction: ${deposit.txHash}`] },
    { topic: 'deposit_credited', now },
  );
}

/** A live order failed. */
export async function liveOrderFailed(
  tx: Kysely<Database>,
  order: { id: string; accountId: string; recipient: string; externalId: string | null },
  reason: string | null,
  now: number,
): Promise<void> {
  await notifyAccount(
    tx,
    order.accountId,
    {
      subject: 'A live order failed',
      parts: [
        `Order ${order.id} for @${order.recipient}${order.externalId ? ` (your reference ${order.externalId})` : ''} failed: ${reason ?? 'unknown reason'}. Its amount went back to your balance.`,
      ],
    },
    { topic: 'order_failed', now },
  );
}

/** A webhook endpoint disabled after failing. */
export async function webhookDisabled(tx: Kysely<Database>, endpoint: { accountId: string; url: string }, reason: string, now: number): Promise<void> {
  await notifyAccount(
    tx,
    endpoint.accountId,
    {
      subject: 'A webhook endpoint was disabled',
      parts: [`Your endpoint ${endpoint.url} was disabled: ${reason}`, 'Re-enable it on the dashboard’s Webhooks page once it answers again.'],
    },
    { topic: 'webhook_disabled', now },
  );
}

// ---- Security notices (no switch) ----

export async function passwordChanged(tx: Kysely<Database>, personId: string, now: number, brand = DEFAULT_BRAND_NAME): Promise<void> {
  await notifyPerson(
    tx,
    personId,
    {
      subject: `Your ${brand} password was changed`,
      parts: [
        'The password of your dashboard sign-in was changed and every session was ended. If this was not you, choose a new password at once with “Forgot your password?” on the login page, and tell your operator.',
      ],
    },
    { topic: 'security', now },
  );
}

export async function twoFactorTurnedOff(tx: Kysely<Database>, personId: string, now: number): Promise<void> {
  await notifyPerson(
    tx,
    personId,
    {
      subject: 'Two-factor sign-in was turned off',
      parts: ['Two-factor sign-in was turned off for your dashboard sign-in. If this was not you, change your password and turn it on again.'],
    },
    { topic: 'security', now },
  );
}

export async function apiKeyChanged(tx: Kysely<Database>, accountId: string, mode: Mode, change: 'reissued' | 'revoked', prefix: string | null, now: number): Promise<void> {
  await notifyAccount(
    tx,
    accountId,
    {
      subject: `Your ${mode} API key was ${change}`,
      parts: [
        change === 'reissued'
          ? `The ${mode} API key of your account was reissued: the old key no longer works, and the new one starts ${prefix ?? 'sk_'}…`
          : `The ${mode} API key ${prefix ? `${prefix}… ` : ''}of your account was revoked: it no longer works.`,
        'If you did not expect this, check the dashboard’s Activity page.',
      ],
    },
    { topic: 'security', roles: ['owner', 'developer'], now },
  );
}

/**
 * A sign-in: the address is remembered, and a person who had signed in before, but never from
 * this address, is told. Returns whether the address was new.
 */
export async function signedIn(tx: Kysely<Database>, personId: string, address: string, now: number, brand = DEFAULT_BRAND_NAME): Promise<boolean> {
  const known = await tx.selectFrom('sign_in_addresses').select('address').where('person_id', '=', personId).limit(1).execute();
  const inserted = await tx
    .insertInto('sign_in_addresses')
    .values({ person_id: personId, address, first_seen_at: now })
    .onConflict((oc) => oc.columns(['person_id', 'address']).doNothing())
    .executeTakeFirst();
  const fresh = inserted.numInsertedOrUpdatedRows === 1n;
  if (fresh && known.length > 0) {
    await notifyPerson(
      tx,
      personId,
      {
        subject: `New sign-in to ${brand}`,
        parts: [`Someone signed in to your dashboard from ${address}, an address not seen before. If this was not you, change your password.`],
      },
      { topic: 'security', now },
    );
  }
  return fresh;
}
