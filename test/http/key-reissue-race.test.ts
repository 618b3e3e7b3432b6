import { afterAll, beforeAll, expect, test } from 'vitest';
import { authenticate, reissueKey } from '../../src/accounts/accounts.js';
import { type Harness, startHarness } from '../support/harness.js';

/**
 * Regression (found by the reliability suite's money run on PostgreSQL): several reissues of
 * one account's key at the same moment (dashboard and CLI, two operators) all succeed, one
 * after the other, and leave exactly one active key: the last one issued. Before the account
 * row was locked, the later transactions failed on the one-active-key index.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

test('concurrent reissues of one mode serialise and leave one active key', async () => {
  const account = await h.account();
  const keys = await Promise.all(Array.from({ length: 8 }, () => reissueKey(h.service.db, account.accountId, 'test')));
  const active = await h.service.db.kysely
    .selectFrom('api_keys')
    .select('key_hash')
    .where('account_id', '=', account.accountId)
    .where('mode', '=', 'test')
    .where('revoked_at', 'is', null)
    .execute();
  expect(active).toHaveLength(1);
  const results = await Promise.all(keys.map((key) => authenticate(h.service.db, key)));
  expect(results.filter((r) => r.ok)).toHaveLength(1);
  expect(results.filter((r) => !r.ok && r.code === 'api_key_revoked')).toHaveLength(7);
  expect((await authenticate(h.service.db, account.testKey)).ok).toBe(false);
  expect((await authenticate(h.service.db, account.liveKey)).ok).toBe(true);
});

test('reissues racing operator credits and orders on the same account neither deadlock nor fail', async () => {
  // Regression (money suite, PostgreSQL): with FOR UPDATE on the account row, a credit's journal
  // insert (foreign-key check, KEY SHARE on the account) queued behind a reissue that waited for
  // an order insert's KEY SHARE, while that order waited for the credit's balance row: a
  // deadlock. FOR NO KEY UPDATE does not conflict with KEY SHARE. The interleaving is a matter of
  // timing, so this races many of each; the money suite does so at larger scale.
  const account = await h.account({ test: '1000' });
  const { adjustBalance } = await import('../../src/ledger/adjust.js');
  let key = account.testKey;
  const order = async (i: number) => {
    for (let attempt = 0; attempt < 20; attempt++) {
      const response = await fetch(`${h.url}/api/v1/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `race-${i}` },
        body: JSON.stringify({ product: 'stars', recipient: '@racer', quantity: 50 }),
      });
      if (response.status === 401) continue; // the key was reissued under us: use the new one
      expect(response.status).toBe(201);
      return;
    }
    throw new Error('no attempt got through');
  };
  const work: Promise<unknown>[] = [];
  for (let i = 0; i < 80; i++) {
    work.push(order(i));
    work.push(adjustBalance(h.service.db, { accountId: account.accountId, mode: 'test', amount: 1_000_000n, reason: 'race credit' }));
    if (i % 2 === 0) work.push(reissueKey(h.service.db, account.accountId, 'test').then((k) => (key = k)));
  }
  await Promise.all(work);
});
