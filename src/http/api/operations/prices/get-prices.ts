import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { MODES } from '../../../../domain/api-key.js';
import { tonAmount } from '../../../../domain/money.js';
import { priceListing } from '../../../../plans/price-list.js';
import type { ApiContext } from '../../context.js';
import type { OperationDoc } from '../../openapi/document.js';
import { Amount, Closed, component, OneOf, ProductName, ref, SuccessBody } from '../shared.js';

/**
 * GET /prices (docs/api.md "GET /prices"): the key's account's price list in the key's mode —
 * each product and quantity rule with its unit price, priced as GET /quote prices (the
 * account's plan, else the service's markup), and the volume tier the account is in.
 */

const PriceLine = component(
  'PriceLine',
  Closed(
    {
      product: ProductName(),
      quantity_rule: Type.String({ description: 'The quantities GET /quote and POST /orders accept for this line.', examples: ['an integer from 50 to 10000'] }),
      min_quantity: Type.Integer(),
      max_quantity: Type.Integer({ description: 'Equal to `min_quantity` for a Premium period.' }),
      unit_price: ref(Amount, {
        description: 'Stars: one star (an order of N stars costs at most N × this: it is priced as a whole and rounded up once). Premium: the period.',
      }),
    },
    'A product and quantity rule with its price.',
  ),
);

const Prices = component(
  'Prices',
  SuccessBody(
    {
      mode: OneOf(MODES, { description: 'The mode of the key used: test keys get test prices, live keys live ones.' }),
      prices: Type.Array(ref(PriceLine), { description: 'Stars, then each Premium period.' }),
      volume: ref(Amount, { description: 'The account’s delivered orders of this mode created in the last 30 days (UTC days, today included): what picks the tier.' }),
      tier: Closed(
        {
          number: Type.Integer({ minimum: 1, description: 'The tier the account is in, from 1.' }),
          of: Type.Integer({ minimum: 1, description: 'The number of tiers of the account’s price plan (1 without volume tiers).' }),
        },
        'The volume tier the account is in.',
      ),
      next_tier: Type.Union(
        [
          Closed(
            {
              from: ref(Amount, { description: 'The volume from which the next tier applies.' }),
              needs: ref(Amount, { description: 'How much more delivered volume reaches it.' }),
            },
            'The next volume tier.',
          ),
          Type.Null(),
        ],
        { description: '`null` in the last (or only) tier.' },
      ),
    },
    'The account’s prices now.',
  ),
);

type Answer = Static<typeof Prices.schema>;

const EXAMPLE: Answer = {
  ok: true,
  mode: 'test',
  prices: [
    { product: 'stars', quantity_rule: 'an integer from 50 to 10000', min_quantity: 50, max_quantity: 10000, unit_price: { value: '0.005', currency: 'TON' } },
    { product: 'premium', quantity_rule: '3 (months)', min_quantity: 3, max_quantity: 3, unit_price: { value: '3.996666667', currency: 'TON' } },
    { product: 'premium', quantity_rule: '6 (months)', min_quantity: 6, max_quantity: 6, unit_price: { value: '5.33', currency: 'TON' } },
    { product: 'premium', quantity_rule: '12 (months)', min_quantity: 12, max_quantity: 12, unit_price: { value: '9.663333334', currency: 'TON' } },
  ],
  volume: { value: '120.5', currency: 'TON' },
  tier: { number: 1, of: 2 },
  next_tier: { from: { value: '1000', currency: 'TON' }, needs: { value: '879.5', currency: 'TON' } },
};

const GET_PRICES: OperationDoc = {
  operationId: 'getPrices',
  summary: 'List your prices',
  description:
    'What each product costs this account now, in the key’s mode, priced exactly as GET /quote prices it (the account’s price plan, if the operator gave it one). ' +
    'Prices move with the TON/USD rate (or the upstream’s price) and with the volume tier, so an order is charged GET /quote’s amount, not this list’s: this is for display. ' +
    'With volume tiers, `volume` (delivered orders over the last 30 days) picks the tier, and `next_tier` says what the next one needs.',
  tag: 'Pricing',
  success: { status: 200, description: 'The account’s prices now.', schema: Prices, examples: { tiered: { summary: 'A test key, first of two tiers', value: EXAMPLE } } },
  errors: ['price_unavailable'],
};

export function getPrices(app: FastifyInstance, ctx: ApiContext): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get('/prices', { config: { openapi: GET_PRICES } }, async (request): Promise<Answer> => {
    const { accountId, mode, planName } = request.caller;
    const listing = await priceListing({ db: ctx.db.kysely, prices: ctx.prices }, { accountId, mode, planName });
    return {
      ok: true,
      mode,
      prices: listing.lines.map((line) => ({
        product: line.product,
        quantity_rule: line.quantityRule,
        min_quantity: line.minQuantity,
        max_quantity: line.maxQuantity,
        unit_price: tonAmount(line.unitPrice),
      })),
      volume: tonAmount(listing.volume),
      tier: { number: listing.tier, of: listing.tiers },
      next_tier: listing.nextTier && { from: tonAmount(listing.nextTier.from), needs: tonAmount(listing.nextTier.needs) },
    };
  });
}
