import type { Address } from '@ton/core';
import type { Decimal } from '../domain/decimal.js';
import { type ChainTransaction, classify, memoOf } from './classify.js';
import type { Processed, UsdtRate } from './store.js';

/**
 * What a transaction of the deposit wallet is as a deposit: nothing (ignored), a TON transfer,
 * a USDT transfer through the wallet's own jetton wallet, or another jetton's notification,
 * with its memo and why it cannot be matched (docs/operations.md "Live top-ups", "USDT
 * top-ups"). store.ts `recordTransaction` then records and credits it.
 */

export interface UsdtOptions {
  /** The USDT jetton master (USDT_MASTER). */
  master: string;
  /** USDT_DEPOSIT_MIN in units (6 decimals): smaller deposits are unmatched `below_minimum`. */
  minUnits: bigint;
  /** USDT_DEPOSIT_SPREAD_PERCENT. */
  spreadPercent: Decimal;
  /** The rate feed's TON/USD rate now, or undefined when there is no fresh one. */
  rate: () => Promise<UsdtRate | undefined>;
}

export interface DepositRules {
  /** The deposit wallet, and its raw form. */
  wallet: Address;
  rawAddress: string;
  /** Below this (nanotons) a transfer is recorded as unmatched `below_minimum`. */
  minAmount: bigint;
  /** USDT top-ups; absent: jetton notifications are TON that came without a comment. */
  usdt: UsdtOptions | undefined;
  /** The deposit wallet's USDT jetton wallet, once known (jetton-wallet.ts). */
  usdtWallet: Address | undefined;
}

export async function depositOf(chainTx: ChainTransaction, rules: DepositRules): Promise<Processed> {
  const position = { lt: chainTx.lt, hash: chainTx.hash, chainTime: chainTx.utime * 1000 };
  const verdict = classify(chainTx.tx, rules.wallet);
  if (verdict.kind === 'ignore') return { address: rules.rawAddress, position, deposit: null };
  if (verdict.kind === 'jetton') {
    const n = verdict.notification;
    const usdt = rules.usdt;
    // Without USDT top-ups configured a notification is what it was before: TON that arrived
    // without a text comment.
    if (!usdt || !rules.usdtWallet) {
      const reason = n.value < rules.minAmount ? 'below_minimum' : 'no_comment';
      return { address: rules.rawAddress, position, deposit: { sender: n.source.toRawString(), amount: n.value, comment: null, memo: null, reason } };
    }
    const sender = (n.sender ?? n.source).toRawString();
    if (!n.source.equals(rules.usdtWallet)) {
      return {
        address: rules.rawAddress,
        position,
        deposit: {
          sender,
          amount: n.value,
          comment: n.comment,
          memo: null,
          reason: null,
          jetton: { kind: 'jetton', units: n.jettonAmount, jettonWallet: n.source.toRawString() },
        },
      };
    }
    const memo = memoOf(n.comment);
    const reason = n.jettonAmount < usdt.minUnits ? 'below_minimum' : memo.ok ? null : memo.reason;
    // The rate is asked only for a deposit that can be credited, outside the database transaction.
    const rate = reason === null ? await usdt.rate() : undefined;
    return {
      address: rules.rawAddress,
      position,
      deposit: {
        sender,
        amount: 0n,
        comment: n.comment,
        memo: memo.ok ? memo.memo : null,
        reason,
        jetton: { kind: 'USDT', units: n.jettonAmount, jettonWallet: n.source.toRawString(), conversion: { rate, spreadPercent: usdt.spreadPercent } },
      },
    };
  }
  const memo = memoOf(verdict.comment);
  const reason = verdict.amount < rules.minAmount ? 'below_minimum' : memo.ok ? null : memo.reason;
  return {
    address: rules.rawAddress,
    position,
    deposit: { sender: verdict.sender.toRawString(), amount: verdict.amount, comment: verdict.comment, memo: memo.ok ? memo.memo : null, reason },
  };
}
