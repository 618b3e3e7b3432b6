import { slug } from '../../../domain/brand.js';
import type { FastifyInstance } from 'fastify';
import type { Mode } from '../../../domain/api-key.js';
import { csvCell } from '../../../domain/csv.js';
import { formatTon } from '../../../domain/money.js';
import { formatTimestamp } from '../../../domain/time.js';
import { balanceHistory, findEntry } from '../../../ledger/history.js';
import type { JournalEntry } from '../../../ledger/ledger.js';
import { readBalance } from '../../../ledger/ledger.js';
import { emptyState } from '../components.js';
import { modeLabel, modePath, time, ton } from '../../html/format.js';
import { type Html, html } from '../../html/html.js';
import { field, sendHtml } from '../../html/http.js';
import { dashboardPage } from '../layout.js';
import type { Web } from '../web.js';

const ENTRIES_PER_PAGE = 50;
const CSV_BATCH = 1000;

const TYPE_LABELS: Record<JournalEntry['kind'], string> = {
  deposit: 'Deposit',
  reserve: 'Reserved for an order',
  debit: 'Order delivered',
  release: 'Order failed, released',
  adjustment: 'Adjustment',
};

/** The signed change as the API writes it, with an explicit "+" for credits on the page. */
const signed = (nanotons: bigint) => (nanotons > 0n ? `+${formatTon(nanotons)}` : formatTon(nanotons));

/** Balance history: the journal of the mode being viewed, newest first, with a CSV export. */
export function balanceHistoryRoutes(_app: FastifyInstance, web: Web): void {
  const { ctx } = web;

  web.page('/balance', async (request, reply, mode) => {
    const view = web.view(request, mode);
    const ref = { accountId: view.session.accountId, mode };
    const query = request.query as Record<string, unknown>;
    // A cursor that is not an entry of this balance (tampered, another mode's) shows the first page.
    const after = await findEntry(ctx.db.kysely, field(query, 'after'), ref);
    const before = after ? undefined : await findEntry(ctx.db.kysely, field(query, 'before'), ref);
    const page = await balanceHistory(ctx.db.kysely, { ...ref, limit: ENTRIES_PER_PAGE, ...(after && { startingAfter: after }), ...(before && { endingBefore: before }) });
    const balance = (await readBalance(ctx.db.kysely, ref)) ?? { available: 0n, reserved: 0n };
    const first = page.entries[0];
    const last = page.entries[page.entries.length - 1];
    const hasNewer = before ? page.hasMore : !!after;
    const hasOlder = before ? true : page.hasMore;
    const link = (param: 'after' | 'before', id: string) => `${modePath(mode, '/balance')}?${new URLSearchParams({ [param]: id }).toString()}`;
    const csvUrl = modePath(mode, '/balance/history.csv');
    const results = page.entries.length
      ? html`${historyTable(page.entries, mode)}
<nav class="pagination" aria-label="Pages of balance history">
  ${hasNewer && first ? html`<a class="button button-secondary" href="${link('before', first.id)}" rel="prev">← Newer</a>` : html`<span></span>`}
  ${hasOlder && last ? html`<a class="button button-secondary" href="${link('after', last.id)}" rel="next">Older →</a>` : ''}
</nav>`
      : emptyState(
          `No ${mode} balance movements yet`,
          mode === 'test' ? 'Add test funds or create a test order and every movement shows up here.' : 'Top-ups and orders paid from your live balance show up here.',
          { href: modePath(mode, '/top-up'), label: mode === 'test' ? 'Add test funds' : 'Top up' },
        );
    const body = html`<div class="page-head"><h1>Balance history</h1>
  ${page.entries.length ? html`<a class="button button-secondary" href="${csvUrl}" download>Export CSV</a>` : ''}
</div>
<p class="muted">${modeLabel(mode)} balance: <strong data-testid="history-available">${ton(balance.available)}</strong> available, ${ton(balance.reserved)} reserved. Each row shows how it changed what can be spent (“Available”) and what is reserved for orders in progress.</p>
${results}`;
    return sendHtml(reply, dashboardPage(view, { title: 'Balance history', section: 'balance', body }));
  });

  web.page('/balance/history.csv', async (request, reply, mode) => {
    const view = web.view(request, mode);
    const ref = { accountId: view.session.accountId, mode };
    const lines = [CSV_HEADER.join(',')];
    let startingAfter: JournalEntry | undefined;
    for (;;) {
      const page = await balanceHistory(ctx.db.kysely, { ...ref, limit: CSV_BATCH, ...(startingAfter && { startingAfter }) });
      for (const entry of page.entries) lines.push(csvRow(entry));
      startingAfter = page.entries[page.entries.length - 1];
      if (!page.hasMore || !startingAfter) break;
    }
    const filename = `${slug(ctx.brand)}-${mode}-balance-history-${new Date().toISOString().slice(0, 10)}.csv`;
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${filename}"`)
      .send(`${lines.join('\r\n')}\r\n`);
  });
}

function historyTable(entries: JournalEntry[], mode: Mode): Html {
  const caption = `${modeLabel(mode)} balance history`;
  const rows = entries.map(
    (e) => html`<tr>
  <td data-label="Date" class="when">${time(e.createdAt, true)}</td>
  <td data-label="Type"><span data-type="${e.kind}">${TYPE_LABELS[e.kind]}</span></td>
  <td data-label="Available" class="num">${signed(e.availableDelta)}</td>
  <td data-label="Reserved" class="num">${signed(e.reservedDelta)}</td>
  <td data-label="Available after" class="num">${ton(e.after.available)}</td>
  <td data-label="Reserved after" class="num">${ton(e.after.reserved)}</td>
  <td data-label="Reference" class="mono">${
    e.orderId ? html`<a href="${modePath(mode, `/orders/${e.orderId}`)}">${e.orderId}</a>` : e.kind === 'deposit' && e.reason ? e.reason : html`<span class="muted">—</span>`
  }</td>
</tr>`,
  );
  return html`<div class="table-wrap" role="region" aria-label="${caption}" tabindex="0">
<table class="table history-table">
  <caption class="visually-hidden">${caption}</caption>
  <thead><tr><th scope="col">Date</th><th scope="col">Type</th><th scope="col" class="num">Available</th><th scope="col" class="num">Reserved</th><th scope="col" class="num wrap">Available after</th><th scope="col" class="num wrap">Reserved after</th><th scope="col">Reference</th></tr></thead>
  <tbody>${rows}</tbody>
</table>
</div>`;
}

// --- CSV --------------------------------------------------------------------------------------

const CSV_HEADER = ['id', 'created_at', 'type', 'amount', 'reserved_change', 'balance_value_after', 'balance_reserved_after', 'order_id', 'deposit_reference'];

function csvRow(e: JournalEntry): string {
  return [
    csvCell(e.id),
    csvCell(formatTimestamp(e.createdAt)),
    csvCell(e.kind),
    csvCell(formatTon(e.availableDelta), 'number'),
    csvCell(formatTon(e.reservedDelta), 'number'),
    csvCell(formatTon(e.after.available), 'number'),
    csvCell(formatTon(e.after.reserved), 'number'),
    csvCell(e.orderId),
    csvCell(e.kind === 'deposit' ? e.reason : null),
  ].join(',');
}
