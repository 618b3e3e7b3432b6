import { afterAll, beforeAll, expect, test } from 'vitest';
import { cliFor, describeRun, parseJsonStdout } from '../support/cli.js';
import { type Harness, startHarness } from '../support/harness.js';
import { expectOk, getQuote } from '../support/http.js';

/**
 * `plan create|list|show|assign` (the real CLI process against the harness's database,
 * docs/operations.md "Price plans"): plans are defined and assigned, the running service prices
 * by them at once, bad definitions are refused naming the number, and both changes are audited.
 */
let h: Harness;
let cli: ReturnType<typeof cliFor>;

beforeAll(async () => {
  h = await startHarness();
  cli = cliFor({ ...h.databaseEnv, STARPORT_ACTOR: 'ops-bob' });
});
afterAll(async () => {
  await h?.close();
});

async function run(args: string[]): Promise<any> {
  const result = await cli([...args, '--json']);
  expect(result.code, describeRun(args, result)).toBe(0);
  return parseJsonStdout(result);
}

async function refused(args: string[], message: string): Promise<void> {
  const result = await cli(args);
  expect(result.code, describeRun(args, result)).toBe(1);
  expect(result.stderr).toContain(message);
}

const quote = async (key: string) => {
  const res = await getQuote(h, key, '?product=stars&quantity=50');
  expectOk(res);
  return res.body.amount.value as string;
};

test('define, list, show and assign plans; the service prices by them; all audited', async () => {
  const a = await h.account();
  const created = await run(['plan', 'create', 'gold', '--markup', '20', '--tier', '1000:markup=10', '--reason', 'offer']);
  expect(created).toMatchObject({
    name: 'gold',
    kind: 'markup',
    created_by: 'ops-bob',
    tiers: [
      { from_ton: '0', markup_percent: '20' },
      { from_ton: '1000', markup_percent: '10' },
    ],
  });
  await run(['plan', 'create', 'agency', '--star', '0.012', '--premium3', '9', '--premium6', '15', '--premium12', '27', '--tier', '50:star=0.011']);
  expect((await run(['plan', 'show', 'agency'])).tiers[1]).toEqual({ from_ton: '50', star_usd: '0.011', premium_3_usd: '9', premium_6_usd: '15', premium_12_usd: '27' });

  expect(await quote(a.testKey)).toBe('0.25');
  expect(await run(['plan', 'assign', '--account', a.accountId, '--plan', 'gold', '--reason', 'signed'])).toEqual({ account_id: a.accountId, plan: 'gold', previous: 'default' });
  expect(await quote(a.testKey)).toBe('0.3');
  await run(['plan', 'assign', '--account', a.accountId, '--plan', 'agency', '--reason', 'moved']);
  expect(await quote(a.testKey)).toBe('0.2');
  expect((await run(['plan', 'list'])).plans.map((p: any) => [p.name, p.accounts])).toEqual([
    ['agency', 1],
    ['gold', 0],
  ]);
  await run(['plan', 'assign', '--account', a.accountId, '--plan', 'default', '--reason', 'ended']);
  expect(await quote(a.testKey)).toBe('0.25');

  const audit = await h.service.db.kysely
    .selectFrom('audit_log')
    .select(['actor', 'action', 'account_id', 'reason', 'details'])
    .where('action', 'like', 'plan.%')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  expect(audit.map((row) => [row.actor, row.action, row.account_id, row.reason, JSON.parse(row.details).to ?? JSON.parse(row.details).plan])).toEqual([
    ['ops-bob', 'plan.create', null, 'offer', 'gold'],
    ['ops-bob', 'plan.create', null, null, 'agency'],
    ['ops-bob', 'plan.assign', a.accountId, 'signed', 'gold'],
    ['ops-bob', 'plan.assign', a.accountId, 'moved', 'agency'],
    ['ops-bob', 'plan.assign', a.accountId, 'ended', 'default'],
  ]);
}, 120_000);

test('bad definitions and assignments are refused, naming the value; nothing is stored', async () => {
  const a = await h.account();
  await refused(['plan', 'create', 'neg', '--markup=-5'], '--markup must not be negative, got -5');
  await refused(['plan', 'create', 'huge', '--markup', '5000'], '--markup (percent) must be from 0 to 1000, got 5000');
  await refused(['plan', 'create', 'star', '--star', '3', '--premium3', '9', '--premium6', '15', '--premium12', '27'], '--star (USD per star) must be from 0.0001 to 1, got 3');
  await refused(['plan', 'create', 'half', '--star', '0.01'], 'a prices plan needs --star, --premium3, --premium6 and --premium12');
  await refused(['plan', 'create', 'both', '--markup', '1', '--star', '0.01'], 'not both');
  await refused(['plan', 'create', 'order', '--markup', '5', '--tier', '100:markup=3', '--tier', '50:markup=1'], 'tier volumes must increase: 50 TON follows 100 TON');
  await refused(['plan', 'create', 'tier', '--markup', '5', '--tier', '100:markup=-3'], "the tier from 100 TON's markup must not be negative, got -3");
  await refused(['plan', 'create', 'Bad Name', '--markup', '5'], 'a plan name is 1 to 40 lowercase letters');
  await refused(['plan', 'create', 'nothing'], 'a plan needs --markup PERCENT');
  await run(['plan', 'create', 'once', '--markup', '1']);
  await refused(['plan', 'create', 'once', '--markup', '2'], 'a plan named once exists already');
  await refused(['plan', 'assign', '--account', a.accountId, '--plan', 'missing', '--reason', 'x'], 'no plan named missing');
  await refused(['plan', 'assign', '--account', 'acct_nobody', '--plan', 'once', '--reason', 'x'], 'no account acct_nobody');
  await refused(['plan', 'assign', '--account', a.accountId, '--plan', 'once'], '--reason is required');
  await refused(['plan', 'show', 'missing'], 'no plan named missing');
  const names = (await run(['plan', 'list'])).plans.map((p: any) => p.name);
  expect(names.filter((n: string) => ['neg', 'huge', 'star', 'half', 'both', 'order', 'tier', 'nothing'].includes(n))).toEqual([]);
  expect(await quote(a.testKey)).toBe('0.25');
}, 120_000);
