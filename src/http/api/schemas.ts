import { ORDER_STATUSES } from '../../domain/order-status.js';
import { FREE_TEXT_PATTERN, ProductName, QUANTITY_BY_PRODUCT, Quantity, Recipient } from './operations/shared.js';

/**
 * Request schemas: they validate requests (strictly: no coercion, unknown fields rejected) and
 * document them. Quantity rules depend on the product, hence the if/then pairs.
 */
export const validateRecipientBody = {
  type: 'object',
  required: ['product', 'recipient', 'quantity'],
  additionalProperties: false,
  properties: { product: ProductName({ description: 'What to buy.', examples: ['stars'] }), recipient: Recipient, quantity: Quantity },
  allOf: QUANTITY_BY_PRODUCT,
} as const;

export const orderIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', description: 'Order id, ord_…' } },
} as const;

/** GET /deposits: Stripe-style cursor pagination (limit 1–100, default 20). */
export const listDepositsQuery = {
  type: 'object',
  properties: {
    limit: { type: 'string', pattern: '^[0-9]+$', description: 'How many deposits to return, 1–100 (default 20).', examples: ['20'] },
    starting_after: {
      type: 'string',
      description: 'A deposit id (dep_…) from the previous page: returns the deposits after it (older).',
      examples: ['dep_4Xb0Yw3kq9T2mZlF8sV1aC'],
    },
  },
} as const;

export const createWebhookEndpointBody = {
  type: 'object',
  required: ['url'],
  additionalProperties: false,
  properties: {
    url: {
      type: 'string',
      description: 'Where to POST events: https:// (plain http:// only in test mode), a public address, at most 2048 characters.',
      examples: ['https://example.com/webhooks/starport'],
    },
    events: {
      type: 'array',
      items: { type: 'string' },
      description: 'Event types to receive (`order.created`, `order.delivered`, …, `balance.low`), or `["*"]` for all (the default).',
      examples: [['order.delivered', 'order.failed']],
    },
  },
} as const;

export const webhookEndpointIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', description: 'Webhook endpoint id, we_…' } },
} as const;

/** POST bodies are always JSON objects (docs/api.md "Conventions"); rotation takes no fields: send `{}`. */
export const emptyBody = { type: 'object', additionalProperties: false, properties: {} } as const;

// --- Lists -------------------------------------------------------------------------------------

const digits = (description: string, example: string) => ({ type: 'string', pattern: '^[0-9]+$', description, examples: [example] }) as const;
const createdBound = (description: string) =>
  ({
    type: 'string',
    description: `${description} An RFC 3339 timestamp (\`2026-11-25T21:30:00Z\`, \`2026-11-25T21:30:00.123+02:00\`) or Unix seconds (digits only).`,
    examples: ['2026-11-25T00:00:00Z'],
  }) as const;

const pageParameters = {
  limit: digits('How many items to return, 1–100 (default 20). Digits only.', '20'),
  starting_after: { type: 'string', description: 'A cursor: the `id` of the last item of the previous page. Returns items older than it.' },
  ending_before: {
    type: 'string',
    description: 'A cursor: the `id` of the first item of the current page. Returns the items just newer than it (the page before). Not with `starting_after`.',
  },
} as const;

export const listOrdersQuery = {
  type: 'object',
  properties: {
    ...pageParameters,
    status: { type: 'string', enum: [...ORDER_STATUSES], description: 'Only orders in this status.' },
    external_id: {
      type: 'string',
      minLength: 1,
      maxLength: 128,
      // Like the order's own external_id.
      pattern: FREE_TEXT_PATTERN,
      description: 'Only orders with this `external_id` (exact match; 1–128 characters, no NUL).',
    },
    'created[gte]': createdBound('Only orders created at or after this time.'),
    'created[lt]': createdBound('Only orders created before this time.'),
  },
} as const;

export const balanceHistoryQuery = { type: 'object', properties: { ...pageParameters } } as const;

export const fundTestBalanceBody = {
  type: 'object',
  required: ['amount'],
  additionalProperties: false,
  properties: {
    amount: {
      type: 'string',
      pattern: '^[0-9]+(\\.[0-9]{1,9})?$',
      description: 'TON to credit to the test balance, as a decimal string: more than 0, at most 1000000, at most 9 fractional digits.',
      examples: ['100'],
    },
  },
} as const;
