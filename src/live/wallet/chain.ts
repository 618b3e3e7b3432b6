import { type Address, Cell, loadTransaction } from '@ton/core';
import { normalizedMessageHash } from '../../ton/message-hash.js';
import type { ToncenterClient } from '../../ton/toncenter.js';

/** The paying wallet's account as the chain shows it. */
export interface WalletAccountState {
  active: boolean;
  balance: bigint;
  /** The seqno the wallet expects next (0 while not deployed). */
  seqno: number;
}

/** One out message of a confirmed transaction: what an order's payment is checked against. */
interface OutMessage {
  /** Raw form (0:hex). */
  destination: string;
  value: bigint;
  /** Hex. */
  bodyHash: string;
}

export interface FoundTransaction {
  /** Hex. */
  hash: string;
  lt: string;
  outMessages: OutMessage[];
}

/** Reads the paying wallet on chain through toncenter v2 (our client; `data` is decoded locally). */
export class WalletChain {
  constructor(
    private readonly client: ToncenterClient,
    readonly address: Address,
  ) {}

  /** Broadcasts an external message (base64 BOC) through toncenter's sendBoc. */
  async broadcast(boc: string): Promise<void> {
    await this.client.sendBoc(boc);
  }

  async state(): Promise<WalletAccountState> {
    const address = this.address.toString();
    const info = await this.client.getAddressInformation(address);
    const active = info.state === 'active';
    const balance = BigInt(info.balance);
    if (!active) return { active, balance, seqno: 0 };
    const result = await this.client.runGetMethod(address, 'seqno');
    if (result.exit_code !== 0) throw new Error(`the wallet's seqno get-method failed (exit code ${result.exit_code})`);
    const [type, value] = result.stack[0] ?? [];
    if (type !== 'num') throw new Error('the wallet answered seqno without a number');
    return { active, balance, seqno: Number(BigInt(String(value))) };
  }

  /**
   * The wallet's transaction whose incoming external message has normalized hash `hash`
   * (hex), searched newest first down to `sinceUnix` (a message cannot land before it was
   * signed) or `maxPages` pages.
   */
  async findByHash(hash: string, sinceUnix: number, maxPages = 5): Promise<FoundTransaction | undefined> {
    const address = this.address.toString();
    let cursor: { lt: string; hash: string } | undefined;
    for (let page = 0; page < maxPages; page++) {
      const rows = await this.client.getTransactions(address, { limit: 30, ...(cursor ?? {}) });
      for (const row of rows) {
        if (cursor && row.transaction_id.lt === cursor.lt) continue;
        const tx = loadTransaction(Cell.fromBase64(row.data).beginParse());
        const inMessage = tx.inMessage;
        if (inMessage?.info.type === 'external-in' && normalizedMessageHash(inMessage).toString('hex') === hash) {
          return {
            hash: tx.hash().toString('hex'),
            lt: tx.lt.toString(),
            outMessages: tx.outMessages
              .values()
              .flatMap((m) => (m.info.type === 'internal' ? [{ destination: m.info.dest.toRawString(), value: m.info.value.coins, bodyHash: m.body.hash().toString('hex') }] : [])),
          };
        }
        if (tx.now < sinceUnix) return undefined;
      }
      const last = rows.at(-1);
      if (!last || rows.length < 2 || (cursor && last.transaction_id.lt === cursor.lt)) return undefined;
      cursor = { lt: last.transaction_id.lt, hash: last.transaction_id.hash };
    }
    return undefined;
  }
}
