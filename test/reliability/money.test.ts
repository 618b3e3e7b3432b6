import { afterAll, beforeAll, expect, test } from 'vitest';
import { reissueKey } from '../../src/accounts/accounts.js';
import { formatTon, parseTon } from '../../src/domain/money.js';
import { AdjustmentError, adjustBalance } from '../../src/ledger/adjust.js';
import { type Harness, startHarness } from '../support/harness.js';
import { type Acknowledged, acknowledgedProblems, invariantProblems } from './support/invariants.js';
import { announceSeed, LONG, SEED, seededRandom } from './support/settings.js';

/**
 * Suite 2: money invariants under concurrency. Many clients at once, over real sockets, each
 * running a seeded random plan of creates, same-key retries (sequential and in concurrent
 * bursts), reads, operator credits and debits, and key reissues, on a few small balances that
 * run dry (402) and get topped up. Ledger verify runs during the load too (the invariants hold
 * at every committed moment, not just at rest). After each round: no negative balance, journal
 * sums = balances, reserved = sum of open orders, every 201 has its order with the amount it
 * was told, one order per key, and each balance equals what the client can compute on its own
 * (credits − delivered amounts).
 */
const ROUNDS = LONG ? 12 : 3;
const CLIENTS = 12;
const OPS_PER_CLIENT = LONG ? 60 : 25;
const ACCOUNTS = 3;
const RECIPIENTS = ['@alice_ok', '@Bob_Buyer', '@test_failed', '@test_invalid', '@test_slow'];
const QUANTITIES: [string, number][] = [
  ['stars', 50],
  ['stars', 100],
  ['stars', 1000],
  ['premium', 3],
];

let h: Harness;
beforeAll(async () => {
  announceSeed('money');
  h = await startHarness({ RATE_LIMIT_RPS: '0', TEST_FULFILMENT_DELAY_MS: '30', TEST_SLOW_DELAY_MS: '300' });
});
afterAll(async () => {
  await h?.close();
});

interface Book {
  accountId: string;
  key: string;
  /** Credits minus operator debits, nanotons, as the operator made them. */
  funded: bigint;
}

