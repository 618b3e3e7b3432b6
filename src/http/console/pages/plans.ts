import { accountForMemo, normalizeMemo } from '../../../accounts/deposit-memo.js';
import { findAccount } from '../../../accounts/admin.js';
import { DEFAULT_PLAN, definePricePlan, PlanError, tierJson } from '../../../domain/price-plan.js';
import { PlanInputError, planTiers } from '../../../plans/plan-input.js';
import { assignPlan, definePlan, listPlans } from '../../../plans/plan-store.js';
import { csrfField, notice } from '../../html/document.js';
import { time } from '../../html/format.js';
import { type Html, html, type Slot } from '../../html/html.js';
import { field, redirect, sendHtml } from '../../html/http.js';
import type { Console } from '../console.js';
import { consolePage } from '../layout.js';

/**
 * Price plans (docs/operations.md "Price plans"): every plan with its tiers and how many accounts
 * are on it; an admin defines one (the fields of `starport plan create`, read by the same
 * plan-input.ts) and puts an account on one (`assignPlan`, as `starport plan assign`), audited
 * with the operator and their address.
 */
type Request = Parameters<Parameters<Console['get']>[2]>[0];

const NOTICES: Record<string, Slot> = {
  created: notice('success', 'The plan was defined and the action recorded in the audit log.'),
  assigned: notice('success', 'The account is on its new plan for the quotes and orders asked from now on; recorded in the audit log.'),
};

function tierText(tier: ReturnType<typeof tierJson>): string {
  if (tier.markup_percent !== undefined) return `from ${tier.from_ton} TON: markup ${tier.markup_percent} %`;
  const prices = [
    tier.star_usd && `star ${tier.star_usd}`,
    tier.premium_3_usd && `3 months ${tier.premium_3_usd}`,
    tier.premium_6_usd && `6 months ${tier.premium_6_usd}`,
    tier.premium_12_usd && `12 months ${tier.premium_12_usd}`,
  ].filter(Boolean);
  return `from ${tier.from_ton} TON: ${prices.join(', ')} USD`;
}

async function plansPage(web: Console, request: Request, status?: Slot): Promise<Html> {
  const session = web.session(request);
  const plans = await listPlans(web.ctx.db.kysely);
  const rows = plans.map(
    (p) =>
      html`<tr><td data-label="Name" class="mono">${p.name}</td><td data-label="Kind">${p.kind}</td><td data-label="Tiers" class="wrap-any">${p.tiers.map((t) => html`<div>${tierText(tierJson(t))}</div>`)}</td><td data-label="Accounts" class="num">${p.accounts}</td><td data-label="Defined" class="when">${time(p.createdAt)}</td></tr>`,
  );
  const options = [DEFAULT_PLAN, ...plans.map((p) => p.name)].map((name) => html`<option value="${name}">${name}</option>`);
  const admin = session.role === 'admin';
  const forms = admin
    ? html`<section class="section" aria-labelledby="assign-heading"><h2 id="assign-heading">Put an account on a plan</h2>
<form method="post" action="/plans/assign" class="stack card">
  ${csrfField(web.token(request))}
  <div class="field"><label for="account">Account id, owner e-mail or deposit memo</label><input id="account" name="account" required></div>
  <div class="field"><label for="plan">Plan (${DEFAULT_PLAN}: PRICE_MARKUP_PERCENT)</label><select id="plan" name="plan">${options}</select></div>
  <div class="field"><label for="assign-reason">Reason (in the audit log)</label><input id="assign-reason" name="reason" required maxlength="1000"></div>
  <button type="submit" class="button button-primary">Assign</button>
</form></section>
<section class="section" aria-labelledby="define-heading"><h2 id="define-heading">Define a plan</h2>
<p class="muted">A markup over the list price, or USD prices (all four). Plans are never changed: define a new one and assign it.</p>
<form method="post" action="/plans" class="stack card">
  ${csrfField(web.token(request))}
  <div class="field"><label for="name">Name (a-z 0-9 - _)</label><input id="name" name="name" required maxlength="40"></div>
  <div class="field"><label for="markup">Markup (%)</label><input id="markup" name="markup" inputmode="decimal"></div>
  <div class="field"><label for="star">Star (USD)</label><input id="star" name="star" inputmode="decimal"></div>
  <div class="field"><label for="premium3">Premium 3 months (USD)</label><input id="premium3" name="premium3" inputmode="decimal"></div>
  <div class="field"><label for="premium6">Premium 6 months (USD)</label><input id="premium6" name="premium6" inputmode="decimal"></div>
  <div class="field"><label for="premium12">Premium 12 months (USD)</label><input id="premium12" name="premium12" inputmode="decimal"></div>
  <div class="field"><label for="tiers">Volume tiers, one per line (as <code>--tier</code>: <code>1000:markup=3</code>)</label><textarea id="tiers" name="tiers" rows="3"></textarea></div>
  <div class="field"><label for="define-reason">Reason (in the audit log)</label><input id="define-reason" name="reason" maxlength="1000"></div>
  <button type="submit" class="button button-primary">Define the plan</button>
</form></section>`
    : '';
  const body = html`<h1>Price plans</h1>
${
  rows.length > 0
    ? html`<div class="table-wrap"><table class="table"><caption class="visually-hidden">Price plans</caption><thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Tiers</th><th scope="col" class="num">Accounts</th><th scope="col">Defined</th></tr></thead>
<tbody>${rows}</tbody></table></div>`
    : html`<p class="notice notice-info" role="status">No plans: every account pays PRICE_MARKUP_PERCENT.</p>`
}
${forms}`;
  return consolePage({ session, csrf: web.token(request) }, { title: 'Price plans', section: 'plans', body, notice: status });
}

