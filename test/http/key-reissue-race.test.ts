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
