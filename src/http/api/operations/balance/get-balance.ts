import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { MODES } from '../../../../domain/api-key.js';
import { formatTon } from '../../../../domain/money.js';
import { type Balance as StoredBalance, balanceWithKeyReader, readBalance } from '../../../../ledger/ledger.js';
import { prefetched } from '../../auth.js';
import type { ApiContext } from '../../context.js';
import type { OperationDoc } from '../../openapi/document.js';
import { BalanceFields, component, OneOf, SuccessBody } from '../shared.js';

/** GET /balance (docs/api.md "GET /balance"): the balance of the key's mode. */

const Balance = component('Balance', SuccessBody({ balance: BalanceFields(), mode: OneOf(MODES, { description: 'The mode of the key used.' }) }, 'The balance of the key’s mode.'));

type Answer = Static<typeof Balance.schema>;

const EXAMPLE: Answer = { ok: true, balance: { value: '12.5', reserved: '0.25', currency: 'TON' }, mode: 'test' };

const GET_BALANCE: OperationDoc = {
  operationId: 'getBalance',
  summary: 'Retrieve the balance',
  description: '`balance.value` is what can be spent now; `balance.reserved` is the sum of orders not yet final. Both are for the key’s mode (`mode`).',
  tag: 'Balance',
  success: { status: 200, description: 'The balance of the key’s mode.', schema: Balance, examples: { test: { summary: 'A test balance', value: EXAMPLE } } },
  errors: [],
};

export function getBalance(app: FastifyInstance, ctx: ApiContext): void {
  // The key's verdict and the balance in one read, where the store offers it (auth.ts Prefetch).
  const withKey = balanceWithKeyReader(ctx.db.kysely);
  const prefetch = withKey && ((_request: unknown, keyHash: string) => withKey(keyHash));
  app.withTypeProvider<TypeBoxTypeProvider>().get('/balance', { config: { openapi: GET_BALANCE, prefetch } }, async (request): Promise<Answer> => {
    const early = prefetched<StoredBalance>(request);
    const balance = (early ? await early : await readBalance(ctx.db.kysely, request.caller)) ?? { available: 0n, reserved: 0n };
    return {
      ok: true,
      balance: { value: formatTon(balance.available), reserved: formatTon(balance.reserved), currency: 'TON' },
      mode: request.caller.mode,
    };
  });
}
