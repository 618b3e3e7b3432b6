import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../../domain/api-error.js';
import { formatTon, parseTon } from '../../../../domain/money.js';
import { fundTestBalance as fund } from '../../../../ledger/test-funding.js';
import type { ApiContext } from '../../context.js';
import type { OperationDoc } from '../../openapi/document.js';
import { BalanceEntry, DEPOSIT_ENTRY_EXAMPLE, entryBody } from '../balance/balance-entry.js';
import { BalanceFields, component, ref, SuccessBody } from '../shared.js';

/**
 * POST /test_helpers/fund (docs/api.md "POST /test_helpers/fund"): a test-mode-only shortcut
 * for an integrator's CI (Stripe's test helpers). Order of checks: authentication and rate
 * limit (the API scope), then the key's mode (a live key is refused before its body is even
 * read), then the body as for every POST. The rule of how much may be funded is the ledger's
 * (ledger/test-funding.ts), the same for the dashboard's button.
 */

const FundTestBalanceBody = Type.Object(
  {
    amount: Type.String({
      pattern: '^[0-9]+(\\.[0-9]{1,9})?$',
      description: 'TON to credit to the test balance, as a decimal string: more than 0, at most 1000000, at most 9 fractional digits.',
      examples: ['100'],
    }),
  },
  { additionalProperties: false },
);

const TestFunding = component(
  'TestFunding',
  SuccessBody({ entry: ref(BalanceEntry, { description: 'The `deposit` entry written.' }), balance: BalanceFields() }, 'The test balance after the funding.'),
);

type Answer = Static<typeof TestFunding.schema>;

const HUNDRED = { value: '100', reserved: '0', currency: 'TON' } as const;
const EXAMPLE: Answer = { ok: true, entry: { ...DEPOSIT_ENTRY_EXAMPLE, amount: '100', balance_after: HUNDRED }, balance: HUNDRED };

const FUND_TEST_BALANCE: OperationDoc = {
  operationId: 'fundTestBalance',
  summary: 'Fund the test balance',
  description:
    'Test keys only: credits `amount` TON to the test balance (a `deposit` in balance history whose reference is this request’s id), so your CI can fund its sandbox. ' +
    'A live key is refused with 403 `test_key_required` before the body is read. `amount`: a decimal string, more than 0, at most 1000000 per call; a test balance holds at most 1000000000 TON. ' +
    'Not idempotent: each call credits again.',
  tag: 'Test helpers',
  requestBody: { name: 'FundTestBalanceRequest', description: '`amount`: TON as a decimal string.', examples: { hundred: { summary: '100 TON', value: { amount: '100' } } } },
  success: { status: 200, description: 'The test balance was credited.', schema: TestFunding, examples: { funded: { value: EXAMPLE } } },
  errors: ['test_key_required'],
};

export function fundTestBalance(app: FastifyInstance, ctx: ApiContext): void {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/test_helpers/fund',
    {
      schema: { body: FundTestBalanceBody },
      config: { openapi: FUND_TEST_BALANCE },
      onRequest: async (request) => {
        if (request.caller.mode !== 'test') throw new ApiError('test_key_required');
      },
    },
    async (request): Promise<Answer> => {
      const entry = await fund(ctx.db, { accountId: request.caller.accountId, amount: parseTon(request.body.amount), reference: request.id });
      return {
        ok: true,
        entry: entryBody(entry),
        balance: { value: formatTon(entry.after.available), reserved: formatTon(entry.after.reserved), currency: 'TON' },
      };
    },
  );
}
