import { type AccountStatus, findAccount, listKeys } from '../../../accounts/admin.js';
import { listMembers } from '../../../accounts/team.js';
import { listAudit } from '../../../audit/audit.js';
import { listDeposits } from '../../../deposits/store.js';
import { MODES } from '../../../domain/api-key.js';
import { balanceHistory } from '../../../ledger/history.js';
import { listOrders } from '../../../orders/list-orders.js';
import { listEndpoints } from '../../../webhooks/endpoints.js';
import { csrfField } from '../../html/document.js';
import { time, ton } from '../../html/format.js';
import { type Html, html, type Slot } from '../../html/html.js';
import type { Console } from '../console.js';
import { consolePage } from '../layout.js';
import { depositsSection, journalSection, keysSection, ordersSection, SHOWN, webhooksSection } from './account-sections.js';

type Request = Parameters<Parameters<Console['get']>[2]>[0];

/**
 * An account's page: balances, keys, orders, deposits, balance history, webhook endpoints,
 * members and audit trail, each read through its feature's own list function; support reads
 * it all, admins also get the forms that change the account (./account-actions.ts takes them).
 * `status` is the notice on top: an action's outcome, or a secret shown once in the answer to
 * its POST (never kept, so a reload does not show it again).
 */
export async function accountPage(web: Console, request: Request, id: string, status?: Slot, code = 200): Promise<{ code: number; page: Html }> {
  const session = web.session(request);
  const view = { session, csrf: web.token(request) };
  const db = web.ctx.db.kysely;
  const account = await findAccount(db, id);
  if (!account) return { code: 404, page: consolePage(view, { title: 'No such account', section: 'accounts', body: html`<h1>No such account</h1><p>${id}</p>` }) };
  const [audit, members, keys, orders, deposits, live, test, liveHooks, testHooks] = await Promise.all([
    listAudit(db, { accountId: account.id, limit: SHOWN }),
    listMembers(db, account.id),
    listKeys(db, account.id),
    listOrders(db, { accountId: account.id, mode: null, limit: SHOWN }),
    listDeposits(db, { accountId: account.id, limit: SHOWN }),
    balanceHistory(db, { accountId: account.id, mode: 'live', limit: SHOWN }),
    balanceHistory(db, { accountId: account.id, mode: 'test', limit: SHOWN }),
    listEndpoints(db, { accountId: account.id, mode: 'live' }),
    listEndpoints(db, { accountId: account.id, mode: 'test' }),
  ]);
  const admin = session.role === 'admin' ? { csrf: view.csrf } : undefined;
  const balances = MODES.map(
    (m) =>
      html`<tr><th scope="row">${m}</th><td data-label="Available" class="num" data-testid="available-${m}">${ton(account.balances[m].available)}</td><td data-label="Reserved" class="num">${ton(account.balances[m].reserved)}</td></tr>`,
  );
  const auditRows = audit.map(
    (a) =>
      html`<tr><td data-label="When" class="when">${time(a.createdAt)}</td><td data-label="Action">${a.action}</td><td data-label="By" class="wrap-any">${a.actor}</td><td data-label="IP" class="mono">${a.ip ?? ''}</td><td data-label="Reason" class="wrap-any">${a.reason ?? ''}</td></tr>`,
  );
  const body = html`<h1 class="wrap-any">${account.email}</h1>
<p class="muted"><span class="mono">${account.id}</span> · ${account.status} · created ${time(account.createdAt)}</p>
<div class="table-wrap"><table class="table"><caption class="visually-hidden">Balances</caption><thead><tr><th scope="col">Mode</th><th scope="col" class="num">Available</th><th scope="col" class="num">Reserved</th></tr></thead><tbody>${balances}</tbody></table></div>
${admin ? adminForms(account.id, account.status, admin.csrf) : ''}
${keysSection(account.id, keys, admin)}
${ordersSection(account.id, orders.orders, orders.hasMore)}
${depositsSection(deposits, web.ctx.tonNetwork)}
${journalSection({ live: live.entries, test: test.entries })}
${webhooksSection([...liveHooks, ...testHooks])}
${membersSection(account.id, members, view.csrf)}
<section class="section" aria-labelledby="audit-heading"><h2 id="audit-heading">Audit trail (newest ${SHOWN})</h2>
<div class="table-wrap"><table class="table"><caption class="visually-hidden">The account's audit trail</caption><thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">By</th><th scope="col">IP</th><th scope="col">Reason</th></tr></thead><tbody>${auditRows}</tbody></table></div>
</section>`;
  return { code, page: consolePage(view, { title: account.email, section: 'accounts', body, notice: status }) };
}

