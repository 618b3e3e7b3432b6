import { type Address, Cell, loadTransaction, type Slice, type Transaction } from '@ton/core';
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
  | { kind: 'deposit'; sender: Address; amount: bigint; comment: string | null }
  | { kind: 'jetton'; notification: JettonNotification };

/**
 * A TEP-74 `transfer_notification` (op 0x7362d09c) that reached the deposit wallet: `source`
 * is the jetton wallet that sent it (only the deposit wallet's own USDT jetton wallet is
 * believed), `sender` the owner who sent the tokens, `jettonAmount` in the token's units,
 * `value` the TON the notification carried.
 */
interface JettonNotification {
  source: Address;
  sender: Address | null;
  jettonAmount: bigint;
  value: bigint;
  comment: string | null;
}

const OP_TRANSFER_NOTIFICATION = 0x7362d09c;

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
  // A jetton notification counts whatever became of the deposit wallet's own transaction: the
  // tokens moved in the jetton wallet's transaction, which had to succeed for it to be sent
  // (wallets forward 1 nanoton, too little for the deposit wallet's compute phase, so that
  // transaction is often aborted). Who sent it decides (watcher.ts).
  const notification = jettonNotification(message.body, info.src, info.value.coins);
  if (notification) return { kind: 'jetton', notification };
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

/**
 * Reads `transfer_notification#7362d09c query_id:uint64 amount:Coins sender:MsgAddress
 * forward_payload:(Either Cell ^Cell)`; the comment is a text comment in the forward payload.
 * Undefined when the body is not one (another op, or malformed before the payload).
 */
function jettonNotification(body: Cell, source: Address, value: bigint): JettonNotification | undefined {
  let slice: Slice;
  let jettonAmount: bigint;
  let sender: Address | null;
  try {
    slice = body.beginParse();
    if (slice.remainingBits < 32 || slice.loadUint(32) !== OP_TRANSFER_NOTIFICATION) return undefined;
    slice.loadUintBig(64);
    jettonAmount = slice.loadCoins();
    sender = slice.loadMaybeAddress();
  } catch {
    return undefined;
  }
  let comment: string | null = null;
  try {
    if (slice.remainingBits >= 1) {
      const payload = slice.loadBit() ? slice.loadRef() : slice.asCell();
      comment = textComment(payload);
    }
  } catch {
    comment = null;
  }
  return { source, sender, jettonAmount, value, comment };
}

export type MemoCheck = { ok: true; memo: string } | { ok: false; reason: 'no_comment' | 'memo_invalid' };

/** Exact memo matching after trim + case-fold; a bad shape or check character is `memo_invalid`. */
export function memoOf(comment: string | null): MemoCheck {
  if (comment === null || comment.trim() === '') return { ok: false, reason: 'no_comment' };
  const memo = normalizeMemo(comment);
  return isWellFormedMemo(memo) ? { ok: true, memo } : { ok: false, reason: 'memo_invalid' };
}
