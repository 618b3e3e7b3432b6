import { generate } from 'otplib';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.js';
import { changeRole, listMembers, removeMember, TeamError } from '../../src/accounts/team.js';
import { acceptInvite, createInvite } from '../../src/accounts/invites.js';
import { confirmEnrolment, startEnrolment, verifySecondFactor } from '../../src/accounts/two-factor.js';
import { type Harness, startHarness } from '../support/harness.js';
import { newEmail, PASSWORD } from '../support/web.js';

/**
 * The team and two-factor rules under concurrency, on the real database (both engines): two
 * owners removing each other leave one owner; one invite accepted twice at once makes one
 * member; one TOTP code or recovery code used twice at once passes once.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

/** A new account and the person id of its first owner (who sends the invites). */
async function newAccount(): Promise<{ accountId: string; owner: string }> {
  const email = newEmail('owner');
  const { accountId } = await createAccount(h.service.db, email);
  const owner = (await h.service.db.kysely.selectFrom('people').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;
  return { accountId, owner };
}

async function teamOfTwoOwners(): Promise<{ accountId: string; a: string; b: string }> {
  const { accountId, owner } = await newAccount();
  const invite = await createInvite(h.service.db, { accountId, email: newEmail('second'), role: 'owner', invitedBy: owner });
  const joined = await acceptInvite(h.service.db, invite.token, { password: PASSWORD });
  if (!joined.ok) throw new Error(joined.message);
  const [a, b] = (await listMembers(h.service.db.kysely, accountId)).map((m) => m.personId);
  return { accountId, a: a as string, b: b as string };
}

test('two owners removing each other at once: one succeeds, one owner remains', async () => {
  for (let round = 0; round < 5; round++) {
    const { accountId, a, b } = await teamOfTwoOwners();
    const results = await Promise.allSettled([removeMember(h.service.db, accountId, a), removeMember(h.service.db, accountId, b)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refused = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(TeamError);
    const members = await listMembers(h.service.db.kysely, accountId);
    expect(members.map((m) => m.role)).toEqual(['owner']);
  }
});

test('demoting both owners at once leaves one owner', async () => {
  const { accountId, a, b } = await teamOfTwoOwners();
  await Promise.allSettled([changeRole(h.service.db, accountId, a, 'viewer'), changeRole(h.service.db, accountId, b, 'viewer')]);
  expect((await listMembers(h.service.db.kysely, accountId)).filter((m) => m.role === 'owner')).toHaveLength(1);
});

test('one invite accepted twice at once joins once', async () => {
  const { accountId, owner } = await newAccount();
  const invite = await createInvite(h.service.db, { accountId, email: newEmail('twice'), role: 'developer', invitedBy: owner });
  const results = await Promise.all([
    acceptInvite(h.service.db, invite.token, { password: PASSWORD }),
    acceptInvite(h.service.db, invite.token, { password: 'another long password' }),
  ]);
  expect(results.filter((r) => r.ok)).toHaveLength(1);
  expect(await listMembers(h.service.db.kysely, accountId)).toHaveLength(2);
});

test('one TOTP code and one recovery code, each sent twice at once, pass once', async () => {
  const email = newEmail('totp');
  await createAccount(h.service.db, email);
  const person = (await h.service.db.kysely.selectFrom('people').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;
  const { secret } = await startEnrolment(h.service.db, person, email);
  const step = Math.floor(Date.now() / 30_000);
  const codes = await confirmEnrolment(h.service.db, person, await generate({ secret, epoch: (step - 1) * 30 }));
  expect(codes).toHaveLength(10);
  const code = await generate({ secret, epoch: step * 30 });
  const totp = await Promise.all([verifySecondFactor(h.service.db, person, code), verifySecondFactor(h.service.db, person, code)]);
  expect(totp.filter((r) => r.ok)).toHaveLength(1);
  const recovery = (codes as string[])[3] as string;
  const spent = await Promise.all([verifySecondFactor(h.service.db, person, recovery), verifySecondFactor(h.service.db, person, recovery.toUpperCase())]);
  expect(spent.filter((r) => r.ok)).toHaveLength(1);
  expect(spent.find((r) => r.ok)).toEqual({ ok: true, method: 'recovery_code', recoveryCodesLeft: 9 });
  // An older code than the last accepted one is refused even inside the drift window.
  expect((await verifySecondFactor(h.service.db, person, await generate({ secret, epoch: (step - 1) * 30 }))).ok).toBe(false);
});
