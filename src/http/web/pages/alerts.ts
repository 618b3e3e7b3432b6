import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Mode } from '../../../domain/api-key.js';
import { formatTon, NANOTONS_PER_TON } from '../../../domain/money.js';
import { type LowBalanceAlert, lowBalanceAlerts, MAX_LOW_BALANCE_THRESHOLD, setLowBalanceThreshold } from '../../../ledger/low-balance.js';
import { parseAmountInput } from '../../../ton/transfer-link.js';
import { modePath, ton } from '../../html/format.js';
import { type Html, html, type Slot } from '../../html/html.js';
import { field, redirect, sendHtml } from '../../html/http.js';
import { lowBalanceBanners } from '../low-balance-banner.js';
import { may, whoMay } from '../rules.js';
import { csrfField, dashboardPage, notice, type View } from '../layout.js';
import { dashboardAudit } from '../audit.js';
import type { WebContext } from '../context.js';

/**
 * Alerts: the low-balance threshold of the mode viewed (docs/dashboard.md "Low-balance alert").
 * When an order takes the available balance below it, the mode's webhook endpoints subscribed to
 * `balance.low` get one event per crossing (docs/api.md "Low-balance alert"), and the dashboard
 * shows a banner while the balance stays below.
 */

const NOTICES: Record<string, Slot> = {
  saved: notice('success', 'Low-balance alert saved.'),
  removed: notice('success', 'Low-balance alert removed.'),
};

const MAX_THRESHOLD_TON = MAX_LOW_BALANCE_THRESHOLD / NANOTONS_PER_TON;

type PreHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/**
 * What this page uses of plugin.ts's `Web`, stated here rather than imported: importing it would
 * add a page ↔ plugin import cycle (`npm run lint`).
 */
export interface AlertsWeb {
  ctx: WebContext;
  authenticated: PreHandler;
  sessionCsrf: PreHandler;
  view(request: FastifyRequest, mode: Mode): View;
  page(path: string, handler: (request: FastifyRequest, reply: FastifyReply, mode: Mode) => Promise<unknown>): void;
}

export function alertRoutes(app: FastifyInstance, web: AlertsWeb): void {
  const { ctx } = web;

  const page = async (view: View, options: { thresholdText?: string; error?: string; status?: Slot } = {}): Promise<Html> => {
    const alerts = await lowBalanceAlerts(ctx.db.kysely, view.session.accountId);
    const zero: LowBalanceAlert = { mode: view.mode, threshold: null, available: 0n, below: false };
    const alert = alerts.find((a) => a.mode === view.mode) ?? zero;
    const { error } = options;
    const current = alert.threshold === null ? '' : formatTon(alert.threshold);
    const value = options.thresholdText ?? current;
    const state =
      alert.threshold === null
        ? html`<p data-testid="alert-state">No low-balance alert is set for your ${view.mode} balance.</p>`
        : html`<p data-testid="alert-state">You are alerted when your ${view.mode} available balance drops below <strong>${ton(alert.threshold)}</strong>. It is ${ton(alert.available)} now${alert.below ? ' (below)' : ''}.</p>`;
    const body = html`<div class="page-head"><h1>Low-balance alert</h1></div>
${lowBalanceBanners(alerts, view.session.role)}
<p class="lead">When an order takes your ${view.mode} available balance below this threshold, your ${view.mode} webhook endpoints subscribed to <code>balance.low</code> receive one event (again only after the balance has been back above it), and a banner shows here while it stays below.</p>
<section class="card" aria-labelledby="alert-heading">
  <h2 id="alert-heading">${view.mode === 'live' ? 'Live' : 'Test'} balance threshold</h2>
  ${state}
  ${
    may(view.session.role, 'POST', modePath(view.mode, '/alerts'))
      ? html`<form method="post" action="${modePath(view.mode, '/alerts')}" class="stack" novalidate>
    ${csrfField(view.csrf)}
    <div class="field">
      <label for="threshold">Threshold in TON</label>
      <input id="threshold" name="threshold" type="text" inputmode="decimal" autocomplete="off" spellcheck="false" value="${value}"
        aria-describedby="threshold-hint${error ? ' threshold-error' : ''}"${error ? html` aria-invalid="true"` : ''} required>
      <p id="threshold-hint" class="hint">More than 0 and at most ${MAX_THRESHOLD_TON.toLocaleString('en-US')} TON, at most 9 decimal places.</p>
      ${error ? html`<p id="threshold-error" class="field-error" role="alert">${error}</p>` : ''}
    </div>
    <button type="submit" class="button button-primary">Save alert</button>
  </form>
  ${
    alert.threshold === null
      ? ''
      : html`<form method="post" action="${modePath(view.mode, '/alerts/remove')}" class="inline-form">${csrfField(view.csrf)}<button type="submit" class="button button-secondary">Remove alert</button></form>`
  }`
      : html`<p class="hint" data-testid="alert-read-only">Your role is ${view.session.role}: ${whoMay('POST', '/alerts')} set or remove the alert.</p>`
  }
</section>`;
    return dashboardPage(view, { title: 'Low-balance alert', section: 'alerts', body, notice: options.status });
  };

  /**
   * Sets (or, with null, removes) the threshold and records the change in the activity log in
   * one transaction: `settings.change` with the setting, the old and the new value in TON.
   */
  const change = (request: FastifyRequest, view: View, mode: Mode, threshold: bigint | null) =>
    ctx.db.kysely.transaction().execute(async (tx) => {
      const before = (await lowBalanceAlerts(tx, view.session.accountId)).find((a) => a.mode === mode)?.threshold ?? null;
      await setLowBalanceThreshold(tx, { accountId: view.session.accountId, mode }, threshold);
      const tonOrNull = (value: bigint | null) => (value === null ? null : formatTon(value));
      await dashboardAudit(tx, request, {
        action: 'settings.change',
        session: view.session,
        mode,
        details: { setting: 'low_balance_threshold', from: tonOrNull(before), to: tonOrNull(threshold) },
      });
    });

  web.page('/alerts', async (request, reply, mode) => {
    const view = web.view(request, mode);
    return sendHtml(reply, await page(view, { status: NOTICES[field(request.query, 'notice')] }));
  });

  for (const mode of ['live', 'test'] as const satisfies Mode[]) {
    const path = modePath(mode, '/alerts');
    app.post(path, { preHandler: [web.authenticated, web.sessionCsrf] }, async (request: FastifyRequest, reply: FastifyReply) => {
      const view = web.view(request, mode);
      const thresholdText = field(request.body, 'threshold');
      const parsed = parseAmountInput(thresholdText, MAX_THRESHOLD_TON);
      if (!parsed.ok || parsed.nanotons === undefined) {
        const error = parsed.ok ? 'Enter a threshold in TON, like 10 or 2.5. To stop the alert, use Remove alert.' : parsed.message;
        return sendHtml(reply, await page(view, { thresholdText, error }), 400);
      }
      await change(request, view, mode, parsed.nanotons);
      request.log.info({ account_id: view.session.accountId, mode, threshold: String(parsed.nanotons) }, 'dashboard low-balance alert set');
      return redirect(reply, `${path}?notice=saved`);
    });
    app.post(`${path}/remove`, { preHandler: [web.authenticated, web.sessionCsrf] }, async (request: FastifyRequest, reply: FastifyReply) => {
      const view = web.view(request, mode);
      await change(request, view, mode, null);
      request.log.info({ account_id: view.session.accountId, mode }, 'dashboard low-balance alert removed');
      return redirect(reply, `${path}?notice=removed`);
    });
  }
}
