import { DEFAULT_PLAN, definePricePlan, PlanError, type PlanKind, type PlanTier, tierJson } from '../../domain/price-plan.js';
import { PlanInputError, planTiers } from '../../plans/plan-input.js';
import { assignPlan, definePlan, findPlan, listPlans, type StoredPlan } from '../../plans/plan-store.js';
import { type Command, required, UsageError } from '../command.js';
import { withDatabase } from '../database.js';
import { ACTOR_HELP, actorOf, actorOption, operatorCommand, optionalReasonOf, positional, reasonOf, table, time } from '../operator.js';

/**
 * Price plans (docs/operations.md "Price plans"): define a plan, list and show them, put an
 * account on one. Plans are never edited; a new price is a new plan, assigned. Both changes are
 * audited (`plan.create`, `plan.assign`).
 */

const TIER_HELP =
  'A plan is a markup over the list price (--markup PERCENT, replacing PRICE_MARKUP_PERCENT) or its own\n' +
  'USD prices (--star USD per star, --premium3/--premium6/--premium12 USD per period), converted to TON\n' +
  'like the list price. --tier VOLUME:KEY=VALUE[,…] (repeatable) adds a tier from that many TON of\n' +
  'delivered orders in the last 30 days (UTC days, per mode): 1000:markup=3, or 5000:star=0.013 (a\n' +
  'prices tier keeps the tier before it for what it leaves out). Markup: 0 to 1000 percent; star:\n' +
  '0.0001 to 1 USD; a Premium period: 0.01 to 1000 USD.';

function planJson(plan: StoredPlan & { accounts?: number }) {
  return {
    name: plan.name,
    kind: plan.kind,
    tiers: plan.tiers.map(tierJson),
    created_at: time(plan.createdAt),
    created_by: plan.createdBy,
    ...(plan.accounts === undefined ? {} : { accounts: plan.accounts }),
  };
}

function tiersTable(plan: StoredPlan): string {
  const rows = plan.tiers.map(tierJson);
  if (plan.kind === 'markup')
    return table(
      ['FROM (TON, 30 DAYS)', 'MARKUP %'],
      rows.map((t) => [t.from_ton, t.markup_percent ?? null]),
    );
  return table(
    ['FROM (TON, 30 DAYS)', 'STAR USD', 'PREMIUM 3 USD', 'PREMIUM 6 USD', 'PREMIUM 12 USD'],
    rows.map((t) => [t.from_ton, t.star_usd ?? null, t.premium_3_usd ?? null, t.premium_6_usd ?? null, t.premium_12_usd ?? null]),
  );
}

function optionText(values: Record<string, unknown>, name: string): string | undefined {
  const value = values[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} needs a value`);
  return value;
}

/** The base tier (volume 0) from --markup or --star/--premiumN, then each --tier. */
function tiersOf(values: Record<string, unknown>): { kind: PlanKind; tiers: PlanTier[] } {
  const input = {
    markup: optionText(values, 'markup'),
    star: optionText(values, 'star'),
    premium3: optionText(values, 'premium3'),
    premium6: optionText(values, 'premium6'),
    premium12: optionText(values, 'premium12'),
    tiers: values.tier === undefined ? [] : (values.tier as unknown as string[]),
  };
  try {
    return planTiers(input, { markup: '--markup', markupWithValue: '--markup PERCENT', star: '--star', premium: (months) => `--premium${months}` });
  } catch (error) {
    if (error instanceof PlanInputError) throw new UsageError(error.message);
    throw error;
  }
}

export const planCreate: Command = operatorCommand({
  path: ['plan', 'create'],
  summary: 'Define a price plan: a markup or USD prices, optionally with volume tiers',
  usage:
    'starport plan create NAME (--markup PERCENT | --star USD --premium3 USD --premium6 USD --premium12 USD)\n' +
    '    [--tier VOLUME:KEY=VALUE[,…]]… [--reason TEXT] [--actor NAME] [--json]\n\n' +
    `${TIER_HELP}\nA plan is never changed: define a new one and assign it.\n${ACTOR_HELP}`,
  options: {
    markup: { type: 'string' },
    star: { type: 'string' },
    premium3: { type: 'string' },
    premium6: { type: 'string' },
    premium12: { type: 'string' },
    tier: { type: 'string', multiple: true },
    reason: { type: 'string' },
    ...actorOption,
  },
  positionals: ['name'],
  async run(values, io) {
    const name = positional(values, 'name', 'NAME');
    const { kind, tiers } = tiersOf(values);
    const plan = definePricePlan(name, kind, tiers);
    const reason = optionalReasonOf(values);
    const actor = actorOf(values);
    const stored = await withDatabase((db) => definePlan(db, plan, { actor, reason, now: Date.now() }));
    io.result(planJson(stored), `plan ${stored.name} (${stored.kind}) created\n${tiersTable(stored)}`);
    return 0;
  },
});

export const planList: Command = operatorCommand({
  path: ['plan', 'list'],
  summary: 'List the price plans and how many accounts each has',
  usage: 'starport plan list [--json]\n\nAccounts on no plan are priced with PRICE_MARKUP_PERCENT (the "default" plan).',
  options: {},
  async run(_values, io) {
    const plans = await withDatabase((db) => listPlans(db.kysely));
    io.result(
      { plans: plans.map(planJson) },
      plans.length === 0
        ? 'no plans: every account is priced with PRICE_MARKUP_PERCENT'
        : table(
            ['NAME', 'KIND', 'TIERS', 'ACCOUNTS', 'CREATED', 'BY'],
            plans.map((p) => [p.name, p.kind, p.tiers.length, p.accounts, time(p.createdAt), p.createdBy]),
          ),
    );
    return 0;
  },
});

export const planShow: Command = operatorCommand({
  path: ['plan', 'show'],
  summary: 'Show a price plan and its tiers',
  usage: 'starport plan show NAME [--json]',
  options: {},
  positionals: ['name'],
  async run(values, io) {
    const name = positional(values, 'name', 'NAME');
    const plan = await withDatabase((db) => findPlan(db.kysely, name));
    if (!plan) throw new PlanError(`no plan named ${name}`);
    io.result(planJson(plan), `plan ${plan.name} (${plan.kind}), created ${time(plan.createdAt)} by ${plan.createdBy}\n${tiersTable(plan)}`);
    return 0;
  },
});

export const planAssign: Command = operatorCommand({
  path: ['plan', 'assign'],
  summary: 'Put an account on a price plan (or back on the default); new quotes and orders only',
  usage:
    `starport plan assign --account ACCOUNT_ID --plan NAME|${DEFAULT_PLAN} --reason TEXT [--actor NAME] [--json]\n\n` +
    `"${DEFAULT_PLAN}" is the global PRICE_MARKUP_PERCENT. Quotes already given keep their amount until they\n` +
    `expire, and orders keep theirs.\n${ACTOR_HELP}`,
  options: { account: { type: 'string' }, plan: { type: 'string' }, reason: { type: 'string' }, ...actorOption },
  async run(values, io) {
    const accountId = required(values, 'account');
    const plan = required(values, 'plan');
    const reason = reasonOf(values);
    const actor = actorOf(values);
    const result = await withDatabase((db) => assignPlan(db, { accountId, plan, actor, reason, now: Date.now() }));
    io.result({ account_id: accountId, plan: result.plan, previous: result.previous }, `account ${accountId}: plan ${result.previous} → ${result.plan}`);
    return 0;
  },
});
