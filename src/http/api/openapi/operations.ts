import { EXAMPLES, IDEMPOTENCY_KEY_PARAMETER } from './components.js';
import type { OperationDoc } from './document.js';

/**
 * What each /api/v1 route says about itself beyond its request schema (routes pass these as
 * `config.openapi`). The request side is taken from the route schemas; see document.ts.
 */

export const CREATE_ORDER: OperationDoc = {
  operationId: 'createOrder',
  summary: 'Create an order',
  description:
    'Prices the order afresh, reserves the amount on the balance of the key’s mode and queues the order for fulfilment. ' +
    'Answers 201 with the order in `fulfillment_pending`. Retrying with the same `Idempotency-Key` and body answers 201 with the same order ' +
    '(in its current state) and `Idempotent-Replayed: true`. Then poll GET /orders/{id} every 5–15 s (test orders settle within about 2 s).',
  tag: 'Orders',
  requestBody: {
    name: 'CreateOrderRequest',
    description: '`quantity`: stars 50–10000, premium 3, 6 or 12 (months). `external_id` is optional: your own order number, echoed back.',
    examples: {
      stars: { summary: '50 Stars', value: EXAMPLES.createOrderRequest },
      premium: { summary: '3 months of Premium', value: EXAMPLES.createPremiumRequest },
    },
  },
  headers: [IDEMPOTENCY_KEY_PARAMETER],
  success: {
    status: 201,
    description: 'The order was created, or (with `Idempotent-Replayed: true`) an earlier request with this key created it.',
    schema: 'Order',
    headers: ['Idempotent-Replayed'],
    examples: { created: { summary: 'A new order', value: EXAMPLES.orderCreated } },
  },
  errors: [
    'idempotency_key_required',
    'idempotency_key_invalid',
    'invalid_product',
    'recipient_invalid',
    'invalid_quantity',
    'invalid_external_id',
    'idempotency_conflict',
    'idempotency_key_in_use',
    'live_unavailable',
    'price_unavailable',
    'insufficient_balance',
  ],
};

export const GET_ORDER: OperationDoc = {
  operationId: 'getOrder',
  summary: 'Retrieve an order',
  description:
    'The order in its current state with its `events`, oldest first. Poll it until `status` is `delivered` or `failed` (both final): ' +
    'every 5–15 s for live orders; test orders settle within about 2 s.',
  tag: 'Orders',
  success: {
    status: 200,
    description: 'The order and its history.',
    schema: 'OrderWithEvents',
    examples: {
      delivered: { summary: 'A delivered order', value: EXAMPLES.orderDelivered },
      failed: { summary: 'A failed order (test recipient @test_failed)', value: EXAMPLES.orderFailed },
    },
  },
  errors: ['order_not_found'],
};

export const VALIDATE_RECIPIENT: OperationDoc = {
  operationId: 'validateRecipient',
  summary: 'Check a recipient',
  description:
    'Answers 200 only when the username exists and can receive the product; otherwise 400 `recipient_invalid`. Nothing is reserved or charged. ' +
    'In test mode `@test_invalid` is invalid and every other well-formed username is eligible.',
  tag: 'Recipients',
  requestBody: {
    name: 'ValidateRecipientRequest',
    description: 'The same product and quantity rules as POST /orders.',
    examples: { stars: { summary: '50 Stars for @durov', value: EXAMPLES.validateRequest } },
  },
  success: {
    status: 200,
    description: 'The recipient can receive the product.',
    schema: 'RecipientValidation',
    examples: { eligible: { value: EXAMPLES.recipient } },
  },
  errors: ['invalid_product', 'recipient_invalid', 'invalid_quantity', 'live_unavailable'],
};

export const GET_QUOTE: OperationDoc = {
  operationId: 'getQuote',
  summary: 'Get a price',
  description:
    'What an order would cost now, valid until `expires_at`. Orders are priced afresh at creation, so the amount charged may differ slightly. ' +
    '`quantity` must be digits only (`50`, not `50.0` or `+50`).',
  tag: 'Pricing',
  success: {
    status: 200,
    description: 'The current price.',
    schema: 'Quote',
    examples: { stars: { summary: '50 Stars', value: EXAMPLES.quote } },
  },
  errors: ['invalid_product', 'invalid_quantity', 'price_unavailable'],
};

export const GET_BALANCE: OperationDoc = {
  operationId: 'getBalance',
  summary: 'Retrieve the balance',
  description:
    '`balance.value` is what can be spent now; `balance.reserved` is the sum of orders not yet final. Both are for the key’s mode (`mode`).',
  tag: 'Balance',
  success: {
    status: 200,
    description: 'The balance of the key’s mode.',
    schema: 'Balance',
    examples: { test: { summary: 'A test balance', value: EXAMPLES.balance } },
  },
  errors: [],
};

export const LIST_DEPOSITS: OperationDoc = {
  operationId: 'listDeposits',
  summary: 'List deposits',
  description:
    'The TON transfers credited to your live balance, newest first. Cursor pagination: `limit` (1–100, default 20) and `starting_after` ' +
    '(the last `id` of the previous page); `has_more` says whether there are more. Live keys only. A transfer that could not be matched to ' +
    'your account (no or mistyped memo, below the minimum) appears here once the operator has assigned it to you.',
  tag: 'Deposits',
  success: {
    status: 200,
    description: 'A page of deposits.',
    schema: 'DepositList',
    examples: { page: { summary: 'One deposit', value: EXAMPLES.depositList } },
  },
  errors: ['live_key_required'],
};

export const GET_DEPOSIT_ADDRESS: OperationDoc = {
  operationId: 'getDepositAddress',
  summary: 'Get the deposit address',
  description:
    'Where to send TON to top up your live balance: the service wallet `address` and your personal `memo`, which must be the transfer’s ' +
    'comment (it is the same for every top-up). `transfer_link` is a `ton://transfer` link wallet apps open. Live keys only; ' +
    '503 `live_unavailable` while live top-ups are not configured.',
  tag: 'Deposits',
  success: {
    status: 200,
    description: 'The deposit address and your memo.',
    schema: 'DepositAddress',
    examples: { address: { value: EXAMPLES.depositAddress } },
  },
  errors: ['live_key_required', 'live_unavailable'],
};
