import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../db/engine.js';
import { Outage } from '../db/outage.js';
import { ListPriceSource, FixedRateFeed } from '../providers/pricing/list-price-source.js';
import type { PriceSource, RateFeed } from '../providers/ports.js';
import type { OrderStep } from '../workers/fulfilment-worker.js';
import { CircuitBreaker, OPERATOR_PAUSE_REASON } from './breaker.js';
import { FragmentClient, type WalletAccount } from './fragment/client.js';
import type { FragmentError } from './fragment/errors.js';
import { Pacer } from './fragment/pacer.js';
import { lastKyc, sessionSource } from './fragment/session-store.js';
import { LiveRecipientDirectory } from './live-directory.js';
import { liveFulfilmentStep } from './live-step.js';
import type { Order } from '../orders/order.js';
import type { PaymentProgress, PaymentSender, StoredPayment } from './payment-sender.js';
import type { WalletHooks } from './wallet/wallet-sender.js';
import { WaitingPaymentSender } from './payment-sender.js';
import { FragmentPriceSource, PerModePriceSource } from './pricing/fragment-price-source.js';
import { configuredRateFeed } from './pricing/rate-feed.js';
import { validateMnemonic, walletAccount } from './wallet-identity.js';

/**
 * Live mode assembled from the configuration (the composition root's live half): the Fragment
 * client, the shared circuit breaker, live recipient checks, live prices, the worker step and
 * the breaker's half-open probe. One per process.
 */
export interface LiveStatus {
  /** available: live orders are taken; paused: the breaker is open or the operator paused; not_configured: Fragment session or wallet missing. */
  status: 'available' | 'paused' | 'not_configured';
  /** Who paused it: the operator (maintenance, until their resume) or the upstream (the breaker, until a probe succeeds). */
  paused_by?: 'operator' | 'upstream';
  fragment_session: boolean;
  wallet: boolean;
  /** The breaker's reason, or paused_by_operator (the operator's own words stay in the console and the audit log). */
  reason?: string;
  since?: string;
  retry_at?: string;
  kyc?: { state: string; observed_at: string };
}

export interface LiveHooks {
  onBreakerOpen?: (reason: string) => void;
  onUpstreamError?: (error: FragmentError) => void;
  /** Payments sent / confirmed / held by the paying wallet (metrics). */
  wallet?: WalletHooks;
}

/** Builds the real sender on the first payment (keeps @ton/* out of processes that never pay). */
class LazySender implements PaymentSender {
  private sender: Promise<PaymentSender> | undefined;
  constructor(private readonly create: () => Promise<PaymentSender>) {}

  async pay(order: Order, payment: StoredPayment, now: number): Promise<PaymentProgress> {
    this.sender ??= this.create().catch((error: unknown) => {
      this.sender = undefined;
      throw error;
    });
    return (await this.sender).pay(order, payment, now);
  }
}

export class Live {
  readonly client: FragmentClient;
  readonly breaker: CircuitBreaker;
  readonly directory: LiveRecipientDirectory;
  readonly prices: PriceSource;
  /** TON_USD_RATE: test prices, and live ones with RATE_FEED=fixed (tests change it at run time). */
  readonly fixedRate: FixedRateFeed;
  /** RATE_FEED: live list prices and the conversion of USDT deposits. */
  readonly tonUsdFeed: RateFeed;
  private readonly session: () => Promise<string | undefined>;
  private account: Promise<WalletAccount> | undefined;
  private probeTimer: NodeJS.Timeout | undefined;
  private probing: Promise<void> | undefined;

  constructor(
    private readonly config: Config,
    private readonly db: Db,
    private readonly logger: Logger,
    hooks: LiveHooks = {},
    sender?: PaymentSender,
  ) {
    const live = config.live;
    this.session = sessionSource(db.kysely, live.fragment.cookies);
    this.client = new FragmentClient({ baseUrl: live.fragment.baseUrl, session: this.session, pacer: new Pacer(live.fragment.maxRps), timeoutMs: live.fragment.timeoutMs });
    this.breaker = new CircuitBreaker(db.kysely, { cooldownMs: live.breaker.cooldownSeconds * 1000, threshold: live.breaker.threshold, logger, onOpen: hooks.onBreakerOpen });
    this.directory = new LiveRecipientDirectory({
      client: this.client,
      breaker: this.breaker,
      configured: async () => (await this.session()) !== undefined,
      cacheMs: live.validateCacheSeconds * 1000,
    });
    this.fixedRate = new FixedRateFeed(config.tonUsdRate);
    this.tonUsdFeed = this.rateFeed();
    this.prices = new PerModePriceSource({ test: new ListPriceSource(config.prices, this.fixedRate), live: this.livePrices() });
    this.hooks = hooks;
    // With a mnemonic the wallet pays; without one payment requests wait (part A's behaviour).
    this.sender =
      sender ??
      (live.wallet.mnemonic
        ? new LazySender(async () => (await import('./wallet/assemble.js')).createWalletSender(config, db, this.breaker, logger, hooks.wallet))
        : new WaitingPaymentSender());
  }

