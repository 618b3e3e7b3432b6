import type { FastifyInstance } from 'fastify';
import { tonAmount } from '../../../domain/money.js';
import { isValidQuantity, type Product } from '../../../domain/products.js';
import { formatTimestamp } from '../../../domain/time.js';
import { freshPrice } from '../../../orders/fresh-price.js';
import { issueQuote, quoteKey } from '../../../quotes/quotes.js';
import type { ApiContext } from '../context.js';
import { GET_QUOTE } from '../openapi/operations.js';
import { quoteQuery } from '../schemas.js';
import { malformedField } from '../validation.js';

export function quoteRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.get<{ Querystring: { product: Product; quantity: string } }>(
    '/quote',
    { schema: { querystring: quoteQuery }, config: { openapi: GET_QUOTE } },
    async (request) => {
      const { product } = request.query;
      const quantity = Number(request.query.quantity);
      if (!isValidQuantity(product, quantity)) throw malformedField('quantity');
      const amount = await freshPrice(ctx.prices, product, quantity, request.caller.mode);
      // The id is the signed quote (quotes.ts): POST /orders with it is charged this amount.
      const { accountId, mode } = request.caller;
      const quote = issueQuote(await quoteKey(ctx.db), { accountId, mode, product, quantity, amount, now: Date.now(), ttlSeconds: ctx.quoteTtlSeconds });
      return {
        ok: true,
        id: quote.id,
        product,
        quantity,
        amount: tonAmount(amount),
        expires_at: formatTimestamp(quote.expiresAt),
      };
    },
  );
}