test.for(Array.from({ length: ROUNDS }, (_, round) => round))('round %i: concurrent clients keep the books', async (round) => {
  const random = seededRandom(SEED + round);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const books: Book[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const account = await h.account();
    const funded = parseTon(pick(['0.5', '2', '5']));
    await h.credit(account.accountId, 'test', formatTon(funded));
    books.push({ accountId: account.accountId, key: account.testKey, funded });
  }
  const acknowledged: Acknowledged[] = [];
  const sent = new Map<string, { book: Book; body: string }>();
  /** The body of the request that created each key's order (keys are unique per round). */
  const creatingBody = new Map<string, string>();
  const statuses = new Map<string, number>();
  const unexpected: string[] = [];
  let keySeq = 0;

  const count = (label: string) => statuses.set(label, (statuses.get(label) ?? 0) + 1);

  /** POST /orders; a key revoked under our feet (a reissue raced us) is retried with the new one. */
  const post = async (book: Book, idempotencyKey: string, body: string) => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const response = await fetch(`${h.url}/api/v1/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${book.key}`, 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
        body,
        signal: AbortSignal.timeout(20_000),
      });
      const json = (await response.json()) as any;
      count(`${response.status}${json.error ? ` ${json.error.code}` : ''}`);
      if (response.status === 401 && json.error.code === 'api_key_revoked') continue;
      if (response.status === 201) {
        acknowledged.push({ id: json.id, accountId: book.accountId, idempotencyKey, amount: json.amount.value });
        if (!creatingBody.has(idempotencyKey)) creatingBody.set(idempotencyKey, body);
      } else if (![402, 409].includes(response.status)) unexpected.push(`POST /orders → ${response.status} ${JSON.stringify(json)}`);
      else if (response.status === 409 && !['idempotency_conflict', 'idempotency_key_in_use'].includes(json.error.code)) unexpected.push(`409 ${json.error.code}`);
      return { status: response.status, json };
    }
    return undefined;
  };

  const actions: Record<string, () => Promise<unknown>> = {
    async create() {
      const book = pick(books);
      const [product, quantity] = pick(QUANTITIES);
      const body = JSON.stringify({ product, recipient: pick(RECIPIENTS), quantity, external_id: `r${round}-${keySeq}` });
      const key = `k-${round}-${++keySeq}`;
      sent.set(key, { book, body });
      return post(book, key, body);
    },
    async burst() {
      // The same key three times at once: one order, the others replay it (or wait and replay).
      const book = pick(books);
      const body = JSON.stringify({ product: 'stars', recipient: pick(RECIPIENTS), quantity: 50 });
      const key = `b-${round}-${++keySeq}`;
      sent.set(key, { book, body });
      const results = await Promise.all([post(book, key, body), post(book, key, body), post(book, key, body)]);
      const ids = new Set(results.filter((r) => r?.status === 201).map((r) => r?.json.id));
      if (ids.size > 1) unexpected.push(`burst with key ${key} created ${ids.size} orders`);
    },
    async retry() {
      const previous = [...sent.entries()];
      if (previous.length === 0) return;
      const [key, { book, body }] = pick(previous);
      const changed = random() < 0.3;
      // Only a key that created an order is bound (after a 402 it may be reused with new parameters).
      const first = acknowledged.find((a) => a.idempotencyKey === key && a.accountId === book.accountId);
      const retryBody = changed ? JSON.stringify({ product: 'stars', recipient: '@changed_mind', quantity: 77 }) : body;
      const result = await post(book, key, retryBody);
      // A key that created an order replays it (same body) or conflicts (other body).
      if (first && result?.status === 201 && result.json.id !== first.id) unexpected.push(`retry of ${key} answered another order`);
      if (first && retryBody !== creatingBody.get(key) && result && result.status !== 409) unexpected.push(`changed body on ${key} answered ${result.status}, not 409`);
    },
    async credit() {
      const book = pick(books);
      const amount = parseTon(pick(['0.25', '1', '3']));
      await adjustBalance(h.service.db, { accountId: book.accountId, mode: 'test', amount, reason: 'reliability credit' });
      book.funded += amount;
    },
    async debit() {
      // An operator's correction that may not fit: refused whole, never below zero.
      const book = pick(books);
      const amount = parseTon(pick(['0.1', '1', '50']));
      try {
        await adjustBalance(h.service.db, { accountId: book.accountId, mode: 'test', amount: -amount, reason: 'reliability debit' });
        book.funded -= amount;
      } catch (error) {
        if (!(error instanceof AdjustmentError)) throw error;
      }
    },
    async reissue() {
      const book = pick(books);
      book.key = await reissueKey(h.service.db, book.accountId, 'test');
    },
    async read() {
      const book = pick(books);
      const own = acknowledged.filter((a) => a.accountId === book.accountId);
      const path = own.length > 0 && random() < 0.5 ? `/orders/${pick(own).id}` : '/balance';
      const response = await fetch(`${h.url}/api/v1${path}`, { headers: { authorization: `Bearer ${book.key}` } });
      count(`GET ${response.status}`);
      if (![200, 401].includes(response.status)) unexpected.push(`GET ${path} → ${response.status} ${await response.text()}`);
    },
  };
  const weighted = ['create', 'create', 'create', 'create', 'burst', 'retry', 'retry', 'credit', 'debit', 'reissue', 'read', 'read'];
  const plans = Array.from({ length: CLIENTS }, () => Array.from({ length: OPS_PER_CLIENT }, () => pick(weighted)));

  // A checker that runs ledger verify while the clients write.
  let loadDone = false;
  const midRun: string[] = [];
  const checker = (async () => {
    while (!loadDone) {
      midRun.push(...(await invariantProblems(h.service.db.kysely, { final: false })));
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  })();
  const started = performance.now();
  try {
    await Promise.all(
      plans.map(async (plan) => {
        for (const action of plan) await (actions[action] as () => Promise<unknown>)();
      }),
    );
  } finally {
    loadDone = true;
    await checker;
  }
  const loadMs = performance.now() - started;

  // Let the worker settle everything, then check the books.
  const db = h.service.db.kysely;
  await expect
    .poll(
      async () =>
        Number(
          (
            await db
              .selectFrom('orders')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('status', 'in', ['fulfillment_pending', 'processing'])
              .executeTakeFirstOrThrow()
          ).n,
        ),
      {
        timeout: 30_000,
        interval: 50,
      },
    )
    .toBe(0);
  console.log(
    `[money] round ${round}: ${CLIENTS} clients × ${OPS_PER_CLIENT} ops in ${(loadMs / 1000).toFixed(1)} s, ${acknowledged.length} acknowledged; ` +
      [...statuses]
        .sort()
        .map(([k, v]) => `${k}×${v}`)
        .join(', '),
  );
  expect(unexpected).toEqual([]);
  expect(midRun, 'invariants during the load').toEqual([]);
  expect(await invariantProblems(db, { final: true })).toEqual([]);
  expect(await acknowledgedProblems(db, acknowledged)).toEqual([]);

  for (const book of books) {
    // No order the client was never told about.
    const orders = await db.selectFrom('orders').select(['id', 'status', 'amount', 'recipient', 'failure_reason']).where('account_id', '=', book.accountId).execute();
    const told = new Set(acknowledged.filter((a) => a.accountId === book.accountId).map((a) => a.id));
    expect(orders.map((o) => o.id).sort()).toEqual([...told].sort());
    // Outcomes follow the test recipients; balances follow from credits and deliveries alone.
    let delivered = 0n;
    for (const order of orders) {
      const name = order.recipient.toLowerCase().replace(/^@/, '');
      const expected = name === 'test_failed' ? ['failed', 'upstream_error'] : name === 'test_invalid' ? ['failed', 'recipient_invalid'] : ['delivered', null];
      expect([order.status, order.failure_reason], `${order.id} to ${order.recipient}`).toEqual(expected);
      if (order.status === 'delivered') delivered += BigInt(String(order.amount));
    }
    const response = await fetch(`${h.url}/api/v1/balance`, { headers: { authorization: `Bearer ${book.key}` } });
    const { balance } = (await response.json()) as { balance: { value: string; reserved: string } };
    expect(balance.reserved).toBe('0');
    expect(balance.value, `balance of ${book.accountId}`).toBe(formatTon(book.funded - delivered));
  }
});
