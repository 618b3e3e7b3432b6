import { slug } from '../../../domain/brand.js';
import type { FastifyInstance } from 'fastify';
import { type AuditRecord, listAudit } from '../../../audit/audit.js';
import { formatTimestamp } from '../../../domain/time.js';
import { emptyState } from '../components.js';
import { time } from '../../html/format.js';
import { html } from '../../html/html.js';
import { sendHtml } from '../../html/http.js';
import { dashboardPage } from '../layout.js';
import type { Web } from '../web.js';
import { csvCell } from '../../../domain/csv.js';

/**
 * The account's activity for its owners (docs/dashboard.md, "Activity"): read from the audit
 * log the operator reads (src/audit/audit.ts), so dashboard actions (sign-in, failed sign-in,
 * key reveal, webhook and team changes, test funds, settings) and the operator's actions on the
 * account are in one list: who, what, when, client IP. Newest first; CSV export of the same.
 */
const ACTIVITY_SHOWN = 200;
const CSV_LIMIT = 100_000;

function whatText(r: AuditRecord): string {
  const d = { ...r.details };
  delete d.ip;
  const parts = Object.entries(d).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  if (r.mode) parts.unshift(`mode: ${r.mode}`);
  if (r.orderId) parts.push(`order: ${r.orderId}`);
  if (r.reason) parts.push(`reason: ${r.reason}`);
  return parts.join(', ');
}

const ipOf = (r: AuditRecord) => (typeof r.details.ip === 'string' ? r.details.ip : '');
const whoOf = (r: AuditRecord) => (r.source === 'dashboard' ? r.actor : `${r.actor} (operator)`);

export function activityRoutes(app: FastifyInstance, web: Web): void {
  const { ctx } = web;

  app.get('/activity', { preHandler: web.authenticated }, async (request, reply) => {
    const view = web.view(request, 'live');
    const records = await listAudit(ctx.db.kysely, { accountId: view.session.accountId, limit: ACTIVITY_SHOWN });
    const rows = records.map(
      (r) => html`<tr data-action="${r.action}">
  <td data-label="When" class="when">${time(r.createdAt, true)}</td>
  <td data-label="Who" class="activity-who" data-testid="actor">${whoOf(r)}</td>
  <td data-label="What" class="activity-what"><code>${r.action}</code> <span class="muted">${whatText(r)}</span></td>
  <td data-label="IP" class="mono">${ipOf(r)}</td>
</tr>`,
    );
    const table = records.length
      ? html`<div class="table-wrap" tabindex="0" role="region" aria-label="Activity"><table class="table">
<caption class="visually-hidden">Activity, newest first</caption>
<thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">What</th><th scope="col">Client IP</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
      : emptyState('No activity yet', 'Sign-ins, key reveals, webhook and team changes appear here.');
    const body = html`<div class="page-head"><h1>Activity</h1>${records.length ? html`<a class="button button-secondary" href="/activity.csv" download>Export CSV</a>` : ''}</div>
<p class="lead">Everything done on this account in the dashboard and by the ${ctx.brand.name} operator, newest first (the latest ${ACTIVITY_SHOWN} here; the CSV has all).</p>
${table}`;
    return sendHtml(reply, dashboardPage(view, { title: 'Activity', section: 'activity', body }));
  });

  app.get('/activity.csv', { preHandler: web.authenticated }, async (request, reply) => {
    const view = web.view(request, 'live');
    const records = await listAudit(ctx.db.kysely, { accountId: view.session.accountId, limit: CSV_LIMIT });
    const lines = ['id,time,actor,source,action,details,ip'];
    for (const r of records) {
      lines.push([csvCell(r.id), csvCell(formatTimestamp(r.createdAt)), csvCell(r.actor), csvCell(r.source), csvCell(r.action), csvCell(whatText(r)), csvCell(ipOf(r))].join(','));
    }
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${slug(ctx.brand)}-activity-${new Date().toISOString().slice(0, 10)}.csv"`)
      .send(`${lines.join('\r\n')}\r\n`);
  });
}
