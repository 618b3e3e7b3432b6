import { Address, type Cell } from '@ton/core';
import { toNano } from '@ton/core';
import { SigningWallet } from '../../src/live/wallet/signing-wallet.js';
import { type FakeFragment, FRAGMENT_ADDRESS } from '../support/fragment/fake-fragment.js';
import { transfer } from '../support/ton/chain.js';
import type { FakeToncenter } from '../support/ton/fake-toncenter.js';

/** The paying wallet of a test, funded on the fake toncenter's chain (not deployed yet). */
export async function fundedWallet(ton: FakeToncenter, mnemonic: string, fund = '1000'): Promise<SigningWallet> {
  const wallet = await SigningWallet.fromMnemonic(mnemonic.split(' '), 'v5r1');
  await transfer(ton, { to: wallet.address, value: toNano(fund), bounce: false, from: `funder-${wallet.address.toRawString().slice(2, 10)}` });
  return wallet;
}

export interface ChainPayment {
  txHash: string;
  ref: string;
  value: bigint;
  body: Cell;
  bounce: boolean;
}

/**
 * Every payment our wallet made to Fragment's address on the emulated chain, as executed. Each
 * one is reported once to the fake Fragment (recordPayment), which counts payments per Ref.
 */
export function chainPayments(ton: FakeToncenter, fragment: FakeFragment, wallet: Address, seen: Set<string>): ChainPayment[] {
  const fragmentAddress = Address.parse(FRAGMENT_ADDRESS);
  const payments: ChainPayment[] = [];
  for (const tx of ton.transactionsOf(wallet)) {
    const txHash = tx.hash().toString('hex');
    for (const message of tx.outMessages.values()) {
      if (message.info.type !== 'internal' || !message.info.dest.equals(fragmentAddress)) continue;
      const payload = message.body.toBoc().toString('base64url');
      const key = `${txHash}:${message.body.hash().toString('hex')}`;
      const ref = seen.has(key) ? (/Ref#(\w+)/.exec(commentText(message.body))?.[1] ?? '') : fragment.recordPayment(payload);
      seen.add(key);
      payments.push({ txHash, ref, value: message.info.value.coins, body: message.body, bounce: message.info.bounce });
    }
  }
  return payments;
}

export function commentText(body: Cell): string {
  const slice = body.beginParse();
  slice.loadUint(32);
  return slice.loadStringTail();
}
