import type { Db } from '../../db/engine.js';
import type { UsdtRate } from '../../deposits/store.js';
import type { Decimal } from '../../domain/decimal.js';
import type { BreakerState } from '../../live/breaker.js';
import type { LiveStatus } from '../../live/live.js';
import type { walletChainReport } from '../../live/wallet/report.js';
import type { LiveCheckReport } from '../../operator/live-check.js';

/** What the operator console needs from the composition root (src/service.ts). */
export interface ConsoleContext {
  db: Db;
  /** The deposit wallet (raw form) when live top-ups are configured: the home page reports its watcher. */
  depositAddress: string | undefined;
  /** Live fulfilment: breaker state and reason, Fragment session and wallet configured. */
  liveStatus: () => Promise<LiveStatus>;
  /** The live circuit breaker, open or closed whatever is configured. */
  breaker: () => Promise<BreakerState>;
  /** `starport live check`'s report: Fragment asked about the session, KYC, wallet, breaker. */
  liveCheck: () => Promise<LiveCheckReport>;
  /** The paying wallet's balance and seqno, asked of the chain. */
  wallet: () => ReturnType<typeof walletChainReport>;
  /** A USDT deposit's conversion when an operator assigns it: the rate feed's TON/USD rate now (undefined without a fresh one) and the spread. */
  usdtConversion: () => Promise<{ rate: UsdtRate | undefined; spreadPercent: Decimal }>;
  /** PUBLIC_URL: the dashboard's origin, where a set-password link points (unset: no link is issued). */
  publicUrl: string | undefined;
  /** TON_NETWORK, for explorer links. */
  tonNetwork: 'mainnet' | 'testnet';
  /** LIVE_FEE_ALLOWANCE_TON in nanotons: an order's margin on its page, as `order show` prints it. */
  feeAllowance: bigint;
}
