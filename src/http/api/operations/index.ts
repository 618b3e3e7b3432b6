import type { FastifyInstance } from 'fastify';
import type { ApiContext } from '../context.js';
import { getBalance } from './balance/get-balance.js';
import { listBalanceHistory } from './balance/list-balance-history.js';
import { getDepositAddress } from './deposits/get-deposit-address.js';
import { listDeposits } from './deposits/list-deposits.js';
import { createOrder } from './orders/create-order.js';
import { getOrder } from './orders/get-order.js';
import { listOrders } from './orders/list-orders.js';
import { getPrices } from './prices/get-prices.js';
import { getQuote } from './quotes/get-quote.js';
import { validateRecipient } from './recipients/validate-recipient.js';
import { getStatement } from './statements/get-statement.js';
import { fundTestBalance } from './test-helpers/fund-test-balance.js';
import { createWebhookEndpoint } from './webhooks/create-webhook-endpoint.js';
import { deleteWebhookEndpoint } from './webhooks/delete-webhook-endpoint.js';
import { listWebhookEndpoints } from './webhooks/list-webhook-endpoints.js';
import { rotateWebhookSecret } from './webhooks/rotate-webhook-secret.js';

/**
 * Every /api/v1 operation, one file each (`<resource>/<operation>.ts`: request schema, answer
 * schema, OpenAPI text, handler). The order is the OpenAPI document's order of paths and tags.
 */
const OPERATIONS = [
  createOrder,
  listOrders,
  getOrder,
  validateRecipient,
  getQuote,
  getPrices,
  getBalance,
  listBalanceHistory,
  getStatement,
  listDeposits,
  getDepositAddress,
  createWebhookEndpoint,
  listWebhookEndpoints,
  deleteWebhookEndpoint,
  rotateWebhookSecret,
  fundTestBalance,
];

export function apiOperations(app: FastifyInstance, ctx: ApiContext): void {
  for (const operation of OPERATIONS) operation(app, ctx);
}
