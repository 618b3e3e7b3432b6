import { createHash } from 'node:crypto';
import { type Address, beginCell, type Cell, comment, internal, toNano } from '@ton/core';
import { keyPairFromSeed } from '@ton/crypto';
import { WalletContractV4 } from '@ton/ton';
import type { SandboxContract } from '@ton/sandbox';
import type { FakeToncenter } from './fake-toncenter.js';

/**
 * Real wallets and transfers in the fake toncenter's emulator. Every helper records the
 * resulting transactions in the fake, so getTransactions serves them.
 */
export interface TestWallet {
  address: Address;
  contract: SandboxContract<WalletContractV4>;
  secretKey: Buffer;
  seqno: number;
}

/** A deployed (active) V4R2 wallet holding `fund` TON, keyed from `seed`. */
export async function deployWallet(fake: FakeToncenter, seed: string, fund = '10'): Promise<TestWallet> {
  const keys = keyPairFromSeed(createHash('sha256').update(seed).digest());
  const contract = fake.blockchain.openContract(WalletContractV4.create({ workchain: 0, publicKey: keys.publicKey }));
  const treasury = await fake.blockchain.treasury('funder');
  fake.record(await treasury.send({ to: contract.address, value: toNano(fund), bounce: false }));
  const wallet: TestWallet = { address: contract.address, contract, secretKey: keys.secretKey, seqno: 0 };
  await walletSend(fake, wallet, []);
  return wallet;
}

/** An external order from `wallet` (external-in on its account, plus out messages). */
export async function walletSend(fake: FakeToncenter, wallet: TestWallet, messages: { to: Address; value: bigint; bounce?: boolean; body?: Cell | string }[]): Promise<void> {
  fake.record(
    await wallet.contract.sendTransfer({
      seqno: wallet.seqno++,
      secretKey: wallet.secretKey,
      messages: messages.map((m) => internal({ to: m.to, value: m.value, bounce: m.bounce ?? false, body: m.body })),
    }),
  );
}

/** A transfer from a sandbox treasury (a sender's wallet) to `to`. */
export async function transfer(fake: FakeToncenter, input: { to: Address; value: bigint; text?: string; body?: Cell; bounce?: boolean; from?: string }): Promise<void> {
  const sender = await fake.blockchain.treasury(input.from ?? 'client', { balance: toNano('1000000') });
  const body = input.body ?? (input.text !== undefined ? comment(input.text) : undefined);
  fake.record(await sender.send({ to: input.to, value: input.value, bounce: input.bounce ?? false, body }));
}

/** A comment cell whose root holds `first` and whose single ref holds `second` (a snake string split by hand). */
export function twoCellComment(first: string, second: string): Cell {
  const tail = beginCell().storeBuffer(Buffer.from(second, 'utf8')).endCell();
  return beginCell().storeUint(0, 32).storeBuffer(Buffer.from(first, 'utf8')).storeRef(tail).endCell();
}
