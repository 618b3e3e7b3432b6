import type { FastifyInstance, FastifyRequest } from 'fastify';
import { depositMemo } from '../../../accounts/deposit-memo.js';
import { ApiError } from '../../../domain/api-error.js';
import { findDeposit, listDeposits } from '../../../deposits/store.js';
import { CLIENT_DEPOSIT_STATUSES, depositWire } from '../../../deposits/wire.js';
import { transferLink } from '../../../ton/transfer-link.js';
import type { ApiContext } from '../context.js';
import { GET_DEPOSIT_ADDRESS, LIST_DEPOSITS } from '../openapi/operations.js';
import { parseLimit, unknownCursor } from '../pagination.js';
import { listDepositsQuery } from '../schemas.js';

/**
 * Live top-ups for API clients: where to send TON (GET /deposit_address) and the
 * deposits credited to the account (GET /deposits, newest first, Stripe-style cursor
 * pagination). Both are live-only: a test key gets 403 live_key_required.
 */
export function depositRoutes(app: FastifyInstance, ctx: ApiContext): void {
  const network = ctx.deposits?.network ?? 'mainnet';

  app.get<{ Querystring: { limit?: string; starting_after?: string } }>(
    '/deposits',
    { schema: { querystring: listDepositsQuery }, preValidation: requireLiveKey, config: { openapi: LIST_DEPOSITS } },
    async (request) => {
      const limit = parseLimit(request.query.limit);
      const accountId = request.caller.accountId;
      let startingAfter: { lt: bigint; id: string } | undefined;
      if (request.query.starting_after !== undefined) {
        const anchor = await findDeposit(ctx.db.kysely, { id: request.query.starting_after, accountId });
        if (!anchor) throw unknownCursor('starting_after', request.query.starting_after, 'one of your deposits');
        startingAfter = { lt: anchor.lt, id: anchor.id };
      }
      const rows = await listDeposits(ctx.db.kysely, { accountId, status: CLIENT_DEPOSIT_STATUSES, startingAfter, limit: limit + 1 });
      return { ok: true, object: 'list', data: rows.slice(0, limit).map((d) => depositWire(d, network)), has_more: rows.length > limit };
    },
  );

  app.get('/deposit_address', { preValidation: requireLiveKey, config: { openapi: GET_DEPOSIT_ADDRESS } }, async (request) => {
    if (!ctx.deposits) throw new ApiError('live_unavailable', 'Live top-ups are not configured on this Starport installation.');
    const memo = await depositMemo(ctx.db, request.caller.accountId);
    return {
      ok: true,
      address: ctx.deposits.address,
      memo,
      network: ctx.deposits.network,
      transfer_link: transferLink(ctx.deposits.address, memo, undefined),
    };
  });
}

async function requireLiveKey(request: FastifyRequest): Promise<void> {
  if (request.caller.mode !== 'live') throw new ApiError('live_key_required');
}
