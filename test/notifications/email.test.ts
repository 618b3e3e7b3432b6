import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAccount, reissueKey } from '../../src/accounts/accounts.js';
import { parseTon } from '../../src/domain/money.js';
import { adjustBalance } from '../../src/ledger/adjust.js';
import { setLowBalanceThreshold } from '../../src/ledger/low-balance.js';
import { assignDeposit } from '../../src/deposits/settle.js';
import { recordTransaction } from '../../src/deposits/store.js';
import { enqueueMail, type NotificationRow } from '../../src/notifications/outbox.js';
import { setNotificationSwitches, notificationSwitches } from '../../src/notifications/settings.js';
import { type Harness, startHarness } from '../support/harness.js';
import { expectOk, pollUntil, postOrder, STARS_50 } from '../support/http.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';

/**
 * E-mail notifications end to end on a real SMTP server (smtp-server, read back with
 * mailparser): a client's low-balance and deposit notices honour their switches, security
 * notices cannot be switched off, client values are escaped in the HTML part, and SMTP faults
 * (a refusal that passes, a bad recipient) end in one delivery or one recorded failure.
 */

let h: Harness;
let smtp: TestSmtpServer;
const OPERATOR = 'ops@example.com';

beforeAll(async () => {
  smtp = await startSmtpServer();
  h = await startHarness({ SMTP_URL: smtp.url, MAIL_FROM: 'Starport <noreply@example.com>', OPERATOR_EMAILS: OPERATOR, NOTIFY_RETRY_DELAYS_MS: '200' });
});
afterAll(async () => {
  await h?.close();
  await smtp?.close();
});

const db = () => h.service.db.kysely;
const mailsTo = (address: string) => smtp.mails.filter((m) => m.to.includes(address));

async function ownerEmail(accountId: string): Promise<string> {
  return (await db().selectFrom('accounts').select('email').where('id', '=', accountId).executeTakeFirstOrThrow()).email;
}

