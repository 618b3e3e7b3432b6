import type { Config } from '../config.js';
import type { Db } from '../db/engine.js';
import { formatTon } from '../domain/money.js';
import { formatTimestamp } from '../domain/time.js';
import { CircuitBreaker, OPERATOR_PAUSE_REASON } from '../live/breaker.js';
import { FragmentClient } from '../live/fragment/client.js';
import { Pacer } from '../live/fragment/pacer.js';
import { lastKyc, sessionSource, storedFragmentSession } from '../live/fragment/session-store.js';
import { walletChainReport } from '../live/wallet/report.js';
import { validateMnemonic } from '../live/wallet-identity.js';
import { createLogger } from '../logger.js';

/**
 * Whether live trading can run, as `starport live check` prints it and the console's Live page
 * shows it: Fragment asked whether the session is logged in, the last KYC answer, the wallet
 * (mnemonic, balance on the chain) and the breaker with the operator's pause. One builder for both.
 * Nothing in it is a secret: the session is reported by state and source, never by value.
 */
export type LiveCheckReport = Awaited<ReturnType<typeof liveCheckReport>>;

type SessionState = { state: 'valid' | 'invalid' | 'not_configured' | 'error'; message?: string };

const time = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : formatTimestamp(ms));

async function checkSession(db: Db, config: Config): Promise<{ configured: boolean; result: SessionState }> {
  const session = sessionSource(db.kysely, config.live.fragment.cookies);
  if ((await session()) === undefined) return { configured: false, result: { state: 'not_configured' } };
  const client = new FragmentClient({ baseUrl: config.live.fragment.baseUrl, session, pacer: new Pacer(config.live.fragment.maxRps), timeoutMs: config.live.fragment.timeoutMs });
  try {
    const check = await client.checkSession();
    return { configured: true, result: check.loggedIn && check.hashFound ? { state: 'valid' } : { state: 'invalid', message: 'the Fragment page shows no logged-in session' } };
  } catch (error) {
    return { configured: true, result: { state: 'error', message: (error as Error).message } };
  }
}

export async function liveCheckReport(db: Db, config: Config) {
  const stored = await storedFragmentSession(db.kysely);
  const { configured, result: sessionState } = await checkSession(db, config);
  const kyc = await lastKyc(db.kysely);
  const breaker = await new CircuitBreaker(db.kysely, { cooldownMs: 0, threshold: 1, logger: createLogger('silent') }).read();
  let mnemonic: 'valid' | 'invalid' | 'not_configured' = 'not_configured';
  if (config.live.wallet.mnemonic)
    mnemonic = await validateMnemonic(config.live.wallet.mnemonic).then(
      () => 'valid' as const,
      () => 'invalid' as const,
    );
  const chain = mnemonic === 'valid' ? await walletChainReport(config) : undefined;
  const balance = chain?.state === 'ok' ? chain.balance_nanotons : undefined;
  const pause = breaker.operatorPause;
  const blockers = [
    ...(sessionState.state === 'valid' ? [] : [`Fragment session ${sessionState.state.replace('_', ' ')}`]),
    ...(kyc?.state === 'required' ? ['KYC verification required on fragment.com'] : []),
    ...(mnemonic === 'valid' ? [] : [`wallet mnemonic ${mnemonic.replace('_', ' ')}`]),
    ...(chain?.state === 'error' ? [`wallet balance unknown (${chain.message})`] : []),
    ...(balance !== undefined && balance < config.live.wallet.minBalance
      ? [`wallet balance ${formatTon(balance)} TON below WALLET_MIN_BALANCE_TON ${formatTon(config.live.wallet.minBalance)}`]
      : []),
    ...(pause ? [`live fulfilment paused by an operator (${pause.reason})`] : []),
    ...(breaker.state === 'open' ? [`live fulfilment paused (${breaker.reason ?? 'unknown'})`] : []),
  ];
  const warnings = kyc
    ? []
    : [
        'KYC state unknown: Fragment reports it only when a purchase reaches the payment step, and none has yet; the first live order will tell (it pauses live fulfilment if KYC is required)',
      ];
  return {
    ready: blockers.length === 0,
    blockers,
    warnings,
    fragment: {
      base_url: config.live.fragment.baseUrl,
      session: sessionState.state,
      ...(sessionState.message ? { message: sessionState.message } : {}),
      source: stored ? 'database' : configured ? 'FRAGMENT_COOKIES' : null,
      ...(stored ? { session_set_at: time(stored.updatedAt) } : {}),
    },
    kyc: kyc ? { state: kyc.state, observed_at: time(kyc.at) } : { state: 'unknown' },
    wallet: {
      mnemonic,
      version: config.live.wallet.version,
      address: chain && 'address' in chain ? (chain.address ?? null) : null,
      balance: chain?.state === 'ok' ? chain.balance : null,
      min_balance: formatTon(config.live.wallet.minBalance),
      ...(chain?.state === 'ok' ? { seqno: chain.seqno, deployed: chain.deployed } : {}),
      ...(chain?.state === 'error' ? { balance_note: chain.message } : chain ? {} : { balance_note: 'no usable wallet mnemonic, so no wallet address to look up' }),
    },
    breaker: {
      state: breaker.state,
      reason: breaker.reason,
      since: time(breaker.openedAt),
      retry_at: time(breaker.retryAt),
      ...(pause ? { operator_pause: { reason: OPERATOR_PAUSE_REASON, message: pause.reason, by: pause.by, since: time(pause.at) } } : {}),
    },
  };
}
