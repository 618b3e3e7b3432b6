import { internal, SendMode, toNano } from '@ton/core';
import { mnemonicNew, mnemonicToPrivateKey } from '@ton/crypto';
import { WalletContractV5R1 } from '@ton/ton';
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { findPayment } from '../../src/live/live-payments.js';
import type { SigningWallet } from '../../src/live/wallet/signing-wallet.js';
import { fundedWallet } from '../live/wallet-support.js';
import { FAKE_SESSION, FakeFragment } from './fragment/fake-fragment.js';
import type { Harness } from './harness.js';
import { expectOk, pollUntil, postOrder } from './http.js';
import { FakeToncenter } from './ton/fake-toncenter.js';

/**
 * Live mode on the fakes: the fake Fragment (anyone exists) and the fake toncenter, whose
 * @ton/sandbox emulator executes what the service signs, with a funded V5R1 paying wallet.
 */
export interface LiveFakes {
  fragment: FakeFragment;
  ton: FakeToncenter;
  mnemonic: string;
  wallet: SigningWallet;
  /** The harness env for live mode on these fakes (startHarness({ ...fakes.env, … })). */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startLiveFakes(): Promise<LiveFakes> {
  const [fragment, ton] = await Promise.all([FakeFragment.start({ anyoneExists: true }), FakeToncenter.start()]);
  const mnemonic = (await mnemonicNew()).join(' ');
  const wallet = await fundedWallet(ton, mnemonic);
  return {
    fragment,
    ton,
    mnemonic,
    wallet,
    // Short message lifetimes and margins: a message that cannot land is judged in seconds.
    env: {
      FRAGMENT_BASE_URL: fragment.url,
      FRAGMENT_COOKIES: FAKE_SESSION,
      FRAGMENT_MAX_RPS: '1000',
      WALLET_MNEMONIC: mnemonic,
      TON_API_URL: ton.url,
      WALLET_POLL_MS: '100',
      WALLET_REBROADCAST_SECONDS: '1',
      WALLET_MESSAGE_TTL_SECONDS: '5',
      WALLET_CONFIRM_MARGIN_SECONDS: '1',
      LIVE_BREAKER_COOLDOWN_SECONDS: '1',
    },
    async close() {
      await Promise.all([fragment.close(), ton.close()]);
    },
  };
}

/** The paying wallet's messages for an order, oldest first, with the order's outcome on each. */
export function walletMessagesOf(db: Kysely<Database>, orderId: string) {
  return db
    .selectFrom('wallet_message_orders as l')
    .innerJoin('wallet_messages as m', 'm.hash', 'l.message_hash')
    .select(['m.hash', 'm.seqno', 'm.state', 'l.outcome'])
    .where('l.order_id', '=', orderId)
    .orderBy('m.created_at')
    .execute();
}

export interface HeldLiveOrder {
  orderId: string;
  /** The seqno of the order's message, spent by another message. */
  seqno: number;
  /** The fake Fragment's request id for the order's payment. */
  fragmentReqId: string;
}

/**
 * A live order held for review as the service holds one: posted through the API, bought on the
 * fake Fragment and signed, its broadcasts refused; meanwhile another message signed with the
 * wallet's key spends the same seqno (another tool using the wallet), so the seqno moved and our
 * message is nowhere. Resolves once the service has held it. `whileInFlight` runs while the
 * signed message may still land.
 */
export async function holdLiveOrder(
  h: Harness,
  fakes: LiveFakes,
  liveKey: string,
  options: { recipient?: string; quantity?: number; whileInFlight?: (orderId: string) => Promise<void> } = {},
): Promise<HeldLiveOrder> {
  const { ton } = fakes;
  const db = h.service.db.kysely;
  ton.fault({ kind: 'ok_false' }, { api: 'sendBoc', times: 10_000 });
  const res = await postOrder(h, liveKey, { product: 'stars', recipient: options.recipient ?? 'held_user', quantity: options.quantity ?? 80 });
  expectOk(res, 201);
  const orderId: string = res.body.id;
  const [signed] = await pollUntil(
    () => walletMessagesOf(db, orderId),
    (m) => m.length === 1,
    { what: 'the signed message' },
  );
  const seqno = Number(signed?.seqno);
  await options.whileInFlight?.(orderId);
  const keys = await mnemonicToPrivateKey(fakes.mnemonic.split(' '));
  const contract = ton.blockchain.openContract(WalletContractV5R1.create({ workchain: 0, publicKey: keys.publicKey }));
  ton.record(
    await contract.sendTransfer({
      seqno,
      secretKey: keys.secretKey,
      messages: [internal({ to: contract.address, value: toNano('0.01'), bounce: false })],
      sendMode: SendMode.PAY_GAS_SEPARATELY,
    }),
  );
  await pollUntil(
    () => walletMessagesOf(db, orderId),
    (m) => m[0]?.state === 'held',
    { what: 'the message to be held', timeoutMs: 20_000 },
  );
  ton.clearFaults();
  const payment = await findPayment(db, orderId);
  if (!payment) throw new Error(`order ${orderId} was held without a Fragment request`);
  return { orderId, seqno, fragmentReqId: payment.fragmentReqId };
}