async function notification(id: string): Promise<NotificationRow> {
  return db().selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

/** Every notification handed to the worker is finished (sent, kept or failed). */
async function settled(): Promise<void> {
  await pollUntil(
    () => db().selectFrom('notifications').select('id').where('status', '=', 'pending').execute(),
    (rows) => rows.length === 0,
    { what: 'an empty notification backlog' },
  );
}

describe('client notices', () => {
  test('low balance reaches the client who keeps it on, not the one who switched e-mail off', async () => {
    const on = await h.account({ test: '100' });
    const off = await h.account({ test: '100' });
    const offPerson = await db().selectFrom('memberships').select('person_id').where('account_id', '=', off.accountId).executeTakeFirstOrThrow();
    const switches = await notificationSwitches(db(), offPerson.person_id, off.accountId);
    switches.balance_low.email = false;
    await setNotificationSwitches(db(), offPerson.person_id, off.accountId, switches);
    for (const account of [on, off]) {
      await setLowBalanceThreshold(db(), { accountId: account.accountId, mode: 'test' }, parseTon('50'));
      await adjustBalance(h.service.db, { accountId: account.accountId, mode: 'test', amount: -parseTon('60'), reason: 'spend' });
    }
    const onAddress = await ownerEmail(on.accountId);
    const [mail] = await pollUntil(
      async () => mailsTo(onAddress).filter((m) => /balance is low/.test(m.subject)),
      (mails) => mails.length === 1,
      { what: 'the low-balance e-mail' },
    );
    expect(mail?.text).toContain('Your test balance is 40 TON, below your alert of 50 TON.');
    expect(mail?.html).toContain('below your alert of 50 TON');
    await settled();
    expect(mailsTo(await ownerEmail(off.accountId)).filter((m) => /balance is low/.test(m.subject))).toEqual([]);
  });

  test('an order that crosses the alert mails it (on PostgreSQL through the general path)', async () => {
    const account = await h.account({ test: '1' });
    await setLowBalanceThreshold(db(), { accountId: account.accountId, mode: 'test' }, parseTon('0.9'));
    expectOk(await postOrder(h, account.testKey, STARS_50), 201);
    expectOk(await postOrder(h, account.testKey, STARS_50), 201);
    const address = await ownerEmail(account.accountId);
    await pollUntil(
      async () => mailsTo(address).filter((m) => /balance is low/.test(m.subject)),
      (mails) => mails.length === 1,
      { what: 'the crossing mailed' },
    );
    await settled();
    expect(mailsTo(address).filter((m) => /balance is low/.test(m.subject))).toHaveLength(1);
  });

  test('a credited deposit is mailed with its amount', async () => {
    const account = await h.account();
    const txHash = 'ab'.repeat(32);
    await db()
      .insertInto('deposits')
      .values({
        id: 'dep_notifytest1',
        tx_hash: txHash,
        lt: 1n,
        address: '0:00',
        sender: '0:11',
        amount: parseTon('2.5'),
        comment: 'wrong memo <b>',
        status: 'unmatched',
        reason: 'memo_unknown',
        account_id: null,
        chain_time: Date.now(),
        created_at: Date.now(),
        credited_at: null,
        credited_by: null,
        asset: 'TON',
      })
      .execute();
    await assignDeposit(h.service.db, { txHash, accountId: account.accountId, actor: 'test' });
    const address = await ownerEmail(account.accountId);
    const [mail] = await pollUntil(
      async () => mailsTo(address).filter((m) => m.subject === 'Deposit credited'),
      (mails) => mails.length === 1,
      { what: 'the deposit e-mail' },
    );
    expect(mail?.text).toContain('2.5 TON was credited to your live balance.');
  });

  test('a deposit nobody could match is the operator’s, with its comment as text', async () => {
    const hash = 'cd'.repeat(32);
    await recordTransaction(h.service.db, {
      address: '0:0000000000000000000000000000000000000000000000000000000000000001',
      position: { lt: 7n, hash, chainTime: Date.now() },
      deposit: { sender: '0:11', amount: parseTon('3'), comment: '<i>hello</i>', memo: null, reason: 'memo_invalid' },
    });
    const [mail] = await pollUntil(
      async () => mailsTo(OPERATOR).filter((m) => m.subject === 'A deposit could not be matched'),
      (mails) => mails.length === 1,
      { what: 'the operator’s unmatched-deposit mail' },
    );
    expect(mail?.text).toContain(`3 TON arrived (transaction ${hash}) and was not credited: memo_invalid.`);
    expect(mail?.html).toContain('Its comment: &lt;i&gt;hello&lt;/i&gt;');
  });

  test('a key reissue is a security notice, sent even with every switch off', async () => {
    const account = await h.account();
    const person = await db().selectFrom('memberships').select('person_id').where('account_id', '=', account.accountId).executeTakeFirstOrThrow();
    const switches = await notificationSwitches(db(), person.person_id, account.accountId);
    for (const topic of Object.values(switches)) topic.email = false;
    await setNotificationSwitches(db(), person.person_id, account.accountId, switches);
    await reissueKey(h.service.db, account.accountId, 'live');
    const address = await ownerEmail(account.accountId);
    const [mail] = await pollUntil(
      async () => mailsTo(address).filter((m) => /API key was reissued/.test(m.subject)),
      (mails) => mails.length === 1,
      { what: 'the key reissue notice' },
    );
    expect(mail?.text).toMatch(/the new one starts sk_live_/);
  });

  test('markup in an e-mail address is text in the HTML part', async () => {
    const shop = '<b>shop</b>@example.com';
    const { accountId } = await createAccount(h.service.db, shop);
    const member = `dev-${Date.now()}@example.com`;
    const now = Date.now();
    await db()
      .insertInto('people')
      .values({ id: `psn_member${now}`, email: member, password_hash: null, created_at: now, updated_at: now })
      .execute();
    await db()
      .insertInto('memberships')
      .values({ account_id: accountId, person_id: `psn_member${now}`, role: 'developer', created_at: now })
      .execute();
    await reissueKey(h.service.db, accountId, 'test');
    const [mail] = await pollUntil(
      async () => mailsTo(member),
      (mails) => mails.length === 1,
      { what: 'the member’s notice' },
    );
    expect(mail?.text).toContain(`Account: ${shop}`);
    expect(mail?.html).toContain('Account: &lt;b&gt;shop&lt;/b&gt;@example.com');
    expect(mail?.html).not.toContain('<b>shop</b>');
    // The owner's address cannot be mailed (not a deliverable address): nothing is sent to it.
    await settled();
    expect(smtp.mails.some((m) => m.to.some((to) => to.includes('shop')))).toBe(false);
  });
});

describe('SMTP faults', () => {
  test('a refusing server is retried until it accepts, and the mail arrives once', async () => {
    smtp.tempFail = true;
    const to = `retry-${Date.now()}@example.com`;
    const id = await db()
      .transaction()
      .execute((tx) => enqueueMail(tx, { to, message: { subject: 'Retried', parts: ['hello'] } }));
    const failing = await pollUntil(
      () => notification(id),
      (row) => Number(row.attempts) >= 2,
      { what: 'two refused attempts' },
    );
    expect(failing.status).toBe('pending');
    expect(failing.last_error).toMatch(/451/);
    smtp.tempFail = false;
    await pollUntil(
      () => notification(id),
      (row) => row.status === 'sent',
      { what: 'the mail sent' },
    );
    expect(mailsTo(to)).toHaveLength(1);
    expect(mailsTo(to)[0]?.notificationId).toBe(id);
  });

  test('a bad recipient is marked failed with the server’s answer, not retried', async () => {
    smtp.rejectRecipients = /^bounce-/;
    try {
      const id = await db()
        .transaction()
        .execute((tx) => enqueueMail(tx, { to: `bounce-${Date.now()}@example.com`, message: { subject: 'Bounces', parts: ['x'] } }));
      const row = await pollUntil(
        () => notification(id),
        (r) => r.status !== 'pending',
        { what: 'the failure recorded' },
      );
      expect(row.status).toBe('failed');
      expect(row.last_error).toMatch(/550/);
      expect(Number(row.attempts)).toBe(1);
    } finally {
      smtp.rejectRecipients = undefined;
    }
  });
});
