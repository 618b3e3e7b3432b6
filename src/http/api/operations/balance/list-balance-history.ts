import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { balanceHistory, findEntry } from '../../../../ledger/history.js';
import type { ApiContext } from '../../context.js';
import type { OperationDoc } from '../../openapi/document.js';
import { checkOneCursor, parseLimit, unknownCursor } from '../../pagination.js';
import { component, ListQuery, listOf, PAGINATION } from '../shared.js';
import { BalanceEntry, DEPOSIT_ENTRY_EXAMPLE, entryBody } from './balance-entry.js';

/** GET /balance/history (docs/api.md "GET /balance/history"): every movement of the key's balance, newest first. */

const ListBalanceHistoryQuery = ListQuery();

const BalanceHistory = component('BalanceHistory', listOf(BalanceEntry, 'A page of the balance history of the key’s mode, newest first.'));

type Answer = Static<typeof BalanceHistory.schema>;

const EXAMPLE: Answer = {
  ok: true,
  object: 'list',
  data: [
    {
      id: 'jrn_3dM6nS2vT5zH8uW1bX4lRs3',
      type: 'debit',
      amount: '0',
      reserved_change: '-0.25',
      balance_after: { value: '12.25', reserved: '0', currency: 'TON' },
      order_id: 'ord_7hQ2mZ0bV4nC8xK1pL5sWd',
      deposit: null,
      created_at: '2026-11-25T21:30:03.207Z',
    },
    {
      id: 'jrn_2cL5mR1uS4yG7tV0aW3kQr2',
      type: 'reserve',
      amount: '-0.25',
      reserved_change: '0.25',
      balance_after: { value: '12.25', reserved: '0.25', currency: 'TON' },
      order_id: 'ord_7hQ2mZ0bV4nC8xK1pL5sWd',
      deposit: null,
      created_at: '2026-11-25T21:30:00.123Z',
    },
    DEPOSIT_ENTRY_EXAMPLE,
  ],
  has_more: false,
};

const LIST_BALANCE_HISTORY: OperationDoc = {
  operationId: 'listBalanceHistory',
  summary: 'List balance history',
  description:
    'Every movement of the balance of the key’s mode, newest first: deposits, reserves (order created), debits (delivered), releases (failed) and adjustments, ' +
    'each with its signed `amount` (change of `balance.value`), `reserved_change` and the balance after it. ' +
    PAGINATION,
  tag: 'Balance',
  success: { status: 200, description: 'A page of balance history.', schema: BalanceHistory, examples: { page: { value: EXAMPLE } } },
  errors: [],
};

export function listBalanceHistory(app: FastifyInstance, ctx: ApiContext): void {
  app
    .withTypeProvider<TypeBoxTypeProvider>()
    .get('/balance/history', { schema: { querystring: ListBalanceHistoryQuery }, config: { openapi: LIST_BALANCE_HISTORY } }, async (request): Promise<Answer> => {
      const { query, caller } = request;
      const limit = parseLimit(query.limit);
      checkOneCursor(query);
      const cursor = async (param: 'starting_after' | 'ending_before') => {
        const id = query[param];
        if (id === undefined) return undefined;
        const entry = await findEntry(ctx.db.kysely, id, caller);
        if (!entry) throw unknownCursor(param, id, `an entry of this account's ${caller.mode} balance history`);
        return entry;
      };
      const page = await balanceHistory(ctx.db.kysely, {
        accountId: caller.accountId,
        mode: caller.mode,
        limit,
        ...(query.starting_after !== undefined && { startingAfter: await cursor('starting_after') }),
        ...(query.ending_before !== undefined && { endingBefore: await cursor('ending_before') }),
      });
      return { ok: true, object: 'list', data: page.entries.map(entryBody), has_more: page.hasMore };
    });
}
