import { loadConfig } from '../../config.js';
import { ORDER_STATUSES, type OrderStatus } from '../../domain/order-status.js';
import { listOrders, type OrderListQuery } from '../../orders/list-orders.js';
import { operatorResolve } from '../../operator/order-resolve.js';
import { orderDetails, type Outcome, ResolveError } from '../../orders/admin.js';
import type { Order } from '../../orders/order.js';
import { type Command, UsageError } from '../command.js';
import { withDatabase } from '../database.js';
import { ACTOR_HELP, actorOf, actorOption, limitOf, modeOf, operatorCommand, optionalWhen, positional, reasonOf, table, time, ton } from '../operator.js';

/** The order as the operator sees it: the client's fields plus account, mode and idempotency key. */
function orderJson(order: Order) {
  return {
    id: order.id,
    account_id: order.accountId,
    mode: order.mode,
    external_id: order.externalId,
    idempotency_key: order.idempotencyKey,
    product: order.product,
    recipient: `@${order.recipient}`,
    quantity: order.quantity,
    amount: { value: ton(order.amount), currency: 'TON' },
    status: order.status,
    failure_reason: order.failureReason,
    created_at: time(order.createdAt),
    updated_at: time(order.updatedAt),
  };
}

export const orderList: Command = operatorCommand({
  path: ['order', 'list'],
  summary: 'List orders of every account, newest first',
  usage:
    'starport order list [--account ACCOUNT_ID] [--mode live|test] [--status STATUS] [--since WHEN] [--until WHEN] [--limit N (50)] [--json]\n\n' +
    `STATUS: ${ORDER_STATUSES.join(', ')} (processing includes orders held for review).\n` +
    'WHEN: a UTC date (2026-01-31), an RFC 3339 time (2026-01-31T12:00:00Z), today, or a duration ago (30m, 24h, 7d); by creation time.',
  options: {
    account: { type: 'string' },
    mode: { type: 'string' },
    status: { type: 'string' },
    since: { type: 'string' },
    until: { type: 'string' },
    limit: { type: 'string' },
  },
  async run(values, io) {
    const now = Date.now();
    const status = values.status;
    if (status !== undefined && !(ORDER_STATUSES as readonly string[]).includes(status as string)) {
      throw new UsageError(`--status must be one of ${ORDER_STATUSES.join(', ')}, got "${String(status)}"`);
    }
    if (values.account !== undefined && (typeof values.account !== 'string' || values.account === '')) throw new UsageError('--account needs a value');
    const since = optionalWhen(values, 'since', now);
    const until = optionalWhen(values, 'until', now);
    const filter: OrderListQuery = {
      accountId: (values.account as string | undefined) ?? null,
      mode: modeOf(values, { optional: true }) ?? null,
      ...(status !== undefined && { status: status as OrderStatus }),
      ...(since !== undefined && { createdGte: since }),
      ...(until !== undefined && { createdLt: until }),
      limit: limitOf(values, 50),
    };
    const { orders } = await withDatabase((db) => listOrders(db.kysely, filter));
    io.result(
      { orders: orders.map(orderJson) },
      orders.length === 0
        ? 'no orders'
        : table(
            ['ORDER', 'ACCOUNT', 'MODE', 'STATUS', 'PRODUCT', 'QTY', 'AMOUNT TON', 'RECIPIENT', 'CREATED'],
            orders.map((o) => [
              o.id,
              o.accountId,
              o.mode,
              o.status + (o.failureReason ? ` (${o.failureReason})` : ''),
              o.product,
              o.quantity,
              ton(o.amount),
              `@${o.recipient}`,
              time(o.createdAt),
            ]),
          ),
    );
    return 0;
  },
});

