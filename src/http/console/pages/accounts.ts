import { normalizeEmail } from '../../../accounts/accounts.js';
import { accountForMemo, normalizeMemo } from '../../../accounts/deposit-memo.js';
import { type AccountSummary, findAccount } from '../../../accounts/admin.js';
import { listAudit, recordAudit } from '../../../audit/audit.js';
import { issuePasswordLink } from '../../../accounts/dashboard-users.js';
import { isMode, MODES } from '../../../domain/api-key.js';
import { MoneyFormatError, parseTon } from '../../../domain/money.js';
import { AdjustmentError } from '../../../ledger/adjust.js';
import { operatorSetStatus } from '../../../operator/account-status.js';
import { operatorAdjust } from '../../../operator/balance-adjust.js';
import { verifyOperatorCode } from '../../../operator/operator-two-factor.js';
import { findOrderById } from '../../../orders/order-store.js';
import { listMembers } from '../../../accounts/team.js';
import { operatorResetTwoFactor } from '../../../operator/two-factor-reset.js';
import { csrfField, notice } from '../../html/document.js';
import { time, ton } from '../../html/format.js';
import { type Html, html, type Slot } from '../../html/html.js';
import { field, redirect, sendHtml } from '../../html/http.js';
import type { Console } from '../console.js';
import { consolePage } from '../layout.js';

/**
 * Accounts: search by e-mail, account id, deposit memo or order id; an account's page with both
 * balances and its audit trail; credit and debit (admins), which ask for the two-factor code
 * again, through the CLI's own operation (src/operator/balance-adjust.ts).
 */
async function search(web: Console, query: string): Promise<AccountSummary | undefined> {
  const q = query.trim();
  if (q === '') return undefined;
  const db = web.ctx.db.kysely;
  if (q.includes('@') || q.startsWith('acct_')) return findAccount(db, q);
  if (q.startsWith('ord_')) {
    const order = await findOrderById(db, q);
    return order ? findAccount(db, order.accountId) : undefined;
  }
  const byMemo = await accountForMemo(db, normalizeMemo(q));
  return byMemo ? findAccount(db, byMemo) : undefined;
}

const ADJUST_NOTICES: Record<string, Slot> = {
  credited: notice('success', 'The balance was adjusted and the action recorded in the audit log.'),
  status: notice('success', 'The account status was changed and the action recorded in the audit log.'),
  'two-factor': notice('success', 'The two-factor sign-in was turned off and every session of the person ended; recorded in the audit log.'),
};

