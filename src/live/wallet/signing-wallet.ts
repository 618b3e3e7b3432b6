import { Address, beginCell, Cell, external, internal, SendMode, storeMessage } from '@ton/core';
import { mnemonicToPrivateKey } from '@ton/crypto';
import { WalletContractV4, WalletContractV5R1 } from '@ton/ton';
import { normalizedHash } from '../../ton/message-hash.js';

/** One internal message of a transfer: an order's payment exactly as Fragment asked for it. */
export interface OutgoingPayment {
  destination: string;
  amount: bigint;
  /** Fragment's payload BOC (base64url or base64), used as the message body unchanged. */
  payload: string;
}

export interface SignedMessage {
  /** The external message BOC, base64 (what sendBoc broadcasts). */
  boc: string;
  /** Normalized hash, hex. */
  hash: string;
  seqno: number;
  /** Unix seconds. */
  validUntil: number;
}

/** Parses Fragment's payload BOC into the body cell; the cell (hence its hash) is never altered. */
export function payloadCell(payload: string): Cell {
  return Cell.fromBase64(Buffer.from(payload, 'base64url').toString('base64'));
}

/**
 * The paying wallet: signs transfers with the key derived from WALLET_MNEMONIC. The secret key
 * lives only in this object's private field and is never logged, printed or stored: what
 * leaves is the signed message, public once broadcast.
 */
export class SigningWallet {
  private constructor(
    private readonly contract: WalletContractV5R1 | WalletContractV4,
    private readonly secretKey: Buffer,
    readonly version: 'v5r1' | 'v4',
  ) {}

  static async fromMnemonic(words: string[], version: 'v5r1' | 'v4'): Promise<SigningWallet> {
    const { publicKey, secretKey } = await mnemonicToPrivateKey(words);
    // The same contracts (workchain 0, default wallet id) as wallet-identity.ts tells Fragment.
    const contract = version === 'v5r1' ? WalletContractV5R1.create({ workchain: 0, publicKey }) : WalletContractV4.create({ workchain: 0, publicKey });
    return new SigningWallet(contract, secretKey, version);
  }

  get address(): Address {
    return this.contract.address;
  }

  /** Internal messages one external message may carry (V5R1 255, V4 4). */
  get maxMessages(): number {
    return this.version === 'v5r1' ? 255 : 4;
  }

  /**
   * Signs one external message paying `payments` (one internal message each): non-bounceable,
   * body = the payload cell, fees paid on top (PAY_GAS_SEPARATELY) so that Fragment receives
   * exactly its amount, IGNORE_ERRORS so one failing message cannot block the others. A wallet
   * not yet deployed (seqno 0, `deploy`) carries its StateInit.
   */
  sign(input: { seqno: number; validUntil: number; payments: OutgoingPayment[]; deploy: boolean }): SignedMessage {
    if (input.payments.length === 0 || input.payments.length > this.maxMessages) throw new RangeError(`a transfer carries 1–${this.maxMessages} messages`);
    const messages = input.payments.map((p) => internal({ to: Address.parse(p.destination), value: p.amount, bounce: false, body: payloadCell(p.payload) }));
    const args = { seqno: input.seqno, secretKey: this.secretKey, messages, sendMode: SendMode.PAY_GAS_SEPARATELY | SendMode.IGNORE_ERRORS, timeout: input.validUntil };
    const body = this.contract instanceof WalletContractV5R1 ? this.contract.createTransfer(args) : this.contract.createTransfer(args);
    const message = external({ to: this.contract.address, init: input.deploy ? this.contract.init : undefined, body });
    const cell = beginCell().store(storeMessage(message)).endCell();
    return { boc: cell.toBoc().toString('base64'), hash: normalizedHash(cell).toString('hex'), seqno: input.seqno, validUntil: input.validUntil };
  }
}
