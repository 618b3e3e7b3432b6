import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Address, beginCell, type Cell, comment, contractAddress, toNano } from '@ton/core';
import { compileFunc } from '@ton-community/func-js';
import type { FakeToncenter } from './fake-toncenter.js';

/**
 * A TEP-74 jetton in the fake toncenter's emulator: the master and wallet in ./jetton/*.fc
 * (reduced to minting, transfers, notifications and the get-methods), compiled with func-js on
 * first use. Real contracts: the master answers get_wallet_address, the jetton wallet's
 * address follows from its code and owner, notifications come from that address after its
 * internal_transfer succeeded.
 */
const SOURCES = fileURLToPath(new URL('./jetton/', import.meta.url));
let compiled: Promise<{ master: Cell; wallet: Cell }> | undefined;

async function compile(target: string): Promise<Cell> {
  const result = await compileFunc({ targets: [target], sources: (path: string) => fs.readFileSync(`${SOURCES}${path}`, 'utf8') });
  if (result.status === 'error') throw new Error(`FunC ${target}: ${result.message}`);
  const { Cell } = await import('@ton/core');
  return Cell.fromBase64(result.codeBoc);
}

export function jettonCode(): Promise<{ master: Cell; wallet: Cell }> {
  compiled ??= (async () => ({ master: await compile('master.fc'), wallet: await compile('wallet.fc') }))();
  return compiled;
}

export interface TestJetton {
  master: Address;
  /** The sandbox treasury that deployed it and may mint. */
  admin: string;
  walletOf(owner: Address): Address;
}

/** TEP-64 off-chain metadata pointing at `uri`: a fake jetton copies USDT's. */
export function metadata(uri: string): Cell {
  return beginCell().storeUint(1, 8).storeStringTail(uri).endCell();
}

/** Deploys a master whose admin is the treasury `admin`; `content` is its metadata. */
export async function deployJetton(fake: FakeToncenter, admin: string, content: Cell): Promise<TestJetton> {
  const code = await jettonCode();
  const treasury = await fake.blockchain.treasury(admin, { balance: toNano('1000000') });
  const data = beginCell().storeCoins(0).storeAddress(treasury.address).storeRef(content).storeRef(code.wallet).endCell();
  const init = { code: code.master, data };
  const master = contractAddress(0, init);
  fake.record(await treasury.send({ to: master, value: toNano('1'), init, bounce: false }));
  const walletOf = (owner: Address) => {
    const walletData = beginCell().storeCoins(0).storeAddress(owner).storeAddress(master).storeRef(code.wallet).endCell();
    return contractAddress(0, { code: code.wallet, data: walletData });
  };
  return { master, admin, walletOf };
}

/** forward_payload: a text comment as a reference (Either bit 1), or empty (bit 0). */
function forwardPayload(text: string | undefined, inline = false) {
  if (text === undefined) return beginCell().storeBit(0);
  return inline ? beginCell().storeBit(0).storeSlice(comment(text).beginParse()) : beginCell().storeBit(1).storeRef(comment(text));
}

/** Mints `amount` units to `to`'s jetton wallet (deploying it). */
export async function mint(
  fake: FakeToncenter,
  jetton: TestJetton,
  to: Address,
  amount: bigint,
  options: { forwardTon?: bigint; text?: string; from?: Address } = {},
): Promise<void> {
  const treasury = await fake.blockchain.treasury(jetton.admin);
  const transfer = beginCell()
    .storeUint(0x178d4519, 32)
    .storeUint(0, 64)
    .storeCoins(amount)
    .storeAddress(options.from ?? treasury.address)
    .storeAddress(null)
    .storeCoins(options.forwardTon ?? 0n)
    .storeBuilder(forwardPayload(options.text))
    .endCell();
  const body = beginCell().storeUint(21, 32).storeUint(0, 64).storeAddress(to).storeCoins(toNano('0.2')).storeRef(transfer).endCell();
  fake.record(await treasury.send({ to: jetton.master, value: toNano('0.5'), body, bounce: true }));
}

/**
 * A client (sandbox treasury `client`) holding tokens sends `amount` to `to` the way wallet apps
 * do: a `transfer` to its own jetton wallet, with `forwardTon` (1 nanoton by default, what
 * wallets attach to a comment) and the memo as a text comment in the forward payload.
 */
export async function sendJetton(
  fake: FakeToncenter,
  jetton: TestJetton,
  input: { client: string; to: Address; amount: bigint; text?: string; forwardTon?: bigint; inlinePayload?: boolean; value?: bigint },
): Promise<void> {
  const sender = await fake.blockchain.treasury(input.client, { balance: toNano('1000000') });
  const body = beginCell()
    .storeUint(0x0f8a7ea5, 32)
    .storeUint(0, 64)
    .storeCoins(input.amount)
    .storeAddress(input.to)
    .storeAddress(sender.address)
    .storeBit(0)
    .storeCoins(input.forwardTon ?? 1n)
    .storeBuilder(forwardPayload(input.text, input.inlinePayload))
    .endCell();
  fake.record(await sender.send({ to: jetton.walletOf(sender.address), value: input.value ?? toNano('0.1'), body, bounce: true }));
}

/** Tokens for `client` (minted without notification), ready for sendJetton. */
export async function fund(fake: FakeToncenter, jetton: TestJetton, client: string, amount: bigint): Promise<void> {
  const sender = await fake.blockchain.treasury(client, { balance: toNano('1000000') });
  await mint(fake, jetton, sender.address, amount);
}

/** A transfer_notification body as TEP-74 lays it out (for messages forged by hand). */
export function notificationBody(amount: bigint, from: Address, text?: string): Cell {
  return beginCell().storeUint(0x7362d09c, 32).storeUint(0, 64).storeCoins(amount).storeAddress(from).storeBuilder(forwardPayload(text)).endCell();
}
