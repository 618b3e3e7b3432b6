import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../db/engine.js';
import { ToncenterClient } from '../../ton/toncenter.js';
import type { CircuitBreaker } from '../breaker.js';
import { withinReserve } from '../live-step.js';
import { WalletChain } from './chain.js';
import { SigningWallet } from './signing-wallet.js';
import { type WalletHooks, WalletPaymentSender } from './wallet-sender.js';

/**
 * The paying wallet from the configuration (WALLET_*, TON_API_URL/TON_API_KEY). Loaded on the
 * first payment only, so that processes that never pay do not load @ton/*.
 */
export async function createWalletSender(config: Config, db: Db, breaker: CircuitBreaker, logger: Logger, hooks: WalletHooks = {}): Promise<WalletPaymentSender> {
  const { wallet: settings, feeAllowance, priceTolerancePercent } = config.live;
  if (!settings.mnemonic) throw new Error('no wallet mnemonic configured');
  const wallet = await SigningWallet.fromMnemonic(settings.mnemonic, settings.version);
  const client = new ToncenterClient({ baseUrl: config.tonApiUrl, apiKey: config.tonApiKey });
  return new WalletPaymentSender({
    db: db.kysely,
    wallet,
    chain: new WalletChain(client, wallet.address),
    breaker,
    logger: logger.child({ component: 'wallet' }),
    batchMax: settings.batchMax,
    messageTtlMs: settings.messageTtlSeconds * 1000,
    confirmMarginMs: settings.confirmMarginSeconds * 1000,
    pollMs: settings.pollMs,
    rebroadcastMs: settings.rebroadcastSeconds * 1000,
    feeAllowance,
    withinReserve: (amount, reserved) => withinReserve(amount, reserved, feeAllowance, priceTolerancePercent),
    minBalance: settings.minBalance,
    lowWarning: { nanotons: config.notifications.walletLowNanotons, orders: config.notifications.walletLowOrders },
    hooks,
  });
}

/** The configured wallet's address and chain view, for operator commands (no signing). */
export async function openWalletChain(config: Config): Promise<WalletChain> {
  const settings = config.live.wallet;
  if (!settings.mnemonic) throw new Error('no wallet mnemonic configured');
  const wallet = await SigningWallet.fromMnemonic(settings.mnemonic, settings.version);
  return new WalletChain(new ToncenterClient({ baseUrl: config.tonApiUrl, apiKey: config.tonApiKey, timeoutMs: 10_000 }), wallet.address);
}
