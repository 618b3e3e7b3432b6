import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { tonAmount } from '../../../../domain/money.js';
import { isValidQuantity, PREMIUM_MONTHS, STARS_MAX, STARS_MIN } from '../../../../domain/products.js';
import { formatTimestamp } from '../../../../domain/time.js';
import { accountPrice } from '../../../../plans/account-price.js';
import { issueQuote, quoteKey } from '../../../../quotes/quotes.js';
import type { ApiContext } from '../../context.js';
import type { OperationDoc } from '../../openapi/document.js';
import { malformedField } from '../../validation.js';
import { Amount, component, Digits, ProductName, PublicId, ref, SuccessBody, Timestamp } from '../shared.js';

/**
 * GET /quote (docs/api.md "GET /quote"): the request schema, the answer's schema, the OpenAPI
 * text and the handler, in one place. The query is validated by Fastify with `GetQuoteQuery`
 * (strict: no coercion, so `quantity` is digits and is checked against the product here);
 * the answer is typed by `Quote`, which the document publishes under that name.
 */

export const GetQuoteQuery = Type.Object({
  product: ProductName({ description: 'What to buy.', examples: ['stars'] }),
  quantity: Digits(`stars: ${STARS_MIN}–${STARS_MAX}; premium: ${PREMIUM_MONTHS.join(', ')} (months).`, '100'),
});

const Quote = component(
  'Quote',
  SuccessBody(
    {
      id: PublicId('quo', 'Quote id: pass it as `quote_id` to POST /orders to be charged exactly `amount` (one order, until `expires_at`).'),
      product: ProductName(),
      quantity: Type.Integer(),
      amount: ref(Amount, { description: 'What would be debited now.' }),
      expires_at: Timestamp({ description: 'An order with this `quote_id` is charged `amount` until then; without it orders are priced afresh.' }),
    },
    'The current price.',
  ),
);

type Answer = Static<typeof Quote.schema>;

const EXAMPLE: Answer = {
  ok: true,
  id: 'quo_04gfIWW00046309g70Koe42BgLoZ7bk8AKC5pBFqeT9m7wGguHWZuBcF3AHTXaT',
  product: 'stars',
  quantity: 50,
  amount: { value: '0.25', currency: 'TON' },
  expires_at: '2026-11-25T21:31:00.123Z',
};

const GET_QUOTE: OperationDoc = {
  operationId: 'getQuote',
  summary: 'Get a price',
  description:
    'What an order would cost now. Pass the answer’s `id` as `quote_id` to POST /orders (same product and quantity, before `expires_at`) and the order is charged exactly this `amount`; ' +
    'a quote prices one order. Without `quote_id`, orders are priced afresh at creation, so the amount charged may differ slightly. ' +
    '`quantity` must be digits only (`50`, not `50.0` or `+50`).',
  tag: 'Pricing',
  success: {
    status: 200,
    description: 'The current price.',
    schema: Quote,
    examples: { stars: { summary: '50 Stars', value: EXAMPLE } },
  },
  errors: ['invalid_product', 'invalid_quantity', 'price_unavailable'],
};

export function getQuote(app: FastifyInstance, ctx: ApiContext): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get('/quote', { schema: { querystring: GetQuoteQuery }, config: { openapi: GET_QUOTE } }, async (request): Promise<Answer> => {
    const { product } = request.query;
    const quantity = Number(request.query.quantity);
    if (!isValidQuantity(product, quantity)) throw malformedField('quantity');
    const { accountId, mode, planName } = request.caller;
    // The account's price (its plan's, else PRICE_MARKUP_PERCENT): docs/operations.md "Price plans".
    // The plan's name came with the key's verdict: no lookup of the account's plan here.
    const amount = await accountPrice({ db: ctx.db.kysely, prices: ctx.prices }, { accountId, mode, planName }, product, quantity);
    // The id is the signed quote (quotes.ts): POST /orders with it is charged this amount.
    const quote = issueQuote(await quoteKey(ctx.db), { accountId, mode, product, quantity, amount, now: Date.now(), ttlSeconds: ctx.quoteTtlSeconds });
    return {
      ok: true,
      id: quote.id,
      product,
      quantity,
      amount: tonAmount(amount),
      expires_at: formatTimestamp(quote.expiresAt),
    };
  });
}
