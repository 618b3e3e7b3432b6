import type { FastifyInstance } from 'fastify';
import { formatTon } from '../../../domain/money.js';
import { readBalance } from '../../../ledger/ledger.js';
import type { ApiContext } from '../context.js';
import { GET_BALANCE } from '../openapi/operations.js';

export function balanceRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.get('/balance', { config: { openapi: GET_BALANCE } }, async (request) => {
    const balance = (await readBalance(ctx.db.kysely, request.caller)) ?? { available: 0n, reserved: 0n };
    return {
      ok: true,
      balance: { value: formatTon(balance.available), reserved: formatTon(balance.reserved), currency: 'TON' },
      mode: request.caller.mode,
    };
  });
}
