import type { FastifyInstance, FastifyRequest } from 'fastify';
import { formatTon } from '../../../domain/money.js';
import { balanceHistory, findEntry } from '../../../ledger/history.js';
import { type Balance, balanceWithKeyReader, readBalance } from '../../../ledger/ledger.js';
import { prefetched } from '../auth.js';
import type { ApiContext } from '../context.js';
import { GET_BALANCE, LIST_BALANCE_HISTORY } from '../openapi/operations.js';
import { checkOneCursor, type PageQuery, parseLimit, unknownCursor } from '../pagination.js';
import { balanceHistoryQuery } from '../schemas.js';
import { entryBody } from '../serialize.js';

export function balanceRoutes(app: FastifyInstance, ctx: ApiContext): void {
  // The key's verdict and the balance in one read, where the store offers it (auth.ts Prefetch).
  const withKey = balanceWithKeyReader(ctx.db.kysely);
  const prefetch = withKey && ((_request: unknown, keyHash: string) => withKey(keyHash));
  const callerBalance = async (request: FastifyRequest): Promise<Balance> => {
    const early = prefetched<Balance>(request);
    if (early) return early;
    return (await readBalance(ctx.db.kysely, request.caller)) ?? { available: 0n, reserved: 0n };
  };
  app.get('/balance', { config: { openapi: GET_BALANCE, prefetch } }, async (request) => {
    const balance = await callerBalance(request);
    return {
      ok: true,
      balance: { value: formatTon(balance.available), reserved: formatTon(balance.reserved), currency: 'TON' },
      mode: request.caller.mode,
    };
  });

  app.get<{ Querystring: PageQuery }>('/balance/history', { schema: { querystring: balanceHistoryQuery }, config: { openapi: LIST_BALANCE_HISTORY } }, async (request) => {
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