  private readonly hooks: LiveHooks;
  private readonly sender: PaymentSender;

  /** Checks the mnemonic (when one is configured) before the service starts. */
  async validate(): Promise<void> {
    const words = this.config.live.wallet.mnemonic;
    if (words) await validateMnemonic(words);
  }

  /** Live orders can be taken: Fragment session and wallet configured, breaker closed. */
  async available(): Promise<boolean> {
    if (!this.config.live.wallet.mnemonic || (await this.session()) === undefined) return false;
    return !(await this.breaker.isOpen());
  }

  async status(): Promise<LiveStatus> {
    const session = (await this.session()) !== undefined;
    const wallet = this.config.live.wallet.mnemonic !== undefined;
    const breaker = await this.breaker.read();
    const kyc = await lastKyc(this.db.kysely);
    const base = { fragment_session: session, wallet, ...(kyc ? { kyc: { state: kyc.state, observed_at: new Date(kyc.at).toISOString() } } : {}) };
    if (!session || !wallet) return { status: 'not_configured', ...base };
    if (breaker.operatorPause) {
      return { status: 'paused', paused_by: 'operator', ...base, reason: OPERATOR_PAUSE_REASON, since: new Date(breaker.operatorPause.at).toISOString() };
    }
    if (breaker.state === 'open') {
      return {
        status: 'paused',
        paused_by: 'upstream',
        ...base,
        reason: breaker.reason ?? 'unknown',
        ...(breaker.openedAt ? { since: new Date(breaker.openedAt).toISOString() } : {}),
        ...(breaker.retryAt ? { retry_at: new Date(breaker.retryAt).toISOString() } : {}),
      };
    }
    return { status: 'available', ...base };
  }

  step(): OrderStep {
    const live = this.config.live;
    return liveFulfilmentStep({
      db: this.db.kysely,
      client: this.client,
      breaker: this.breaker,
      wallet: () => this.wallet(),
      sender: this.sender,
      logger: this.logger,
      maxWaitMs: live.maxWaitSeconds * 1000,
      feeAllowance: live.feeAllowance,
      tolerancePercent: live.priceTolerancePercent,
      onUpstreamError: this.hooks.onUpstreamError,
    });
  }

  /** Runs the breaker's half-open probe in this process (workers): every `intervalMs`, one process wins it. */
  startProbing(intervalMs = 1000): void {
    this.probeTimer ??= setInterval(() => {
      this.probing ??= this.probe().finally(() => {
        this.probing = undefined;
      });
    }, intervalMs);
    this.probeTimer.unref();
  }

  private readonly probeOutage = new Outage('live breaker probe');

  async stop(): Promise<void> {
    clearInterval(this.probeTimer);
    this.probeTimer = undefined;
    await this.probing;
  }

  /**
   * The half-open probe: after the cool-down, one process asks Fragment's page whether the
   * session is logged in. Success closes the breaker (queued orders then show whether KYC or
   * TON are still missing, which reopens it); failure starts another cool-down.
   */
  async probe(now = Date.now()): Promise<void> {
    try {
      const claimed = await this.breaker.claimProbe(now);
      this.probeOutage.recovered(this.logger);
      if (!claimed) return;
      const check = await this.client.checkSession().catch((error: Error) => ({ loggedIn: false, hashFound: false, error }));
      if (check.loggedIn && check.hashFound) await this.breaker.recordSuccess();
      else await this.breaker.probeFailed('session_expired', 'error' in check ? check.error.message : 'the Fragment page shows no logged-in session');
    } catch (error) {
      // The database away: logged once per outage, not every second (src/db/outage.ts).
      if (this.db.engine.isUnavailable(error)) this.probeOutage.failed(this.logger, error);
      else this.logger.warn({ err: error }, 'live breaker probe failed to run');
    }
  }

  private wallet(): Promise<WalletAccount | undefined> {
    const words = this.config.live.wallet.mnemonic;
    if (!words) return Promise.resolve(undefined);
    this.account ??= walletAccount(words, this.config.live.wallet.version);
    return this.account;
  }

  private livePrices(): PriceSource {
    const { pricing } = this.config.live;
    const refreshMs = pricing.refreshSeconds * 1000;
    const maxAgeMs = pricing.maxAgeSeconds * 1000;
    if (pricing.source === 'fragment')
      return new FragmentPriceSource({ client: this.client, markupPercent: this.config.prices.markupPercent, rates: this.tonUsdFeed, refreshMs, maxAgeMs });
    return new ListPriceSource(this.config.prices, this.tonUsdFeed);
  }

  private rateFeed(): RateFeed {
    return configuredRateFeed(this.config.live.pricing, this.fixedRate);
  }
}