/** The account an operator named by id, owner e-mail or deposit memo. */
async function accountNamed(web: Console, text: string): Promise<string | undefined> {
  const q = text.trim();
  if (q === '') return undefined;
  const db = web.ctx.db.kysely;
  if (q.includes('@') || q.startsWith('acct_')) return (await findAccount(db, q))?.id;
  return accountForMemo(db, normalizeMemo(q));
}

const blank = (value: string) => (value.trim() === '' ? undefined : value.trim());

export function planRoutes(web: Console): void {
  web.get('/plans', 'support', async (request, reply) => sendHtml(reply, await plansPage(web, request, NOTICES[field(request.query, 'notice')])));

  web.post('/plans', 'admin', async (request, reply) => {
    const session = web.session(request);
    const body = request.body;
    const refuse = async (message: string) => sendHtml(reply, await plansPage(web, request, notice('error', message)), 400);
    try {
      const { kind, tiers } = planTiers(
        {
          markup: blank(field(body, 'markup')),
          star: blank(field(body, 'star')),
          premium3: blank(field(body, 'premium3')),
          premium6: blank(field(body, 'premium6')),
          premium12: blank(field(body, 'premium12')),
          tiers: field(body, 'tiers')
            .split(/\r?\n/)
            .map((line) => line.trim())
            .filter((line) => line !== ''),
        },
        { markup: 'the markup', markupWithValue: 'a markup', star: 'the star price', premium: (months) => `the ${months} months price` },
      );
      const plan = definePricePlan(field(body, 'name').trim(), kind, tiers);
      await definePlan(web.ctx.db, plan, {
        actor: session.email,
        reason: blank(field(body, 'reason')),
        console: { operatorId: session.operatorId, ip: request.ip },
        now: Date.now(),
      });
    } catch (error) {
      if (error instanceof PlanError || error instanceof PlanInputError) return refuse(error.message);
      throw error;
    }
    return redirect(reply, '/plans?notice=created');
  });

  web.post('/plans/assign', 'admin', async (request, reply) => {
    const session = web.session(request);
    const body = request.body;
    const refuse = async (message: string, status = 400) => sendHtml(reply, await plansPage(web, request, notice('error', message)), status);
    const reason = field(body, 'reason').trim();
    if (reason === '' || [...reason].length > 1000) return refuse('Give a reason (at most 1000 characters): it goes to the audit log.');
    const accountId = await accountNamed(web, field(body, 'account'));
    if (!accountId) return refuse(`No account matches “${field(body, 'account').slice(0, 200)}”.`, 404);
    try {
      await assignPlan(web.ctx.db, {
        accountId,
        plan: field(body, 'plan'),
        actor: session.email,
        reason,
        console: { operatorId: session.operatorId, ip: request.ip },
        now: Date.now(),
      });
    } catch (error) {
      if (error instanceof PlanError) return refuse(error.message);
      throw error;
    }
    return redirect(reply, '/plans?notice=assigned');
  });
}
