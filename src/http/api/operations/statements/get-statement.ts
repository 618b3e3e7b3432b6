import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../../domain/api-error.js';
import { parseMonth } from '../../../../statements/month.js';
import { accountStatement, StatementUnavailable } from '../../../../statements/statement.js';
import { statementBody } from '../../../../statements/wire.js';
import type { ApiContext } from '../../context.js';
import type { OperationDoc } from '../../openapi/document.js';
import { Closed, component, Money, NullableString, OneOf, ProductName, SignedMoney, SuccessBody, Timestamp, Ton } from '../shared.js';

/**
 * GET /statements/{month} (docs/api.md "GET /statements/{month}"): the monthly statement of the
 * key's balance, read from the ledger (src/statements/statement.ts). Money is TON as decimal
 * strings; the operator's adjustment reasons are internal notes and are not shown, as in the
 * balance history.
 */

const StatementParams = Type.Object({ month: Type.String({ description: 'A calendar month in UTC, `YYYY-MM` (e.g. `2026-11`).', examples: ['2026-10'] }) });

const Count = (description: string) => Type.Integer({ minimum: 0, description });
const Totals = (description: string) => Closed({ count: Count('How many movements.'), amount: Money({ description: 'Their sum.' }) }, description);
const BalanceAt = (description: string) =>
  Closed({ value: Money({ description: 'Available: what could be spent.' }), reserved: Money({ description: 'Held for orders not yet final.' }), currency: Ton }, description);

const StatementBody = component(
  'Statement',
  SuccessBody(
    {
      object: Type.Literal('statement'),
      month: Type.String({ pattern: '^[0-9]{4}-(0[1-9]|1[0-2])$', description: 'The month, `YYYY-MM`.' }),
      mode: OneOf(['live', 'test'] as const, { description: 'The balance the statement covers: the key’s mode.' }),
      period_start: Timestamp({ description: 'The month’s first millisecond (UTC), included.' }),
      period_end: Timestamp({ description: 'The next month’s first millisecond, excluded.' }),
      complete: Type.Boolean({ description: '`false` for the current month: its figures run to `generated_at` and change until the month ends.' }),
      generated_at: Timestamp(),
      opening_balance: BalanceAt('The balance at `period_start`.'),
      deposits: Closed(
        {
          count: Count('Deposits credited.'),
          amount: Money({ description: 'TON credited, TON and USDT deposits together.' }),
          ton: Totals('TON deposits (and test funds on a test statement).'),
          usdt: Closed(
            {
              count: Count('USDT deposits credited.'),
              amount: Money({ description: 'The TON they were credited as.' }),
              usdt: Type.String({ description: 'The USDT received, decimal (6 digits at most).', examples: ['12.345678'] }),
              items: Type.Array(
                Closed({
                  tx_hash: Type.String({ description: 'The chain transaction.' }),
                  usdt: Type.String({ description: 'USDT received.' }),
                  rate: NullableString({ description: 'USD per TON it was converted at (decimal text).' }),
                  amount: Money({ description: 'TON credited (the rate less the conversion spread, rounded down to the nanoton).' }),
                  credited_at: Timestamp(),
                }),
                { description: 'Each USDT deposit with its conversion, oldest first.' },
              ),
            },
            'USDT deposits, converted to TON when credited.',
          ),
        },
        'Money in.',
      ),
      orders_placed: Totals('Orders created this month: their amounts moved from `value` to `reserved`.'),
      orders_delivered: Closed(
        {
          count: Count('Orders delivered this month.'),
          amount: Money({ description: 'Their reserved amounts, spent.' }),
          by_product: Type.Array(
            Closed({
              product: ProductName(),
              count: Count('Orders delivered.'),
              quantity: Type.Integer({ minimum: 0, description: 'Stars, or Premium months, delivered.' }),
              amount: Money(),
            }),
            { description: 'Per product (stars first); a product with no delivery is left out.' },
          ),
        },
        'Orders delivered this month (placed this month or before).',
      ),
      orders_failed: Totals('Orders that failed this month: their reserved amounts were released to `value`.'),
      adjustments: Closed(
        {
          count: Count('Operator adjustments.'),
          credits: Money({ description: 'Credited.' }),
          debits: Money({ description: 'Debited.' }),
          net: SignedMoney({ description: '`credits` less `debits`.' }),
          items: Type.Array(Closed({ amount: SignedMoney(), created_at: Timestamp() }), { description: 'Each adjustment, oldest first.' }),
        },
        'Corrections by the operator.',
      ),
      closing_balance: BalanceAt(
        'The balance at `period_end` (at `generated_at` for the current month). `value` = opening `value` + deposits + adjustments − placed + failed; `reserved` = opening `reserved` + placed − delivered − failed.',
      ),
    },
    'A monthly statement of the key’s balance.',
  ),
);

