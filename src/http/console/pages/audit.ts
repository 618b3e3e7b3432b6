import type { FastifyRequest } from 'fastify';
import { findAccount } from '../../../accounts/admin.js';
import { AUDIT_ACTIONS, type AuditCursor, type AuditFilter, type AuditRecord, listAudit } from '../../../audit/audit.js';
import { csvCell } from '../../../domain/csv.js';
import { formatTimestamp } from '../../../domain/time.js';
import { listOperators, type Operator } from '../../../operator/operators.js';
import { notice } from '../../html/document.js';
import { time } from '../../html/format.js';
import { html } from '../../html/html.js';
import { field, sendHtml } from '../../html/http.js';
import type { Console } from '../console.js';
import { consolePage } from '../layout.js';

/**
 * The audit log (docs/operations.md "Operator console", Audit): every entry newest first, read
 * through the audit module's own list (what `starport audit list` reads), filtered by account,
 * operator and action, a page at a time (keyset: the last entry's time and id); the same as CSV.
 */
export const AUDIT_PAGE_SIZE = 50;
/** The most rows one CSV export holds (the dashboard's activity export has the same bound). */
const CSV_LIMIT = 100_000;

const CURSOR = /^(\d{1,16})\.(aud_[0-9A-Za-z]{1,64})$/;

/** The filters as typed (kept in the form and the links) and the log filter they make, or what is wrong with them. */
interface Query {
  values: { account: string; operator: string; action: string };
  filter: Omit<AuditFilter, 'limit'>;
  operators: Operator[];
  error?: string;
}

async function readQuery(web: Console, request: FastifyRequest): Promise<Query> {
  const q = request.query;
  const values = { account: field(q, 'account').trim(), operator: field(q, 'operator').trim(), action: field(q, 'action').trim() };
  const operators = await listOperators(web.ctx.db.kysely);
  const result: Query = { values, filter: {}, operators };
  if (values.action) {
    if (!(AUDIT_ACTIONS as readonly string[]).includes(values.action)) return { ...result, error: `Action: “${values.action}” is not an audit action.` };
    result.filter.action = values.action;
  }
  if (values.operator) {
    const operator = operators.find((o) => o.email === values.operator.toLowerCase());
    if (!operator) return { ...result, error: `Operator: no operator has the e-mail “${values.operator}”.` };
    result.filter.operatorId = operator.id;
  }
  if (values.account) {
    const account = await findAccount(web.ctx.db.kysely, values.account);
    if (!account) return { ...result, error: `Account: no account has the id or e-mail “${values.account}”.` };
    result.filter.accountId = account.id;
  }
  const before = field(q, 'before');
  if (before) {
    const cursor = CURSOR.exec(before);
    if (!cursor) return { ...result, error: 'This page link is damaged: start again from the newest entries.' };
    result.filter.before = { createdAt: Number(cursor[1]), id: cursor[2] as string } satisfies AuditCursor;
  }
  return result;
}

/** The address of the same filters, optionally from a cursor on. */
function link(path: string, values: Query['values'], before?: AuditRecord): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(values)) if (value) params.set(name, value);
  if (before) params.set('before', `${before.createdAt}.${before.id}`);
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** The console person's e-mail for console entries; else who acted (an OS user, a client's e-mail). */
function whoOf(r: AuditRecord, emails: Map<string, string>): string {
  return (r.operatorId && emails.get(r.operatorId)) || r.actor;
}

/** The console's entries carry the IP in a column; the dashboard's in details. */
const ipOf = (r: AuditRecord) => r.ip ?? (typeof r.details.ip === 'string' ? r.details.ip : '');

