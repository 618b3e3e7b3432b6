import type { Kysely } from 'kysely';
import { recordAudit } from '../audit/audit.js';
import { DEFAULT_PLAN, PlanError, type PricePlan, tierJson, tiersFromJson } from '../domain/price-plan.js';
import type { Db } from '../db/engine.js';
import { preparedQuery } from '../db/prepared.js';
import type { Database } from '../db/schema.js';

/**
 * The price plans and each account's plan (tables `price_plans`, `account_plans`, migration
 * 0024): the functions the CLI (and the operator console) call to define and assign plans, and
 * the lookup that prices an account (account-price.ts). Both changes are audited in their own
 * transaction (docs/operations.md "Price plans").
 */

export interface StoredPlan extends PricePlan {
  createdAt: number;
  createdBy: string;
}

interface PlanSummary extends StoredPlan {
  accounts: number;
}

function planFromRow(row: { name: string; kind: 'markup' | 'prices'; tiers: string; created_at: bigint; created_by: string }): StoredPlan {
  return { name: row.name, kind: row.kind, tiers: tiersFromJson(row.kind, JSON.parse(row.tiers)), createdAt: Number(row.created_at), createdBy: row.created_by };
}

/** Stores a new plan (checked by definePricePlan); a name is never reused. */
/** The operator console person who acted, and their address: the audit row's source is then 'console'. */
type ConsoleActor = { operatorId: string; ip: string };

const auditSource = (actor: { source?: 'cli' | 'dashboard'; console?: ConsoleActor }) =>
  actor.console ? { source: 'console' as const, operatorId: actor.console.operatorId, ip: actor.console.ip } : { source: actor.source };

export async function definePlan(
  db: Db,
  plan: PricePlan,
  audit: { actor: string; reason?: string; source?: 'cli' | 'dashboard'; console?: ConsoleActor; now: number },
): Promise<StoredPlan> {
  const tiers = plan.tiers.map(tierJson);
  try {
    await db.kysely.transaction().execute(async (tx) => {
      await tx
        .insertInto('price_plans')
        .values({ name: plan.name, kind: plan.kind, tiers: JSON.stringify(tiers), created_at: audit.now, created_by: audit.actor })
        .execute();
      await recordAudit(tx, {
        actor: audit.actor,
        ...auditSource(audit),
        action: 'plan.create',
        reason: audit.reason ?? null,
        details: { plan: plan.name, kind: plan.kind, tiers },
        now: audit.now,
      });
    });
  } catch (error) {
    if (db.engine.isUniqueViolation(error)) throw new PlanError(`a plan named ${plan.name} exists already; plans are never changed, define one under a new name`);
    throw error;
  }
  return { ...plan, createdAt: audit.now, createdBy: audit.actor };
}

const selectPlan = preparedQuery((db, name: string) => db.selectFrom('price_plans').selectAll().where('name', '=', name));

export async function findPlan(db: Kysely<Database>, name: string): Promise<StoredPlan | undefined> {
  const [row] = await selectPlan(db, name);
  return row && planFromRow(row);
}

/** Every plan, by name, with the number of accounts on it. */
export async function listPlans(db: Kysely<Database>): Promise<PlanSummary[]> {
  const rows = await db
    .selectFrom('price_plans as p')
    .leftJoin('account_plans as a', 'a.plan_name', 'p.name')
    .select(['p.name', 'p.kind', 'p.tiers', 'p.created_at', 'p.created_by', (eb) => eb.fn.count<bigint>('a.account_id').as('accounts')])
    .groupBy(['p.name', 'p.kind', 'p.tiers', 'p.created_at', 'p.created_by'])
    .orderBy('p.name')
    .execute();
  return rows.map((row) => ({ ...planFromRow(row), accounts: Number(row.accounts) }));
}

const selectAccountPlan = preparedQuery((db, accountId: string) =>
  db
    .selectFrom('account_plans as a')
    .innerJoin('price_plans as p', 'p.name', 'a.plan_name')
    .select(['p.name', 'p.kind', 'p.tiers', 'p.created_at', 'p.created_by'])
    .where('a.account_id', '=', accountId),
);

/** The account's plan; undefined: the global PRICE_MARKUP_PERCENT. */
export async function planOfAccount(db: Kysely<Database>, accountId: string): Promise<StoredPlan | undefined> {
  const [row] = await selectAccountPlan(db, accountId);
  return row && planFromRow(row);
}

interface Assignment {
  accountId: string;
  /** A plan's name, or DEFAULT_PLAN for the global PRICE_MARKUP_PERCENT. */
  plan: string;
  actor: string;
  reason: string;
  source?: 'cli' | 'dashboard';
  console?: ConsoleActor;
  now: number;
}

/**
 * Puts the account on a plan (or back on the default), audited as `plan.assign` with the plan
 * before and after. Quotes already given keep their amount (they are signed with it) and orders
 * keep theirs: the plan prices what is asked after it.
 */
export async function assignPlan(db: Db, assignment: Assignment): Promise<{ previous: string; plan: string }> {
  const { accountId, plan, now } = assignment;
  return db.kysely.transaction().execute(async (tx) => {
    const account = await tx.selectFrom('accounts').select('id').where('id', '=', accountId).executeTakeFirst();
    if (!account) throw new PlanError(`no account ${accountId}`);
    if (plan !== DEFAULT_PLAN && !(await tx.selectFrom('price_plans').select('name').where('name', '=', plan).executeTakeFirst())) {
      throw new PlanError(`no plan named ${plan} (starport plan list shows them; ${DEFAULT_PLAN} is the global PRICE_MARKUP_PERCENT)`);
    }
    const before = await tx.selectFrom('account_plans').select('plan_name').where('account_id', '=', accountId).executeTakeFirst();
    const previous = before?.plan_name ?? DEFAULT_PLAN;
    if (plan === DEFAULT_PLAN) await tx.deleteFrom('account_plans').where('account_id', '=', accountId).execute();
    else {
      await tx
        .insertInto('account_plans')
        .values({ account_id: accountId, plan_name: plan, assigned_at: now })
        .onConflict((oc) => oc.column('account_id').doUpdateSet({ plan_name: plan, assigned_at: now }))
        .execute();
    }
    await recordAudit(tx, {
      actor: assignment.actor,
      ...auditSource(assignment),
      action: 'plan.assign',
      accountId,
      reason: assignment.reason,
      details: { from: previous, to: plan },
      now,
    });
    return { previous, plan };
  });
}