/** Credit or debit (the code asked again: it moves money), and disable or enable. */
function adminForms(accountId: string, status: AccountStatus, csrf: string): Html {
  const next = status === 'active' ? 'disable' : 'enable';
  return html`<section class="section" aria-labelledby="adjust-heading"><h2 id="adjust-heading">Credit or debit</h2>
<form method="post" action="/accounts/${accountId}/adjust" class="stack card">
  ${csrfField(csrf)}
  <div class="field"><label for="mode">Balance</label><select id="mode" name="mode"><option value="live">live</option><option value="test">test</option></select></div>
  <div class="field"><label for="direction">Direction</label><select id="direction" name="direction"><option value="credit">credit</option><option value="debit">debit</option></select></div>
  <div class="field"><label for="amount">Amount (TON)</label><input id="amount" name="amount" inputmode="decimal" required></div>
  <div class="field"><label for="reason">Reason (in the audit log)</label><input id="reason" name="reason" required maxlength="1000"></div>
  <div class="field"><label for="code">Two-factor code (asked again to move money)</label><input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" required></div>
  <button type="submit" class="button button-primary">Adjust the balance</button>
</form></section>
<section class="section" aria-labelledby="status-heading"><h2 id="status-heading">${next === 'disable' ? 'Disable the account' : 'Enable the account'}</h2>
<form method="post" action="/accounts/${accountId}/${next}" class="stack card">
  ${csrfField(csrf)}
  <div class="field"><label for="status-reason">Reason (in the audit log)</label><input id="status-reason" name="reason" required maxlength="1000"></div>
  <button type="submit" class="button ${next === 'disable' ? 'button-danger' : 'button-primary'}">${next === 'disable' ? 'Disable' : 'Enable'}</button>
</form></section>`;
}

/** The account's people, with the two forms support may use too: a two-factor reset and a set-password link. */
function membersSection(accountId: string, members: Awaited<ReturnType<typeof listMembers>>, csrf: string): Html {
  const rows = members.map(
    (m) =>
      html`<tr data-testid="member"><td data-label="E-mail" class="wrap-any">${m.email}</td><td data-label="Role">${m.role}</td><td data-label="Two-factor">${m.twoFactor ? 'on' : 'off'}</td><td data-label="Since" class="when">${time(m.since)}</td></tr>`,
  );
  const options = members.map((m) => html`<option value="${m.email}">${m.email}</option>`);
  return html`<section class="section" aria-labelledby="members-heading"><h2 id="members-heading">Members</h2>
<div class="table-wrap"><table class="table"><caption class="visually-hidden">The account's people</caption><thead><tr><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">Two-factor</th><th scope="col">Since</th></tr></thead><tbody>${rows}</tbody></table></div>
${
  members.length
    ? html`<form method="post" action="/accounts/${accountId}/two-factor-reset" class="stack card">
  ${csrfField(csrf)}
  <h3>Reset a member's two-factor</h3>
  <p class="muted">For a person who lost their device and recovery codes: check who is asking first. Their sessions end; they sign in with their password and enrol again.</p>
  <div class="field"><label for="member-email">Member</label><select id="member-email" name="email">${options}</select></div>
  <div class="field"><label for="reset-reason">Reason (in the audit log)</label><input id="reset-reason" name="reason" required maxlength="1000"></div>
  <button type="submit" class="button button-danger">Reset two-factor</button>
</form>
<form method="post" action="/accounts/${accountId}/password-link" class="stack card">
  ${csrfField(csrf)}
  <h3>Set-password link</h3>
  <p class="muted">A one-time link (72 hours) that sets or resets a member's dashboard password, shown here once for you to hand over; no e-mail is sent.</p>
  <div class="field"><label for="link-email">Member</label><select id="link-email" name="email">${options}</select></div>
  <div class="field"><label for="link-reason">Reason (in the audit log)</label><input id="link-reason" name="reason" required maxlength="1000"></div>
  <button type="submit" class="button button-secondary">Issue a link</button>
</form>`
    : ''
}
</section>`;
}
