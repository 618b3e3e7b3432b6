import type { Kysely } from 'kysely';
import { recordAudit } from '../audit/audit.js';
import type { Database } from '../db/schema.js';
import { formatTon } from '../domain/money.js';
import { type Outcome, type Resolution, resolveOrder } from '../orders/admin.js';

/**
 * An operator's resolution of an order held for review, with its audit record (`order.resolve`)
 * in the transaction that moves the money: one function for `starport order resolve` and the
 * console's order page. Concurrent resolutions move the money once (resolveOrder); only the
 * one that changed the order is audited, the others get `changed: false` or a ResolveError.
 */
export interface ResolveInput {
  orderId: string;
  outcome: Outcome;
  reason: string;
  actor: string;
  force?: boolean;
  /** The console's person and address (source 'console'); absent for the CLI. */
  console?: { operatorId: string; ip: string };
}

export function operatorResolve(db: Kysely<Database>, input: ResolveInput, now = Date.now()): Promise<Resolution> {
  return resolveOrder(db, { orderId: input.orderId, outcome: input.outcome, force: input.force === true, now }, (tx, before) =>
    recordAudit(tx, {
      actor: input.actor,
      ...(input.console && { source: 'console' as const, operatorId: input.console.operatorId, ip: input.console.ip }),
      action: 'order.resolve',
      accountId: before.accountId,
      mode: before.mode,
      orderId: input.orderId,
      reason: input.reason,
      details: { from: before.status, to: input.outcome, amount: formatTon(before.amount), ...(input.force ? { force: true } : {}) },
      now,
    }),
  );
}
