import { EXAMPLES } from './components.js';
import type { OperationDoc } from './document.js';

/**
 * What each /api/v1 route says about itself beyond its request schema (routes pass these as
 * `config.openapi`). The request side is taken from the route schemas; see document.ts.
 */

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
    'Answers 200 only when the username exists and can receive the product; otherwise 400 `recipient_invalid`, whose `details.reason` says why ' +
    '(`not_found`, `not_a_user`, `already_premium`, `not_eligible`). Nothing is reserved or charged. ' +
    'In test mode `@test_invalid` and `@test_not_found` are not found, `@test_not_a_user`, `@test_already_premium` (premium only) and `@test_not_eligible` are refused for that reason, ' +
    'and every other well-formed username is eligible.',
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

export const GET_BALANCE: OperationDoc = {
  operationId: 'getBalance',
  summary: 'Retrieve the balance',
  description: '`balance.value` is what can be spent now; `balance.reserved` is the sum of orders not yet final. Both are for the key’s mode (`mode`).',
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

const WEBHOOK_EXAMPLE = {
  id: 'we_3kP9sQ2wE5rT8yU1iOpZxC',
  url: 'https://example.com/webhooks/starport',
  events: ['*'],
  mode: 'test',
  status: 'enabled',
  disabled_reason: null,
  created_at: '2026-11-25T21:30:00.123Z',
} as const;
const WEBHOOK_SECRET_EXAMPLE = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw1cSXm2ryq0U=';

export const CREATE_WEBHOOK_ENDPOINT: OperationDoc = {
  operationId: 'createWebhookEndpoint',
  summary: 'Add a webhook endpoint',
  description:
    'Events of the key’s mode are POSTed to `url`, signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`). ' +
    'The answer carries the signing `secret`: it is shown only here (and on rotation). Live endpoints must be https:// and resolve to public addresses ' +
    '(a host name within 5 seconds); at most 16 endpoints per mode. At most 2 deliveries are in flight to one endpoint at a time.',
  tag: 'Webhooks',
  requestBody: {
    name: 'CreateWebhookEndpointRequest',
    description: '`events` defaults to `["*"]` (every order event).',
    examples: {
      all: { summary: 'Every event', value: { url: 'https://example.com/webhooks/starport' } },
      final: { summary: 'Final states only', value: { url: 'https://example.com/webhooks/starport', events: ['order.delivered', 'order.failed'] } },
    },
  },
  success: {
    status: 201,
    description: 'The endpoint, with its secret (shown once).',
    schema: 'WebhookEndpointWithSecret',
    examples: { created: { value: { ok: true, ...WEBHOOK_EXAMPLE, secret: WEBHOOK_SECRET_EXAMPLE } } },
  },
  errors: ['invalid_url', 'invalid_events', 'webhook_endpoint_limit'],
};

export const LIST_WEBHOOK_ENDPOINTS: OperationDoc = {
  operationId: 'listWebhookEndpoints',
  summary: 'List webhook endpoints',
  description:
    'All the endpoints of the key’s mode, oldest first, shaped like the other lists; `has_more` is always `false` (at most 16 endpoints per mode). Secrets are never listed.',
  tag: 'Webhooks',
  success: {
    status: 200,
    description: 'The endpoints.',
    schema: 'WebhookEndpointList',
    examples: { one: { value: { ok: true, object: 'list', data: [WEBHOOK_EXAMPLE], has_more: false } } },
  },
  errors: [],
};

export const DELETE_WEBHOOK_ENDPOINT: OperationDoc = {
  operationId: 'deleteWebhookEndpoint',
  summary: 'Delete a webhook endpoint',
  description: 'Stops deliveries at once: the endpoint, its undelivered messages and its delivery log are deleted.',
  tag: 'Webhooks',
  success: {
    status: 200,
    description: 'Deleted.',
    schema: 'WebhookEndpointDeleted',
    examples: { deleted: { value: { ok: true, id: WEBHOOK_EXAMPLE.id, deleted: true } } },
  },
  errors: ['webhook_endpoint_not_found'],
};

export const ROTATE_WEBHOOK_SECRET: OperationDoc = {
  operationId: 'rotateWebhookEndpointSecret',
  summary: 'Rotate a webhook signing secret',
  description:
    'Issues a new secret (shown only in this answer). For 24 hours deliveries carry two signatures, one with the new secret and one with the old, ' +
    'so receivers can switch without rejecting anything; rotating again ends the older secret at once. Rotations sent together apply one after the other. ' +
    'Send `{}` as the body.',
  tag: 'Webhooks',
  requestBody: { name: 'RotateWebhookSecretRequest', description: 'No fields: `{}`.', examples: { empty: { value: {} } } },
  success: {
    status: 200,
    description: 'The endpoint with its new secret.',
    schema: 'WebhookEndpointWithSecret',
    examples: { rotated: { value: { ok: true, ...WEBHOOK_EXAMPLE, secret: WEBHOOK_SECRET_EXAMPLE } } },
  },
  errors: ['webhook_endpoint_not_found'],
};

const PAGINATION =
  'Cursor pagination: `limit` 1–100 (default 20, digits only); `starting_after=<id of the last item>` gives the next (older) page, `ending_before=<id of the first item>` the previous (newer) one; ' +
  '`has_more` says whether more items follow in that direction. An id that is not an item of this list is 400 `invalid_request` (`param` names the cursor). ';

export const LIST_ORDERS: OperationDoc = {
  operationId: 'listOrders',
  summary: 'List orders',
  description:
    'The orders of the key’s account and mode, newest first (ties broken by id), without `events`. ' +
    PAGINATION +
    'Paging with `starting_after` never skips or repeats an order, even while new orders are created. ' +
    'Filters combine: `status`, `external_id` (exact), `created[gte]` (inclusive) and `created[lt]` (exclusive), each an RFC 3339 timestamp or Unix seconds.',
  tag: 'Orders',
  success: { status: 200, description: 'A page of orders.', schema: 'OrderList', examples: { page: { value: EXAMPLES.orderList } } },
  errors: [],
};

export const LIST_BALANCE_HISTORY: OperationDoc = {
  operationId: 'listBalanceHistory',
  summary: 'List balance history',
  description:
    'Every movement of the balance of the key’s mode, newest first: deposits, reserves (order created), debits (delivered), releases (failed) and adjustments, ' +
    'each with its signed `amount` (change of `balance.value`), `reserved_change` and the balance after it. ' +
    PAGINATION,
  tag: 'Balance',
  success: { status: 200, description: 'A page of balance history.', schema: 'BalanceHistory', examples: { page: { value: EXAMPLES.balanceHistory } } },
  errors: [],
};

export const FUND_TEST_BALANCE: OperationDoc = {
  operationId: 'fundTestBalance',
  summary: 'Fund the test balance',
  description:
    'Test keys only: credits `amount` TON to the test balance (a `deposit` in balance history whose reference is this request’s id), so your CI can fund its sandbox. ' +
    'A live key is refused with 403 `test_key_required` before the body is read. `amount`: a decimal string, more than 0, at most 1000000 per call; a test balance holds at most 1000000000 TON. ' +
    'Not idempotent: each call credits again.',
  tag: 'Test helpers',
  requestBody: {
    name: 'FundTestBalanceRequest',
    description: '`amount`: TON as a decimal string.',
    examples: { hundred: { summary: '100 TON', value: EXAMPLES.fundRequest } },
  },
  success: { status: 200, description: 'The test balance was credited.', schema: 'TestFunding', examples: { funded: { value: EXAMPLES.testFunding } } },
  errors: ['test_key_required'],
};