export const orderShow: Command = operatorCommand({
  path: ['order', 'show'],
  summary: 'Show one order with its events, ledger journal entries, worker and upstream details',
  usage: 'starport order show ORDER_ID [--json]',
  options: {},
  positionals: ['order'],
  async run(values, io) {
    const orderId = positional(values, 'order', 'ORDER_ID');
    const feeAllowance = loadConfig().live.feeAllowance;
    const details = await withDatabase((db) => orderDetails(db.kysely, orderId, { feeAllowance }));
    if (!details) throw new ResolveError(`no order ${orderId}`);
    const document = {
      order: orderJson(details.order),
      events: details.events.map((e) => ({ id: e.id, seq: e.seq, type: e.type, status: e.status, created_at: time(e.createdAt), data: e.data })),
      journal: details.journal.map((j) => ({
        id: j.id,
        kind: j.kind,
        available_delta: ton(j.availableDelta),
        reserved_delta: ton(j.reservedDelta),
        reason: j.reason,
        created_at: time(j.createdAt),
      })),
      worker: {
        attempts: details.worker.attempts,
        next_run_at: time(details.worker.nextRunAt),
        lease_owner: details.worker.leaseOwner,
        lease_until: time(details.worker.leaseUntil),
      },
      upstream: details.upstream,
    };
    const o = document.order;
    const text = [
      `order ${o.id}  ${o.status}${o.failure_reason ? ` (${o.failure_reason})` : ''}`,
      `account ${o.account_id} (${o.mode})  ${o.product} × ${o.quantity} for ${o.recipient}  ${o.amount.value} TON`,
      `created ${o.created_at}  updated ${o.updated_at}  external_id ${o.external_id ?? '-'}  idempotency key ${o.idempotency_key}`,
      '',
      'events:',
      table(
        ['SEQ', 'TIME', 'TYPE', 'STATUS', 'DATA'],
        document.events.map((e) => [e.seq, e.created_at, e.type, e.status, JSON.stringify(e.data)]),
      ),
      '',
      'ledger journal:',
      table(
        ['TIME', 'KIND', 'AVAILABLE', 'RESERVED', 'ENTRY'],
        document.journal.map((j) => [j.created_at, j.kind, j.available_delta, j.reserved_delta, j.id]),
      ),
      '',
      `worker: ${document.worker.attempts} attempt(s), next run ${document.worker.next_run_at ?? '-'}, lease ${document.worker.lease_owner ?? '-'} until ${document.worker.lease_until ?? '-'}`,
      `upstream: ${document.upstream ? JSON.stringify(document.upstream) : 'none recorded'}`,
    ].join('\n');
    io.result(document, text);
    return 0;
  },
});

export const orderResolve: Command = operatorCommand({
  path: ['order', 'resolve'],
  summary: 'Resolve an order held for review (processing) by hand: delivered debits it, failed releases it',
  usage:
    'starport order resolve ORDER_ID --delivered|--failed --reason TEXT [--force] [--actor NAME] [--json]\n\n' +
    '--delivered: the recipient got it; the reserved amount is debited.\n' +
    '--failed: it will not be delivered; the amount goes back to the available balance (failure_reason operator_failed).\n' +
    'The client sees the order.delivered / order.failed event; the reason stays in the audit log.\n' +
    'Running it again changes nothing (exit 0, changed: false). An order a worker is working on right now is refused;\n' +
    'So is a live order whose signed wallet message may still land (bin/starport wallet status shows it); orders\n' +
    'held for review (their message is unconfirmable) are resolved normally.\n' +
    '--force resolves it anyway (only for a stuck worker: it may be paying the upstream at that moment).\n' +
    ACTOR_HELP,
  options: { delivered: { type: 'boolean' }, failed: { type: 'boolean' }, reason: { type: 'string' }, force: { type: 'boolean' }, ...actorOption },
  positionals: ['order'],
  async run(values, io) {
    const orderId = positional(values, 'order', 'ORDER_ID');
    if (values.delivered === values.failed) throw new UsageError('give exactly one of --delivered or --failed');
    const outcome: Outcome = values.delivered ? 'delivered' : 'failed';
    const reason = reasonOf(values);
    const actor = actorOf(values);
    const now = Date.now();
    const result = await withDatabase((db) => operatorResolve(db.kysely, { orderId, outcome, reason, actor, force: values.force === true }, now));
    const o = result.order;
    io.result(
      { order: orderJson(o), changed: result.changed },
      result.changed
        ? `order ${o.id} is now ${o.status}; ${ton(o.amount)} TON ${outcome === 'delivered' ? 'debited from the reserve' : 'released to the available balance'}`
        : `order ${o.id} was already ${o.status}; nothing changed`,
    );
    return 0;
  },
});
