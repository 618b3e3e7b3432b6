import { accountForMemo, normalizeMemo } from '../../../accounts/deposit-memo.js';
import { findAccount } from '../../../accounts/admin.js';
import { transactionUrl } from '../../../deposits/explorer.js';
import { AssignError, assignDeposit, ReturnError, returnDeposit } from '../../../deposits/settle.js';
import { type Deposit, findDeposit, listDeposits } from '../../../deposits/store.js';
import { formatUsdt } from '../../../domain/usdt.js';
import { verifyOperatorCode } from '../../../operator/operator-two-factor.js';
import { UNAVAILABLE_RETRY_AFTER_S } from '../../errors.js';
import { csrfField, notice } from '../../html/document.js';
import { time, ton } from '../../html/format.js';
import { type Html, html, type Slot } from '../../html/html.js';
import { field, redirect, sendHtml } from '../../html/http.js';
import type { Console } from '../console.js';
import { consolePage } from '../layout.js';

/**
 * Deposits: the unmatched ones first with their reason, then the latest settled ones; a
 * deposit's page where an admin credits an unmatched one to an account found by its deposit
 * memo or e-mail (the two-factor code asked again: it moves money), or records that it was sent
 * back by hand, through the functions of `starport deposit assign|return` (src/deposits/settle.ts).
 */
const UNMATCHED_SHOWN = 200;
const SETTLED_SHOWN = 50;
const REASON_MAX = 1000;

const REASONS: Record<NonNullable<Deposit['reason']>, string> = {
  no_comment: 'no comment (no memo)',
  memo_invalid: 'memo mistyped (wrong shape or check character)',
  memo_unknown: 'memo of no account',
  below_minimum: 'below the minimum',
  unknown_jetton: 'a jetton that is not our USDT',
};

/** TON, or USDT with the TON it was converted to once credited (also the account page's deposits). */
export const amountOf = (d: Deposit): string =>
  d.asset === 'USDT'
    ? `${formatUsdt(d.jettonAmount ?? 0n)} USDT${d.status === 'credited' ? ` (${ton(d.amount)})` : ''}`
    : d.asset === 'jetton'
      ? `${d.jettonAmount ?? 0n} units of a foreign jetton`
      : ton(d.amount);

/** Comments are untrusted chain data: escaped by the template, and cut short in tables. */
const short = (comment: string | null) => (comment === null ? '' : comment.length > 40 ? `${comment.slice(0, 39)}…` : comment);

/** What became of a deposit that is no longer unmatched: nothing more to assign or return. */
function settledText(d: Deposit): Html {
  const account = d.accountId ? html`<a href="/accounts/${d.accountId}" class="mono">${d.accountId}</a>` : '';
  if (d.status === 'credited') return html`This deposit is already credited to ${account}${d.creditedAt ? html` (${time(d.creditedAt)}, by the ${d.creditedBy})` : ''}.`;
  if (d.status === 'returned') return html`This deposit is already recorded as returned to its sender${d.returnedAt ? html` (${time(d.returnedAt)})` : ''}.`;
  if (d.status === 'awaiting_rate') return html`This deposit matched ${account}: the watcher credits it as soon as a fresh TON/USD rate exists.`;
  return html`This notification came from a jetton wallet that is not the deposit wallet's USDT wallet: no USDT arrived, there is nothing to assign or return.`;
}

/** The account a deposit is assigned to: by deposit memo, e-mail or account id. */
async function accountFor(web: Console, query: string): Promise<string | undefined> {
  const db = web.ctx.db.kysely;
  if (query.includes('@') || query.startsWith('acct_')) return (await findAccount(db, query))?.id;
  return accountForMemo(db, normalizeMemo(query));
}

const NOTICES: Record<string, Slot> = {
  assigned: notice('success', 'The deposit was credited to the account and the action recorded in the audit log.'),
  returned: notice('success', 'The deposit was recorded as returned to its sender and the action recorded in the audit log. Nothing was sent by Starport.'),
};

type Request = Parameters<Parameters<Console['get']>[2]>[0];
type Reply = Parameters<Parameters<Console['get']>[2]>[1];

