import type { FastifyInstance } from 'fastify';
import { findAccount } from '../../../accounts/admin.js';
import type { Mode } from '../../../domain/api-key.js';
import { formatUsdt } from '../../../domain/usdt.js';
import { statementCsv } from '../../../statements/csv.js';
import { type Month, monthRange, parseMonth } from '../../../statements/month.js';
import { accountStatement, type Statement, StatementUnavailable, statementMonths } from '../../../statements/statement.js';
import { emptyState } from '../components.js';
import { modeLabel, modePath, time, ton } from '../../html/format.js';
import { type Html, html } from '../../html/html.js';
import { sendHtml } from '../../html/http.js';
import { dashboardPage } from '../layout.js';
import type { Web } from '../web.js';

/**
 * Statements (docs/dashboard.md "Statements"): the months of the balance being viewed, each as a
 * printable page (the print stylesheet in app.css makes a clean A4 PDF from the browser) and as
 * CSV. Every member may read them, as the balance history (src/http/web/rules.ts).
 */

const MONTH_NAMES = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const monthName = (m: Month) => `${MONTH_NAMES[m.month - 1]} ${m.year}`;
const monthText = (m: Month) => `${m.year}-${String(m.month).padStart(2, '0')}`;

export function statementRoutes(_app: FastifyInstance, web: Web): void {
  const { ctx } = web;

  web.page('/statements', async (request, reply, mode) => {
    const view = web.view(request, mode);
    const account = await findAccount(ctx.db.kysely, view.session.accountId);
    const months = account ? statementMonths(account.createdAt, Date.now()) : [];
    const rows = months.map(
      (m, i) => html`<tr>
  <td data-label="Month"><a href="${modePath(mode, `/statements/${monthText(m)}`)}">${monthName(m)}</a>${i === 0 ? html` <span class="muted">(to date)</span>` : ''}</td>
  <td data-label="Download"><a href="${modePath(mode, `/statements/${monthText(m)}.csv`)}" download>CSV</a></td>
</tr>`,
    );
    const body = html`<div class="page-head"><h1>Statements</h1></div>
<p class="muted">A statement of your ${modeLabel(mode).toLowerCase()} balance for each calendar month (UTC) since the account was opened: opening balance, deposits, orders and adjustments, closing balance. Open one to print it or save it as a PDF; the current month runs to today.</p>
<div class="table-wrap" role="region" aria-label="Statement months" tabindex="0">
<table class="table statements-table">
  <caption class="visually-hidden">${modeLabel(mode)} statements by month</caption>
  <thead><tr><th scope="col">Month</th><th scope="col">Download</th></tr></thead>
  <tbody>${rows}</tbody>
</table>
</div>`;
    return sendHtml(reply, dashboardPage(view, { title: 'Statements', section: 'statements', body }));
  });

  /** The statement of `:month` (YYYY-MM, or YYYY-MM.csv), or the reason there is none. */
  const load = async (raw: string, accountId: string, mode: Mode): Promise<{ statement: Statement } | { missing: string }> => {
    const month = parseMonth(raw);
    if (!month) return { missing: `“${raw}” is not a month: statements are addressed as YYYY-MM, e.g. 2026-10.` };
    try {
      const statement = await accountStatement(ctx.db.kysely, { accountId, mode, month });
      return statement ? { statement } : { missing: 'This account no longer exists.' };
    } catch (error) {
      if (error instanceof StatementUnavailable) return { missing: error.message };
      throw error;
    }
  };

  web.page('/statements/:month', async (request, reply, mode) => {
    const view = web.view(request, mode);
    const param = (request.params as { month: string }).month;
    const csv = param.endsWith('.csv');
    const found = await load(csv ? param.slice(0, -'.csv'.length) : param, view.session.accountId, mode);
    if ('missing' in found) {
      const body = html`<div class="page-head"><h1>No statement</h1></div>
${emptyState('There is no statement for this month', found.missing, { href: modePath(mode, '/statements'), label: 'All statements' })}`;
      return sendHtml(reply, dashboardPage(view, { title: 'No statement', section: 'statements', body }), 404);
    }
    const s = found.statement;
    if (csv) {
      return reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="statement-${mode}-${s.month}.csv"`).send(statementCsv(s));
    }
    return sendHtml(reply, dashboardPage(view, { title: `Statement ${s.month}`, section: 'statements', body: statementBody(s, view.session.accountEmail, mode) }));
  });
}

function statementBody(s: Statement, email: string, mode: Mode): Html {
  const month = parseMonth(s.month) as Month;
  const end = Math.min(s.to, s.generatedAt);
  const row = (label: Html | string, count: number | null, amount: string, className = '') =>
    html`<tr${className ? html` class="${className}"` : ''}><th scope="row">${label}</th>${count === null ? html`<td class="num"></td>` : html`<td class="num" data-label="Count">${String(count)}</td>`}<td class="num" data-label="Amount">${amount}</td></tr>`;
  const usdt = s.deposits.usdt.lines.map(
    (l) => html`<li>${time(l.creditedAt)}: ${formatUsdt(l.usdt)} USDT at ${l.rate ?? '?'} USD/TON → ${ton(l.amount)} <span class="mono wrap-any">${l.txHash}</span></li>`,
  );
  return html`<div class="page-head no-print"><h1>Statement</h1>
  <div class="card-actions">
    <a class="button button-secondary" href="${modePath(mode, '/statements')}">All months</a>
    <a class="button button-secondary" href="${modePath(mode, `/statements/${s.month}.csv`)}" download>Download CSV</a>
    <button type="button" class="button" data-print hidden>Print or save as PDF</button>
  </div>
</div>
<article class="statement" data-testid="statement">
<header class="statement-head">
  <h2>${modeLabel(mode)} balance statement, ${monthName(month)}</h2>
  <p>Account <span class="mono">${s.accountId}</span> · ${email}</p>
  <p>${time(monthRange(month).from)} to ${time(end)}${s.complete ? '' : html` <strong>(month in progress)</strong>`} · amounts in TON</p>
</header>
<div class="table-wrap" role="region" aria-label="Statement for ${monthName(month)}" tabindex="0">
<table class="table statement-table">
  <caption class="visually-hidden">Statement for ${monthName(month)}</caption>
  <thead><tr><th scope="col">Line</th><th scope="col" class="num">Count</th><th scope="col" class="num">Amount</th></tr></thead>
  <tbody>
    ${row('Opening balance: available', null, ton(s.opening.available), 'statement-total')}
    ${row('Opening balance: reserved for orders', null, ton(s.opening.reserved))}
    ${row('Deposits in TON', s.deposits.ton.count, ton(s.deposits.ton.amount))}
    ${row(`Deposits in USDT (${formatUsdt(s.deposits.usdt.usdt)} USDT converted)`, s.deposits.usdt.count, ton(s.deposits.usdt.amount))}
    ${row('Orders placed (moved to reserved)', s.placed.count, ton(-s.placed.amount))}
    ${s.delivered.products.map((p) => row(`Orders delivered: ${p.product === 'stars' ? `${p.quantity} Stars` : `Premium, ${p.quantity} months`}`, p.count, ton(p.amount)))}
    ${s.delivered.products.length === 0 ? row('Orders delivered', 0, ton(0n)) : ''}
    ${row('Orders failed (released to available)', s.failed.count, ton(s.failed.amount))}
    ${row('Adjustments: credits', null, ton(s.adjustments.credits))}
    ${row('Adjustments: debits', null, ton(-s.adjustments.debits))}
    ${row('Closing balance: available', null, ton(s.closing.available), 'statement-total')}
    ${row('Closing balance: reserved for orders', null, ton(s.closing.reserved))}
  </tbody>
</table>
</div>
${usdt.length ? html`<h3>USDT deposits</h3><ul class="statement-notes">${usdt}</ul>` : ''}
<p class="muted statement-notes">Available = opening available + deposits + adjustments − orders placed + orders failed. Reserved = opening reserved + orders placed − orders delivered − orders failed. An order is reserved when it is placed, spent when it is delivered and released when it fails, each in the month it happens. Generated ${time(s.generatedAt)}.</p>
</article>`;
}