export function auditRoutes(web: Console): void {
  web.get('/audit', 'support', async (request, reply) => {
    const session = web.session(request);
    const query = await readQuery(web, request);
    const records = query.error ? [] : await listAudit(web.ctx.db.kysely, { ...query.filter, limit: AUDIT_PAGE_SIZE + 1 });
    const more = records.length > AUDIT_PAGE_SIZE;
    const shown = records.slice(0, AUDIT_PAGE_SIZE);
    const emails = new Map(query.operators.map((o) => [o.id, o.email]));
    const { values } = query;
    const rows = shown.map(
      (r) => html`<tr data-testid="audit-row" data-id="${r.id}">
  <td data-label="When" class="when">${time(r.createdAt, true)}</td>
  <td data-label="Operator" class="wrap-any" data-testid="audit-who">${whoOf(r, emails)}</td>
  <td data-label="Source">${r.source}</td>
  <td data-label="IP" class="mono nowrap">${ipOf(r)}</td>
  <td data-label="Action"><code>${r.action}</code></td>
  <td data-label="Account" class="mono">${r.accountId ? html`<a href="/accounts/${r.accountId}">${r.accountId}</a>` : ''}</td>
  <td data-label="Reason" class="wrap-any">${r.reason ?? ''}</td>
</tr>`,
    );
    const actionOptions = AUDIT_ACTIONS.map((a) => html`<option value="${a}"${a === values.action ? html` selected` : ''}>${a}</option>`);
    const operatorOptions = query.operators.map((o) => html`<option value="${o.email}"${o.email === values.operator.toLowerCase() ? html` selected` : ''}>${o.email}</option>`);
    const pager = html`<nav class="pager" aria-label="Pages">${values.account || values.operator || values.action || field(request.query, 'before') ? html`<a href="${link('/audit', values)}">Newest entries</a> ` : ''}${
      more ? html`<a href="${link('/audit', values, shown[shown.length - 1])}" rel="next" data-testid="older">Older entries</a>` : ''
    }</nav>`;
    const body = html`<div class="page-head"><h1>Audit log</h1><a class="button button-secondary" href="${link('/audit.csv', values)}" download data-testid="export">Export CSV</a></div>
<p class="lead">Every operator action, from the console and the command line, and the clients' dashboard activity, newest first, ${AUDIT_PAGE_SIZE} to a page (the CSV has every entry the filters match).</p>
<form method="get" action="/audit" class="stack card" role="search">
  <div class="field"><label for="account">Account (id or e-mail)</label><input id="account" name="account" value="${values.account}"></div>
  <div class="field"><label for="operator">Operator</label><select id="operator" name="operator"><option value="">any</option>${operatorOptions}</select></div>
  <div class="field"><label for="action">Action</label><select id="action" name="action"><option value="">any</option>${actionOptions}</select></div>
  <button type="submit" class="button button-primary">Filter</button>
</form>
<div class="table-wrap" tabindex="0" role="region" aria-label="Audit log"><table class="table">
<caption class="visually-hidden">The audit log, newest first</caption>
<thead><tr><th scope="col">When</th><th scope="col">Operator</th><th scope="col">Source</th><th scope="col">IP</th><th scope="col">Action</th><th scope="col">Account</th><th scope="col">Reason</th></tr></thead>
<tbody>${rows}</tbody></table></div>
${shown.length === 0 && !query.error ? html`<p class="muted" data-testid="no-entries">No entries match.</p>` : ''}
${pager}`;
    const page = consolePage({ session, csrf: web.token(request) }, { title: 'Audit log', section: 'audit', body, notice: query.error ? notice('error', query.error) : undefined });
    return sendHtml(reply, page, query.error ? 400 : 200);
  });

  web.get('/audit.csv', 'support', async (request, reply) => {
    const session = web.session(request);
    const query = await readQuery(web, request);
    if (query.error) {
      const body = html`<h1>Audit log</h1><p><a href="/audit">Back to the audit log</a></p>`;
      return sendHtml(reply, consolePage({ session, csrf: web.token(request) }, { title: 'Audit log', section: 'audit', body, notice: notice('error', query.error) }), 400);
    }
    const records = await listAudit(web.ctx.db.kysely, { ...query.filter, limit: CSV_LIMIT });
    const emails = new Map(query.operators.map((o) => [o.id, o.email]));
    const lines = ['id,time,operator,actor,source,ip,action,account,mode,order,reason,details'];
    for (const r of records) {
      lines.push(
        [
          csvCell(r.id),
          csvCell(formatTimestamp(r.createdAt)),
          csvCell((r.operatorId && emails.get(r.operatorId)) || ''),
          csvCell(r.actor),
          csvCell(r.source),
          csvCell(ipOf(r)),
          csvCell(r.action),
          csvCell(r.accountId),
          csvCell(r.mode),
          csvCell(r.orderId),
          csvCell(r.reason),
          csvCell(JSON.stringify(r.details)),
        ].join(','),
      );
    }
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="starport-audit-${new Date().toISOString().slice(0, 10)}.csv"`)
      .send(`${lines.join('\r\n')}\r\n`);
  });
}
