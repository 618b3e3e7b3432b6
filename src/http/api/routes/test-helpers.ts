import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../domain/api-error.js';
import { formatTon, parseTon } from '../../../domain/money.js';
import { fundTestBalance } from '../../../ledger/test-funding.js';
import type { ApiContext } from '../context.js';
import { FUND_TEST_BALANCE } from '../openapi/operations.js';
import { fundTestBalanceBody } from '../schemas.js';
import { entryBody } from '../serialize.js';

/**
 * /test_helpers: test-mode-only shortcuts for an integrator's CI (Stripe's test helpers).
 * Order of checks: authentication and rate limit (the API scope), then the key's mode (a live
 * key is refused before its body is even read), then the body as for every POST.
 */
export function testHelperRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.post<{ Body: { amount: string } }>(
    '/test_helpers/fund',
    {
      schema: { body: fundTestBalanceBody },
      config: { openapi: FUND_TEST_BALANCE },
      onRequest: async (request) => {
        if (request.caller.mode !== 'test') {
          throw new ApiError('test_key_required');
        }
      },
    },
    async (request) => {
      const entry = await fundTestBalance(ctx.db, { accountId: request.caller.accountId, amount: parseTon(request.body.amount), reference: request.id });
      return {
        ok: true,
        entry: entryBody(entry),
        balance: { value: formatTon(entry.after.available), reserved: formatTon(entry.after.reserved), currency: 'TON' },
      };
    },
  );
}
