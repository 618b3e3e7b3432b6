import { afterAll, beforeAll, expect, test } from 'vitest';
import { MS_PER_DAY } from '../../src/domain/time.js';
import { signedInOperator } from '../support/console.js';
import { type Harness, startHarness } from '../support/harness.js';
import { seedLiveOrder } from '../support/http.js';

/**
 * The console's home page from real rows: what needs a person (unmatched deposits, a paused
 * upstream) with counts at the top, the live queue, today's live orders by status, the last 30
 * days summed over every account, and the paying wallet (not configured here).
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ OPERATOR_PORT: '0' });
});
afterAll(async () => {
  await h?.close();
});

test('needs, queue, today, 30 days over every account, live status', async () => {
  const { client } = await signedInOperator(h, 'support');
  const quiet = await client.get('/');
  expect(quiet.status).toBe(200);
  expect(quiet.body).toContain('data-testid="needs-none"');
  expect(quiet.body).toMatch(/data-testid="wallet-balance">Not configured</);

  const a = await h.account({ live: '100' });
  const b = await h.account({ live: '100' });
  await seedLiveOrder(h, a.accountId, { idempotencyKey: 'home-1', product: 'stars', username: 'durov', quantity: 50 });
  await seedLiveOrder(h, b.accountId, { idempotencyKey: 'home-2', product: 'stars', username: 'durov', quantity: 100 });
  const now = Date.now();
  const today = Math.floor(now / MS_PER_DAY);
  await h.service.db.kysely
    .insertInto('order_days')
    .values([
      { account_id: a.accountId, mode: 'live', day: today - 1, delivered: 3, delivered_amount: 1_500_000_000n, failed: 1, failed_amount: 100n },
      { account_id: b.accountId, mode: 'live', day: today - 1, delivered: 2, delivered_amount: 2_000_000_000n, failed: 0, failed_amount: 0n },
      { account_id: b.accountId, mode: 'test', day: today - 1, delivered: 50, delivered_amount: 9_000_000_000n, failed: 0, failed_amount: 0n },
      { account_id: a.accountId, mode: 'live', day: today - 40, delivered: 7, delivered_amount: 7_000_000_000n, failed: 0, failed_amount: 0n },
    ])
    .execute();
  const deposit = (id: string, status: 'unmatched' | 'credited') => ({
    id,
    tx_hash: `hash-${id}`,
    lt: 1,
    address: 'addr',
    sender: 'sender',
    amount: 1_000_000_000n,
    comment: null,
    status,
    reason: status === 'unmatched' ? ('no_comment' as const) : null,
    account_id: status === 'credited' ? a.accountId : null,
    chain_time: now,
    created_at: now,
    credited_at: status === 'credited' ? now : null,
    credited_by: status === 'credited' ? ('watcher' as const) : null,
  });
  await h.service.db.kysely
    .insertInto('deposits')
    .values([deposit('dep_home1', 'unmatched'), deposit('dep_home2', 'unmatched'), deposit('dep_home3', 'credited')])
    .execute();
  await h.service.live.breaker.open('session_expired', 'Fragment says the session expired');

  const page = await client.get('/');
  expect(page.body).not.toContain('data-testid="needs-none"');
  expect(page.body).toContain('<strong data-testid="needs-unmatched">2</strong> unmatched deposits');
  expect(page.body).toContain('<strong data-testid="needs-paused">1</strong> live upstream paused (session_expired)');
  expect(page.body).not.toContain('needs-held');
  expect(page.body).toMatch(/data-testid="queue-depth">2</);
  expect(page.body).toMatch(/data-testid="today-fulfillment_pending">2</);
  expect(page.body).toMatch(/data-testid="today-delivered">0</);
  // Yesterday of both accounts, live only; the day 40 days ago is outside the chart.
  expect(page.body).toContain('data-testid="revenue-total">3.5 TON of delivered orders');
  expect(page.body).toContain('5 delivered, 1 failed');
  expect(page.body).toMatch(/data-testid="webhook-backlog">0</);
});