type Answer = Static<typeof StatementBody.schema>;

const EXAMPLE: Answer = {
  ok: true,
  object: 'statement',
  month: '2026-10',
  mode: 'live',
  period_start: '2026-10-01T00:00:00.000Z',
  period_end: '2026-11-01T00:00:00.000Z',
  complete: true,
  generated_at: '2026-11-25T21:30:00.123Z',
  opening_balance: { value: '3.5', reserved: '0.25', currency: 'TON' },
  deposits: {
    count: 2,
    amount: '24.888888488',
    ton: { count: 1, amount: '20' },
    usdt: {
      count: 1,
      amount: '4.888888488',
      usdt: '12.345678',
      items: [
        {
          tx_hash: 'b3f1c2d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90',
          usdt: '12.345678',
          rate: '2.5',
          amount: '4.888888488',
          credited_at: '2026-10-03T12:00:00.000Z',
        },
      ],
    },
  },
  orders_placed: { count: 3, amount: '2.75' },
  orders_delivered: { count: 2, amount: '0.75', by_product: [{ product: 'stars', count: 2, quantity: 150, amount: '0.75' }] },
  orders_failed: { count: 1, amount: '2' },
  adjustments: { count: 1, credits: '1', debits: '0', net: '1', items: [{ amount: '1', created_at: '2026-10-07T12:00:00.000Z' }] },
  closing_balance: { value: '28.638888488', reserved: '0.25', currency: 'TON' },
};

const GET_STATEMENT: OperationDoc = {
  operationId: 'getStatement',
  summary: 'Get a monthly statement',
  description:
    'The statement of the key’s balance (its mode) for a calendar month in UTC: the opening balance, deposits (TON, and USDT with their conversion), orders placed, delivered (by product) and failed, ' +
    'operator adjustments and the closing balance. Every figure is read from the ledger and adds up to the nanoton: each closing balance is the next month’s opening one. ' +
    'Months run from the one the account was created in to the current one (`complete: false`). `month` is `YYYY-MM`.',
  tag: 'Balance',
  success: { status: 200, description: 'The month’s statement.', schema: StatementBody, examples: { month: { value: EXAMPLE } } },
  errors: ['invalid_request', 'statement_not_found'],
};

export function getStatement(app: FastifyInstance, ctx: ApiContext): void {
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .get('/statements/:month', { schema: { params: StatementParams }, config: { openapi: GET_STATEMENT } }, async (request): Promise<Answer> => {
      const month = parseMonth(request.params.month);
      if (!month) throw new ApiError('invalid_request', 'month must be a calendar month written YYYY-MM, e.g. 2026-10.', 'month');
      const { accountId, mode } = request.caller;
      try {
        const statement = await accountStatement(ctx.db.kysely, { accountId, mode, month });
        // The key authenticated, so its account exists.
        if (!statement) throw new Error(`no account ${accountId}`);
        // Typed by the answer's schema: the wire form (src/statements/wire.ts) cannot drift from it.
        const body: Omit<Answer, 'ok'> = statementBody(statement);
        return { ok: true, ...body };
      } catch (error) {
        if (error instanceof StatementUnavailable) throw new ApiError('statement_not_found', error.message, 'month', { reason: error.why.reason });
        throw error;
      }
    });
}