export function accountRoutes(web: Console): void {
  web.get('/accounts', 'support', async (request, reply) => {
    const session = web.session(request);
    const q = field(request.query, 'q');
    const found = q ? await search(web, q) : undefined;
    if (found) return redirect(reply, `/accounts/${found.id}`);
    const body = html`<h1>Accounts</h1>
<form method="get" action="/accounts" class="stack" role="search">
  <div class="field"><label for="q">E-mail, account id, deposit memo or order id</label>
  <input id="q" name="q" type="search" value="${q}" required></div>
  <button type="submit" class="button button-primary">Find</button>
</form>
${q ? html`<p class="notice notice-info" role="status" data-testid="no-match">No account matches “${q}”.</p>` : ''}`;
    return sendHtml(reply, consolePage({ session, csrf: web.token(request) }, { title: 'Accounts', section: 'accounts', body }), q ? 404 : 200);
  });

  const accountPage = async (request: Parameters<Parameters<Console['get']>[2]>[0], id: string, status?: Slot, code = 200) => {
    const session = web.session(request);
    const account = await findAccount(web.ctx.db.kysely, id);
    if (!account)
      return {
        code: 404,
        page: consolePage({ session, csrf: web.token(request) }, { title: 'No such account', section: 'accounts', body: html`<h1>No such account</h1><p>${id}</p>` }),
      };
    const audit = await listAudit(web.ctx.db.kysely, { accountId: account.id, limit: 20 });
    const members = await listMembers(web.ctx.db.kysely, account.id);
    const balances = MODES.map(
      (m) =>
        html`<tr><th scope="row">${m}</th><td class="num" data-label="Available" data-testid="available-${m}">${ton(account.balances[m].available)}</td><td class="num" data-label="Reserved">${ton(account.balances[m].reserved)}</td></tr>`,
    );
    const adjustForm: Html | string =
      session.role === 'admin'
        ? html`<section class="section" aria-labelledby="adjust-heading"><h2 id="adjust-heading">Credit or debit</h2>
<form method="post" action="/accounts/${account.id}/adjust" class="stack card">
  ${csrfField(web.token(request))}
  <div class="field"><label for="mode">Balance</label><select id="mode" name="mode"><option value="live">live</option><option value="test">test</option></select></div>
  <div class="field"><label for="direction">Direction</label><select id="direction" name="direction"><option value="credit">credit</option><option value="debit">debit</option></select></div>
  <div class="field"><label for="amount">Amount (TON)</label><input id="amount" name="amount" inputmode="decimal" required></div>
  <div class="field"><label for="reason">Reason (in the audit log)</label><input id="reason" name="reason" required maxlength="1000"></div>
  <div class="field"><label for="code">Two-factor code (asked again to move money)</label><input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" required></div>
  <button type="submit" class="button button-primary">Adjust the balance</button>
</form></section>`
        : '';
    const next = account.status === 'active' ? 'disable' : 'enable';
    const statusForm: Html | string =
      session.role === 'admin'
        ? html`<section class="section" aria-labelledby="status-heading"><h2 id="status-heading">${next === 'disable' ? 'Disable the account' : 'Enable the account'}</h2>
<form method="post" action="/accounts/${account.id}/${next}" class="stack card">
  ${csrfField(web.token(request))}
  <div class="field"><label for="status-reason">Reason (in the audit log)</label><input id="status-reason" name="reason" required maxlength="1000"></div>
  <button type="submit" class="button ${next === 'disable' ? 'button-danger' : 'button-primary'}">${next === 'disable' ? 'Disable' : 'Enable'}</button>
</form></section>`
        : '';
    const memberRows = members.map(
      (m) =>
        html`<tr data-testid="member"><td class="wrap-any" data-label="E-mail">${m.email}</td><td data-label="Role">${m.role}</td><td data-label="Two-factor">${m.twoFactor ? 'on' : 'off'}</td><td class="when" data-label="Since">${time(m.since)}</td></tr>`,
    );
    const membersSection = html`<section class="section" aria-labelledby="members-heading"><h2 id="members-heading">Members</h2>
<div class="table-wrap"><table class="table"><caption class="visually-hidden">The account's people</caption><thead><tr><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Two-factor</th><th scope="col">Since</th></tr></thead><tbody>${memberRows}</tbody></table></div>
${
  members.length
    ? html`<form method="post" action="/accounts/${account.id}/two-factor-reset" class="stack card">
  ${csrfField(web.token(request))}
  <h3>Reset a member's two-factor</h3>
  <p class="muted">For a person who lost their device and recovery codes: check who is asking first. Their sessions end; they sign in with their password and enrol again.</p>
  <div class="field"><label for="member-email">Member</label><select id="member-email" name="email">${members.map((m) => html`<option value="${m.email}">${m.email}</option>`)}</select></div>
  <div class="field"><label for="reset-reason">Reason (in the audit log)</label><input id="reset-reason" name="reason" required maxlength="1000"></div>
  <button type="submit" class="button button-danger">Reset two-factor</button>
</form>
<form method="post" action="/accounts/${account.id}/password-link" class="stack card">
  ${csrfField(web.token(request))}
  <h3>Set-password link</h3>
  <p class="muted">A one-time link (72 hours) that sets or resets a member's dashboard password, shown here once for you to hand over; no e-mail is sent.</p>
  <div class="field"><label for="link-email">Member</label><select id="link-email" name="email">${members.map((m) => html`<option value="${m.email}">${m.email}</option>`)}</select></div>
  <div class="field"><label for="link-reason">Reason (in the audit log)</label><input id="link-reason" name="reason" required maxlength="1000"></div>
  <button type="submit" class="button button-secondary">Issue a link</button>
</form>`
    : ''
}
</section>`;
    const auditRows = audit.map(
      (a) =>
        html`<tr><td class="when" data-label="When">${time(a.createdAt)}</td><td data-label="Action">${a.action}</td><td data-label="By">${a.actor}</td><td data-label="IP">${a.ip ?? ''}</td><td class="wrap-any" data-label="Reason">${a.reason ?? ''}</td></tr>`,
    );
    const body = html`<h1>${account.email}</h1>
<p class="muted"><span class="mono">${account.id}</span> · ${account.status} · created ${time(account.createdAt)}</p>
<div class="table-wrap"><table class="table"><caption class="visually-hidden">Balances</caption><thead><tr><th scope="col">Mode</th><th scope="col" class="num">Available</th><th scope="col" class="num">Reserved</th></tr></thead><tbody>${balances}</tbody></table></div>
${adjustForm}
${statusForm}
${membersSection}
<section class="section" aria-labelledby="audit-heading"><h2 id="audit-heading">Audit trail</h2>
<div class="table-wrap"><table class="table"><caption class="visually-hidden">The account's audit trail</caption><thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">By</th><th scope="col">IP</th><th scope="col">Reason</th></tr></thead><tbody>${auditRows}</tbody></table></div>
</section>`;
    return { code, page: consolePage({ session, csrf: web.token(request) }, { title: account.email, section: 'accounts', body, notice: status }) };
  };

  web.get('/accounts/:id', 'support', async (request, reply) => {
    const id = (request.params as { id: string }).id;
    const { code, page } = await accountPage(request, id, ADJUST_NOTICES[field(request.query, 'notice')]);
    return sendHtml(reply, page, code);
  });

  web.post('/accounts/:id/adjust', 'admin', async (request, reply) => {
    const session = web.session(request);
    const id = (request.params as { id: string }).id;
    const body = request.body;
    const refuse = async (message: string, status = 400) => {
      const { code, page } = await accountPage(request, id, notice('error', message), status);
      return sendHtml(reply, page, code === 404 ? 404 : status);
    };
    const mode = field(body, 'mode');
    if (!isMode(mode)) return refuse('Choose the live or the test balance.');
    const direction = field(body, 'direction');
    if (direction !== 'credit' && direction !== 'debit') return refuse('Choose credit or debit.');
    let amount: bigint;
    try {
      amount = parseTon(field(body, 'amount').trim());
    } catch (error) {
      if (error instanceof MoneyFormatError) return refuse(`Amount: ${error.message}`);
      throw error;
    }
    if (amount === 0n) return refuse('Amount: must be more than 0.');
    const reason = field(body, 'reason').trim();
    if (reason === '' || [...reason].length > 1000) return refuse('Give a reason (at most 1000 characters): it goes to the audit log.');
    if (!(await verifyOperatorCode(web.ctx.db, session.operatorId, field(body, 'code'))))
      return refuse('That two-factor code is not right, or was already used. Nothing was moved.', 401);
    try {
      await operatorAdjust(web.ctx.db, {
        accountId: id,
        mode,
        amount: direction === 'debit' ? -amount : amount,
        reason,
        actor: session.email,
        action: direction === 'debit' ? 'balance.debit' : 'balance.credit',
        console: { operatorId: session.operatorId, ip: request.ip },
      });
    } catch (error) {
      if (error instanceof AdjustmentError) return refuse(error.message, 409);
      throw error;
    }
    return redirect(reply, `/accounts/${id}?notice=credited`);
  });

  web.post('/accounts/:id/two-factor-reset', 'support', async (request, reply) => {
    const session = web.session(request);
    const id = (request.params as { id: string }).id;
    const refuse = async (message: string) => {
      const { code, page } = await accountPage(request, id, notice('error', message), 400);
      return sendHtml(reply, page, code === 404 ? 404 : 400);
    };
    const reason = field(request.body, 'reason').trim();
    if (reason === '' || [...reason].length > 1000) return refuse('Give a reason (at most 1000 characters): it goes to the audit log.');
    const email = normalizeEmail(field(request.body, 'email'));
    const members = await listMembers(web.ctx.db.kysely, id);
    if (!members.some((m) => m.email === email)) return refuse('Choose a member of this account. Nothing was changed.');
    await operatorResetTwoFactor(web.ctx.db, { email, reason, actor: session.email, console: { operatorId: session.operatorId, ip: request.ip } });
    return redirect(reply, `/accounts/${id}?notice=two-factor`);
  });

  web.post('/accounts/:id/password-link', 'support', async (request, reply) => {
    const session = web.session(request);
    const id = (request.params as { id: string }).id;
    const answer = async (message: Slot, status: number) => {
      const { code, page } = await accountPage(request, id, message, status);
      return sendHtml(reply, page, code === 404 ? 404 : status);
    };
    const reason = field(request.body, 'reason').trim();
    if (reason === '' || [...reason].length > 1000) return answer(notice('error', 'Give a reason (at most 1000 characters): it goes to the audit log.'), 400);
    const email = normalizeEmail(field(request.body, 'email'));
    if (!(await listMembers(web.ctx.db.kysely, id)).some((m) => m.email === email)) return answer(notice('error', 'Choose a member of this account. No link was issued.'), 400);
    const origin = web.ctx.publicUrl;
    // As `starport account invite`: a token at an address nothing listens on is one handed to a stranger.
    if (origin === undefined) return answer(notice('error', 'PUBLIC_URL is not set, so no link can point at the dashboard: set it to the origin the service is reached at.'), 409);
    const link = await issuePasswordLink(web.ctx.db, email, Date.now(), (tx, issued) =>
      recordAudit(tx, {
        actor: session.email,
        source: 'console',
        operatorId: session.operatorId,
        ip: request.ip,
        action: 'account.password_link',
        accountId: id,
        reason,
        details: { email: issued.email, link_account_id: issued.accountId },
        now: Date.now(),
      }),
    );
    const url = `${origin}/set-password/${link.token}`;
    return answer(
      notice(
        'success',
        html`Set-password link for ${link.email}, shown once: <code class="wrap-any" data-testid="password-link">${url}</code> It works once, until ${time(link.expiresAt)}. Hand it to the person; no e-mail is sent.`,
      ),
      200,
    );
  });

  for (const verb of ['disable', 'enable'] as const) {
    web.post(`/accounts/:id/${verb}`, 'admin', async (request, reply) => {
      const session = web.session(request);
      const id = (request.params as { id: string }).id;
      const reason = field(request.body, 'reason').trim();
      if (reason === '' || [...reason].length > 1000) {
        const { code, page } = await accountPage(request, id, notice('error', 'Give a reason (at most 1000 characters): it goes to the audit log.'), 400);
        return sendHtml(reply, page, code === 404 ? 404 : 400);
      }
      if (!(await findAccount(web.ctx.db.kysely, id))) return sendHtml(reply, (await accountPage(request, id)).page, 404);
      await operatorSetStatus(web.ctx.db, {
        accountId: id,
        status: verb === 'disable' ? 'disabled' : 'active',
        reason,
        actor: session.email,
        console: { operatorId: session.operatorId, ip: request.ip },
      });
      return redirect(reply, `/accounts/${id}?notice=status`);
    });
  }
}