export function depositRoutes(web: Console): void {
  web.get('/deposits', 'support', async (request, reply) => {
    const session = web.session(request);
    const db = web.ctx.db.kysely;
    const [unmatched, settled] = await Promise.all([
      listDeposits(db, { status: 'unmatched', limit: UNMATCHED_SHOWN }),
      listDeposits(db, { status: ['credited', 'returned', 'awaiting_rate', 'ignored'], limit: SETTLED_SHOWN }),
    ]);
    const unmatchedRows = unmatched.map(
      (d) =>
        html`<tr data-testid="unmatched-row"><td data-label="Chain time" class="when">${time(d.chainTime)}</td><td data-label="Amount" class="num">${amountOf(d)}</td><td data-label="Reason" data-testid="reason">${d.reason ? REASONS[d.reason] : ''}</td><td data-label="Comment" class="wrap-any">${short(d.comment)}</td><td class="actions"><a href="/deposits/${d.id}">Settle<span class="visually-hidden"> deposit ${d.txHash}</span></a></td></tr>`,
    );
    const settledRows = settled.map(
      (d) =>
        html`<tr><td data-label="Chain time" class="when">${time(d.chainTime)}</td><td data-label="Amount" class="num">${amountOf(d)}</td><td data-label="Status">${d.status}</td><td data-label="Account">${d.accountId ? html`<a href="/accounts/${d.accountId}" class="mono">${d.accountId}</a>` : ''}</td><td class="actions"><a href="/deposits/${d.id}">Details</a></td></tr>`,
    );
    const body = html`<h1>Deposits</h1>
<section class="section" aria-labelledby="unmatched-heading"><h2 id="unmatched-heading">Unmatched (<span data-testid="unmatched-count">${unmatched.length}</span>)</h2>
${
  unmatched.length === 0
    ? html`<p class="notice notice-success" role="status" data-testid="no-unmatched">No deposit waits for a person.</p>`
    : html`<p class="muted">Newest first. Open one to credit it to its account or record that you sent it back.</p>
<div class="table-wrap"><table class="table"><caption class="visually-hidden">Unmatched deposits, newest first</caption><thead><tr><th scope="col">Chain time</th><th scope="col" class="num">Amount</th><th scope="col">Reason</th><th scope="col">Comment</th><th scope="col"><span class="visually-hidden">Action</span></th></tr></thead><tbody>${unmatchedRows}</tbody></table></div>`
}
</section>
<section class="section" aria-labelledby="settled-heading"><h2 id="settled-heading">Latest settled</h2>
${
  settledRows.length === 0
    ? html`<p class="muted" data-testid="no-settled">No deposit settled yet.</p>`
    : html`<div class="table-wrap"><table class="table"><caption class="visually-hidden">The latest ${SETTLED_SHOWN} settled deposits</caption><thead><tr><th scope="col">Chain time</th><th scope="col" class="num">Amount</th><th scope="col">Status</th><th scope="col">Account</th><th scope="col"><span class="visually-hidden">Details</span></th></tr></thead><tbody>${settledRows}</tbody></table></div>`
}
</section>`;
    return sendHtml(reply, consolePage({ session, csrf: web.token(request) }, { title: 'Deposits', section: 'deposits', body }));
  });

  const depositPage = async (request: Request, id: string, status?: Slot, code = 200) => {
    const session = web.session(request);
    const view = { session, csrf: web.token(request) };
    const d = await findDeposit(web.ctx.db.kysely, { id });
    if (!d) return { code: 404, page: consolePage(view, { title: 'No such deposit', section: 'deposits', body: html`<h1>No such deposit</h1><p>${id}</p>` }) };
    const facts = html`<dl class="details">
  <div><dt>Transaction</dt><dd class="mono"><a href="${transactionUrl(d.txHash, web.ctx.tonNetwork)}" rel="noopener noreferrer">${d.txHash}</a></dd></div>
  <div><dt>Amount</dt><dd data-testid="deposit-amount">${amountOf(d)}</dd></div>
  <div><dt>Sender</dt><dd class="mono">${d.sender}</dd></div>
  <div><dt>Comment</dt><dd>${d.comment ?? '(none)'}</dd></div>
  <div><dt>Status</dt><dd data-testid="deposit-status">${d.status}${d.reason ? ` (${REASONS[d.reason]})` : ''}</dd></div>
  <div><dt>Chain time</dt><dd>${time(d.chainTime)}</dd></div>
</dl>`;
    let actions: Html;
    if (d.status !== 'unmatched') actions = html`<p class="notice notice-info" role="status" data-testid="settled">${settledText(d)}</p>`;
    else if (session.role !== 'admin') actions = html`<p class="muted">An admin credits it to its account or records its return.</p>`;
    else
      actions = html`<section class="section" aria-labelledby="assign-heading"><h2 id="assign-heading">Credit it to an account</h2>
<form method="post" action="/deposits/${d.id}/assign" class="stack card">
  ${csrfField(view.csrf)}
  <div class="field"><label for="account">The account's deposit memo or e-mail (or its id)</label><input id="account" name="account" required maxlength="320"></div>
  <div class="field"><label for="reason">Reason (in the audit log)</label><input id="reason" name="reason" required maxlength="${REASON_MAX}"></div>
  <div class="field"><label for="code">Two-factor code (asked again to move money)</label><input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" required></div>
  <button type="submit" class="button button-primary">Credit the live balance</button>
</form></section>
<section class="section" aria-labelledby="return-heading"><h2 id="return-heading">Record its return</h2>
<p class="muted">Starport sends nothing: first send it back to the sender from the deposit wallet yourself, then record it here. No balance changes.</p>
<form method="post" action="/deposits/${d.id}/return" class="stack card">
  ${csrfField(view.csrf)}
  <div class="field"><label for="return-reason">Reason (in the audit log)</label><input id="return-reason" name="reason" required maxlength="${REASON_MAX}"></div>
  <button type="submit" class="button button-danger">Record as returned</button>
</form></section>`;
    const body = html`<h1>Deposit</h1>${facts}${actions}`;
    return { code, deposit: d, page: consolePage(view, { title: 'Deposit', section: 'deposits', body, notice: status }) };
  };

  web.get('/deposits/:id', 'support', async (request, reply) => {
    const id = (request.params as { id: string }).id;
    const { code, page } = await depositPage(request, id, NOTICES[field(request.query, 'notice')]);
    return sendHtml(reply, page, code);
  });

  /** A refusal: the deposit's page again with the message (404 when there is no such deposit); nothing changed. */
  const refuse = async (request: Request, reply: Reply, id: string, message: Slot, status: number) => {
    const { code, page } = await depositPage(request, id, notice('error', message), status);
    return sendHtml(reply, page, code === 404 ? 404 : status);
  };

  /** The deposit, still unmatched, and the reason given: or the refusal to answer with. */
  const checked = async (request: Request, id: string): Promise<{ refusal: { message: Slot; status: number } } | { deposit: Deposit; reason: string }> => {
    const deposit = await findDeposit(web.ctx.db.kysely, { id });
    if (!deposit) return { refusal: { message: 'No such deposit.', status: 404 } };
    if (deposit.status !== 'unmatched') return { refusal: { message: html`${settledText(deposit)} Nothing was changed.`, status: 409 } };
    const reason = field(request.body, 'reason').trim();
    if (reason === '' || [...reason].length > REASON_MAX)
      return { refusal: { message: `Give a reason (at most ${REASON_MAX} characters): it goes to the audit log.`, status: 400 } };
    return { deposit, reason };
  };

  web.post('/deposits/:id/assign', 'admin', async (request, reply) => {
    const session = web.session(request);
    const id = (request.params as { id: string }).id;
    const found = await checked(request, id);
    if ('refusal' in found) return refuse(request, reply, id, found.refusal.message, found.refusal.status);
    const { deposit, reason } = found;
    const query = field(request.body, 'account').trim();
    if (query === '') return refuse(request, reply, id, "Give the account's deposit memo or e-mail.", 400);
    const accountId = await accountFor(web, query);
    if (!accountId) return refuse(request, reply, id, `No account has the deposit memo or e-mail “${query}”. Nothing was moved.`, 400);
    const usdt = deposit.asset === 'USDT' ? await web.ctx.usdtConversion() : undefined;
    if (usdt && !usdt.rate) {
      reply.header('Retry-After', String(UNAVAILABLE_RETRY_AFTER_S));
      return refuse(
        request,
        reply,
        id,
        'A USDT deposit is converted at the current TON/USD rate and the rate feed has no fresh rate: try again in a moment. Nothing was moved.',
        503,
      );
    }
    if (!(await verifyOperatorCode(web.ctx.db, session.operatorId, field(request.body, 'code'))))
      return refuse(request, reply, id, 'That two-factor code is not right, or was already used. Nothing was moved.', 401);
    try {
      await assignDeposit(web.ctx.db, { txHash: deposit.txHash, accountId, actor: session.email, reason, usdt, console: { operatorId: session.operatorId, ip: request.ip } });
    } catch (error) {
      if (error instanceof AssignError) return refuse(request, reply, id, `${error.message}. Nothing was moved.`, 409);
      throw error;
    }
    return redirect(reply, `/deposits/${id}?notice=assigned`);
  });

  web.post('/deposits/:id/return', 'admin', async (request, reply) => {
    const session = web.session(request);
    const id = (request.params as { id: string }).id;
    const found = await checked(request, id);
    if ('refusal' in found) return refuse(request, reply, id, found.refusal.message, found.refusal.status);
    const { deposit, reason } = found;
    try {
      await returnDeposit(web.ctx.db, { txHash: deposit.txHash, actor: session.email, reason, console: { operatorId: session.operatorId, ip: request.ip } });
    } catch (error) {
      if (error instanceof ReturnError) return refuse(request, reply, id, `${error.message}. Nothing was changed.`, 409);
      throw error;
    }
    return redirect(reply, `/deposits/${id}?notice=returned`);
  });
}
