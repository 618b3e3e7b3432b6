import { type Address, Cell, loadTransaction, type Transaction } from '@ton/core';
import { isWellFormedMemo, normalizeMemo } from '../accounts/deposit-memo.js';

/**
 * What one transaction of the deposit wallet means for the ledger (docs/upstreams.md "Deposit transactions"),
 * decided from its BOC (toncenter v2's JSON has no bounced flag and no phase results):
 *
 * - `ignore`: not money that arrived and stayed — external-in (our own outgoing orders),
 *   bounced (our payouts coming back), aborted or failed compute/action phases (the coins went
 *   back), anything with out messages, another destination.
 * - `deposit`: TON that arrived with the amount and the comment, for memo matching.
 */
export type Verdict =
  | { kind: 'ignore'; why: string }
  | { kind: 'deposit'; sender: Address; amount: bigint; comment: string | null };

export interface ChainTransaction {
  tx: Transaction;
  /** Lowercase hex. */
  hash: string;
  lt: bigint;
  /** Block time, unix seconds. */
  utime: number;
}

/** Decodes a toncenter `data` field (base64 BOC of the whole transaction). */
export function decodeTransaction(boc: string): ChainTransaction {
  const tx = loadTransaction(Cell.fromBase64(boc).beginParse());
  return { tx, hash: tx.hash().toString('hex'), lt: tx.lt, utime: tx.now };
}

export function classify(tx: Transaction, wallet: Address): Verdict {
  const message = tx.inMessage;
  if (!message) return { kind: 'ignore', why: 'no inbound message (tick-tock)' };
  const info = message.info;
  if (info.type !== 'internal') return { kind: 'ignore', why: `${info.type} inbound message` };
  if (info.bounced) return { kind: 'ignore', why: 'bounced message (a payout of ours returning)' };
  if (!info.dest.equals(wallet)) return { kind: 'ignore', why: 'addressed to another account' };
  const d = tx.description;
  if (d.type !== 'generic') return { kind: 'ignore', why: `${d.type} transaction` };
  if (d.aborted) return { kind: 'ignore', why: 'aborted' };
  if (d.computePhase.type !== 'vm' || !d.computePhase.success) return { kind: 'ignore', why: 'compute phase skipped or failed' };
  if (d.actionPhase && !d.actionPhase.success) return { kind: 'ignore', why: 'action phase failed' };
  if (tx.outMessagesCount !== 0) return { kind: 'ignore', why: 'has outgoing messages' };
  return { kind: 'deposit', sender: info.src, amount: info.value.coins, comment: textComment(message.body) };
}

/**
 * The text comment of a message body: op 0 then a snake string, read whole across cells
 * (`loadStringTail`). Null for an empty body, another op (encrypted comments, contract
 * payloads) or a malformed tail.
 */
export function textComment(body: Cell): string | null {
  try {
    const slice = body.beginParse();
    if (slice.remainingBits < 32 || slice.loadUint(32) !== 0) return null;
    return slice.loadStringTail();
  } catch {
    return null;
  }
}

export type MemoCheck = { ok: true; memo: string } | { ok: false; reason: 'no_comment' | 'memo_invalid' };

/** Exact memo matching after trim + case-fold; a bad shape or check character is `memo_invalid`. */
export function memoOf(comment: string | null): MemoCheck {
  if (comment === null || comment.trim() === '') return { ok: false, reason: 'no_comment' };
  const memo = normalizeMemo(comment);
  return isWellFormedMemo(memo) ? { ok: true, memo } : { ok: false, reason: 'memo_invalid' };
}
