import { afterAll, beforeAll, expect, test } from 'vitest';
import { formatTon, parseTon } from '../../src/domain/money.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { applyMovement } from '../../src/ledger/ledger.js';
import { lowBalanceAlerts, setLowBalanceThreshold } from '../../src/ledger/low-balance.js';
import { type Harness, startHarness, type TestAccount } from '../support/harness.js';
import { call, EVENT_ID, expectOk, pollUntil, postOrder, STARS_50, TIMESTAMP } from '../support/http.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';
import { enqueueBalanceLowEvent } from '../../src/webhooks/outbox.js';

/**
 * The low-balance alert (docs/api.md "Low-balance alert"): one `balance.low` event per crossing of
 * the threshold, however many orders cross it at once, re-armed only by the balance coming back
 * to or above it. Runs on both engines (on PostgreSQL the orders of one balance really run
 * concurrently and wait on its row lock).
 */

let h: Harness;
let receiver: Receiver;

beforeAll(async () => {
  h = await startHarness({ WEBHOOK_ALLOW_LOOPBACK: '1', WEBHOOK_RETRY_DELAYS_MS: '30', WEBHOOK_DISABLE_AFTER_MS: '0' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await h?.close();
});

const db = () => h.service.db.kysely;

async function subscribe(account: TestAccount, events?: string[]): Promise<void> {
  const res = await call(h, {
    method: 'POST',
    path: '/webhook_endpoints',
    key: account.testKey,
    json: { url: `${receiver.url}?account=${account.accountId}`, ...(events && { events }) },
  });
  expectOk(res, 201);
}

/** The `balance.low` messages queued for this account (one per endpoint and event). */
async function lowMessages(accountId: string) {
  return db().selectFrom('webhook_messages').selectAll().where('account_id', '=', accountId).where('event_type', '=', 'balance.low').orderBy('created_at').execute();
}

async function available(accountId: string): Promise<bigint> {
  const alert = (await lowBalanceAlerts(db(), accountId)).find((a) => a.mode === 'test');
  return alert!.available;
}

/** One order's price, by placing one. */
async function orderPrice(account: TestAccount): Promise<bigint> {
  const res = await postOrder(h, account.testKey, STARS_50);
  expectOk(res, 201);
  return parseTon(res.body.amount.value);
}

async function fund(account: TestAccount, ton: string) {
  expectOk(await call(h, { method: 'POST', path: '/test_helpers/fund', key: account.testKey, json: { amount: ton } }));
}

test('many concurrent orders crossing the threshold send exactly one balance.low', async () => {
  const account = await h.account({ test: '1000' });
  await subscribe(account, ['balance.low']);
  const price = await orderPrice(account);
  const start = await available(account.accountId);
  expect(start).toBeGreaterThan(40n * price);
  // The 10th of the 30 orders below takes the balance under the threshold.
  const threshold = start - 9n * price - price / 2n;
  expect(await setLowBalanceThreshold(db(), { accountId: account.accountId, mode: 'test' }, threshold)).toBe(true);

  const results = await Promise.all(Array.from({ length: 30 }, () => postOrder(h, account.testKey, STARS_50)));
  for (const res of results) expectOk(res, 201);
  const after = await available(account.accountId);
  expect(after).toBe(start - 30n * price);

  const messages = await lowMessages(account.accountId);
  expect(messages).toHaveLength(1);
  const payload = JSON.parse(messages[0]!.payload);
  expect(payload).toEqual({
    id: expect.stringMatching(EVENT_ID),
    type: 'balance.low',
    created_at: expect.stringMatching(TIMESTAMP),
    data: { mode: 'test', available: { value: expect.any(String), currency: 'TON' }, threshold: { value: formatTon(threshold), currency: 'TON' } },
  });
  // The balance the crossing order left: just under the threshold, within one order's price.
  const crossedAt = parseTon(payload.data.available.value);
  expect(crossedAt < threshold && crossedAt >= threshold - price).toBe(true);

  // It is delivered like any event.
  const delivered = await pollUntil(
    async () => receiver.received.filter((r) => r.path.includes(account.accountId)),
    (list) => list.length >= 1,
    { what: 'the balance.low delivery' },
  );
  expect(JSON.parse(delivered[0]!.body)).toMatchObject({ id: payload.id, type: 'balance.low' });
});

test('re-armed only when the balance comes back to the threshold: a top-up, then the next crossing', async () => {
  const account = await h.account({ test: '100' });
  await subscribe(account);
  const price = await orderPrice(account);
  const ref = { accountId: account.accountId, mode: 'test' as const };
  const threshold = (await available(account.accountId)) - price / 2n;
  await setLowBalanceThreshold(db(), ref, threshold);

  expectOk(await postOrder(h, account.testKey, STARS_50), 201);
  expect(await lowMessages(account.accountId)).toHaveLength(1);
  // Further orders while below: nothing more.
  expectOk(await postOrder(h, account.testKey, STARS_50), 201);
  expect(await lowMessages(account.accountId)).toHaveLength(1);

  // A top-up that stays below does not re-arm it.
  await fund(account, formatTon(price));
  expect(await available(account.accountId)).toBeLessThan(threshold);
  expectOk(await postOrder(h, account.testKey, STARS_50), 201);
  expect(await lowMessages(account.accountId)).toHaveLength(1);

  // Back above: re-armed; the next order that crosses sends the second event.
  await fund(account, formatTon(threshold - (await available(account.accountId)) + price / 4n));
  expect(await available(account.accountId)).toBeGreaterThanOrEqual(threshold);
  expect(await lowMessages(account.accountId)).toHaveLength(1);
  expectOk(await postOrder(h, account.testKey, STARS_50), 201);
  expect(await lowMessages(account.accountId)).toHaveLength(2);
});

test('an operator debit crossing it sends the event; setting a threshold above the balance sends none', async () => {
  const account = await h.account({ test: '10' });
  await subscribe(account);
  const ref = { accountId: account.accountId, mode: 'test' as const };
  await setLowBalanceThreshold(db(), ref, parseTon('20'));
  expect(await lowMessages(account.accountId)).toHaveLength(0);
  expect((await lowBalanceAlerts(db(), account.accountId)).find((a) => a.mode === 'test')).toMatchObject({ below: true, threshold: parseTon('20') });

  await setLowBalanceThreshold(db(), ref, parseTon('5'));
  await adjustBalance(h.service.db, { ...ref, amount: -parseTon('4'), reason: 'refund' });
  expect(await lowMessages(account.accountId)).toHaveLength(0);
  await adjustBalance(h.service.db, { ...ref, amount: -parseTon('2'), reason: 'refund' });
  const [message] = await lowMessages(account.accountId);
  expect(JSON.parse(message!.payload).data).toEqual({ mode: 'test', available: { value: '4', currency: 'TON' }, threshold: { value: '5', currency: 'TON' } });
});

test('only endpoints subscribed to balance.low, of the balance’s mode, get it; none set, none sent', async () => {
  const account = await h.account({ test: '10' });
  await subscribe(account, ['order.created']);
  const ref = { accountId: account.accountId, mode: 'test' as const };
  await adjustBalance(h.service.db, { ...ref, amount: -parseTon('9'), reason: 'no threshold' });
  await setLowBalanceThreshold(db(), ref, parseTon('0.5'));
  await adjustBalance(h.service.db, { ...ref, amount: -parseTon('0.6'), reason: 'crosses' });
  expect(await lowMessages(account.accountId)).toHaveLength(0);
  // A live threshold: a test movement never crosses it.
  await setLowBalanceThreshold(db(), { ...ref, mode: 'live' }, parseTon('1'));
  await subscribe(account, ['balance.low']);
  await adjustBalance(h.service.db, { ...ref, amount: parseTon('0.4'), reason: 'back up' });
  expect(await lowMessages(account.accountId)).toHaveLength(0);
  await adjustBalance(h.service.db, { ...ref, amount: -parseTon('0.4'), reason: 'crosses again' });
  expect(await lowMessages(account.accountId)).toHaveLength(1);
});

test('a threshold out of range is refused and changes nothing', async () => {
  const account = await h.account();
  const ref = { accountId: account.accountId, mode: 'live' as const };
  await expect(setLowBalanceThreshold(db(), ref, 0n)).rejects.toThrow(/more than 0/);
  await expect(setLowBalanceThreshold(db(), ref, -1n)).rejects.toThrow(/more than 0/);
  expect((await lowBalanceAlerts(db(), account.accountId)).map((a) => a.threshold)).toEqual([null, null]);
  expect(await setLowBalanceThreshold(db(), { accountId: 'acc_none', mode: 'live' }, 1n)).toBe(false);
});

test('a movement rolled back after its crossing leaves no event and the alert armed', async () => {
  const account = await h.account({ test: '10' });
  await subscribe(account, ['balance.low']);
  const ref = { accountId: account.accountId, mode: 'test' as const };
  await setLowBalanceThreshold(db(), ref, parseTon('5'));
  // The transaction dies after the event was queued (a lost connection, a crash before COMMIT).
  await expect(
    db()
      .transaction()
      .execute(async (tx) => {
        const moved = await applyMovement(tx, ref, { kind: 'adjustment', amount: -parseTon('6'), reason: 'dies', now: Date.now() });
        expect(moved?.crossedBelow).toBe(parseTon('5'));
        expect(await enqueueBalanceLowEvent(tx, moved!)).toBe(1);
        throw new Error('killed before commit');
      }),
  ).rejects.toThrow('killed before commit');
  expect(await lowMessages(account.accountId)).toHaveLength(0);
  expect(await available(account.accountId)).toBe(parseTon('10'));
  // Nothing was lost: the same crossing, committed, sends its event.
  await adjustBalance(h.service.db, { ...ref, amount: -parseTon('6'), reason: 'commits' });
  expect(await lowMessages(account.accountId)).toHaveLength(1);
});

test('an order refused for an uncovered amount crosses nothing', async () => {
  const account = await h.account({ test: '0.001' });
  await subscribe(account, ['balance.low']);
  await setLowBalanceThreshold(db(), { accountId: account.accountId, mode: 'test' }, parseTon('0.0005'));
  const refused = await postOrder(h, account.testKey, STARS_50);
  expect(refused.status).toBe(402);
  expect(await lowMessages(account.accountId)).toHaveLength(0);
  expect(await available(account.accountId)).toBe(parseTon('0.001'));
});
