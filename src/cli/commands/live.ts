import { recordAudit } from '../../audit/audit.js';
import { loadConfig } from '../../config.js';
import { CircuitBreaker } from '../../live/breaker.js';
import { FragmentClient } from '../../live/fragment/client.js';
import { Pacer } from '../../live/fragment/pacer.js';
import { lastKyc, parseCookieHeader, SessionFormatError, sessionSource, storedFragmentSession, storeFragmentSession } from '../../live/fragment/session-store.js';
import { formatTon } from '../../domain/money.js';
import { validateMnemonic } from '../../live/wallet-identity.js';
import { walletChainReport } from '../../live/wallet/report.js';
import { createLogger } from '../../logger.js';
import { type Command, UsageError } from '../command.js';
import { withDatabase } from '../database.js';
import { ACTOR_HELP, actorOf, actorOption, operatorCommand, time } from '../operator.js';

/** Reads all of stdin (the cookie string is piped in, so that it stays out of shell history). */
async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('Paste the Cookie header (stel_ssid=…; stel_dt=…; stel_token=…; stel_ton_token=…), then Ctrl-D:\n');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export const fragmentSessionSet: Command = operatorCommand({
  path: ['fragment', 'session', 'set'],
  summary: 'Replace the Fragment session (cookies) used by every process from its next call; no restart',
  usage:
    'starport fragment session set [--cookies STRING] [--actor NAME] [--json] < cookies.txt\n\n' +
    'The Cookie header of a logged-in, KYC-verified fragment.com session with a connected TON wallet:\n' +
    '  stel_ssid=…; stel_dt=…; stel_token=…; stel_ton_token=…\n' +
    'Read from stdin unless --cookies is given (prefer stdin: a flag stays in the shell history).\n' +
    'It is stored in the database and wins over FRAGMENT_COOKIES; it is never printed.\n' +
    ACTOR_HELP,
  options: { cookies: { type: 'string' }, ...actorOption },
  async run(values, io) {
    const actor = actorOf(values);
    const raw = typeof values.cookies === 'string' ? values.cookies : await readStdin();
    if (raw.trim() === '') throw new UsageError('no cookies given (pipe them to stdin or pass --cookies)');
    let parsed: { header: string; names: string[] };
    try {
      parsed = parseCookieHeader(raw);
    } catch (error) {
      if (error instanceof SessionFormatError) throw new UsageError(error.message);
      throw error;
    }
    const now = Date.now();
    await withDatabase((db) =>
      db.kysely.transaction().execute(async (tx) => {
        await storeFragmentSession(tx, parsed.header, now);
        // The audit record names the cookies, never their values.
        await recordAudit(tx, { actor, action: 'fragment.session_set', details: { cookies: parsed.names }, now });
      }),
    );
    io.result(
      { stored: true, cookies: parsed.names, updated_at: time(now) },
      `Fragment session stored (cookies: ${parsed.names.join(', ')}); every process uses it from its next call.`,
    );
    return 0;
  },
});

export const liveCheck: Command = operatorCommand({
  path: ['live', 'check'],
  summary: 'Check whether live trading can run: Fragment session, KYC, wallet, circuit breaker',
  usage:
    'starport live check [--json]\n\n' +
    'Asks fragment.com (FRAGMENT_BASE_URL) whether the session is logged in, and reports the KYC state, the wallet\n' +
    'configuration and its balance (toncenter, TON_API_URL), and the circuit breaker. Exit 0 when live trading can run,\n' +
    '2 when it cannot.\n\n' +
    "KYC is known only from Fragment's last answer to a purchase: Fragment says need_verify only when a purchase asks\n" +
    'for its payment (get*Link), so this command cannot ask. "required" (the last purchase was refused) is a blocker;\n' +
    '"verified" is what the last purchase showed and may have changed since; "unknown" (no purchase reached that step\n' +
    'yet) is printed as a warning and does not block: the first live order will tell.',
  options: {},
  async run(_values, io) {
    const config = loadConfig();
    const report = await withDatabase(async (db) => {
      const stored = await storedFragmentSession(db.kysely);
      const session = sessionSource(db.kysely, config.live.fragment.cookies);
      const configured = (await session()) !== undefined;
      const client = new FragmentClient({
        baseUrl: config.live.fragment.baseUrl,
        session,
        pacer: new Pacer(config.live.fragment.maxRps),
        timeoutMs: config.live.fragment.timeoutMs,
      });
      let sessionState: { state: 'valid' | 'invalid' | 'not_configured' | 'error'; message?: string };
      if (!configured) sessionState = { state: 'not_configured' };
      else {
        try {
          const check = await client.checkSession();
          sessionState = check.loggedIn && check.hashFound ? { state: 'valid' } : { state: 'invalid', message: 'the Fragment page shows no logged-in session' };
        } catch (error) {
          sessionState = { state: 'error', message: (error as Error).message };
        }
      }
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
      const blockers = [
        ...(sessionState.state === 'valid' ? [] : [`Fragment session ${sessionState.state.replace('_', ' ')}`]),
        ...(kyc?.state === 'required' ? ['KYC verification required on fragment.com'] : []),
        ...(mnemonic === 'valid' ? [] : [`wallet mnemonic ${mnemonic.replace('_', ' ')}`]),
        ...(chain?.state === 'error' ? [`wallet balance unknown (${chain.message})`] : []),
        ...(balance !== undefined && balance < config.live.wallet.minBalance
          ? [`wallet balance ${formatTon(balance)} TON below WALLET_MIN_BALANCE_TON ${formatTon(config.live.wallet.minBalance)}`]
          : []),
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
        breaker: { state: breaker.state, reason: breaker.reason, since: time(breaker.openedAt), retry_at: time(breaker.retryAt) },
      };
    });
    const text = [
      `live trading: ${report.ready ? 'ready' : `NOT ready (${report.blockers.join('; ')})`}`,
      `fragment session: ${report.fragment.session}${report.fragment.message ? ` (${report.fragment.message})` : ''}${report.fragment.source ? `, from ${report.fragment.source}` : ''}${report.fragment.session_set_at ? ` set ${report.fragment.session_set_at}` : ''}`,
      `kyc: ${report.kyc.state}${'observed_at' in report.kyc ? ` (Fragment's last answer, ${report.kyc.observed_at})` : ' (no purchase has reached the payment step yet)'}`,
      `wallet: mnemonic ${report.wallet.mnemonic.replace('_', ' ')}, ${report.wallet.version}${report.wallet.address ? ` ${report.wallet.address}` : ''}; balance ${report.wallet.balance !== null ? `${report.wallet.balance} TON (minimum ${report.wallet.min_balance})` : `unknown: ${report.wallet.balance_note ?? 'not reported'}`}`,
      `circuit breaker: ${report.breaker.state}${report.breaker.state === 'open' ? ` since ${report.breaker.since} (${report.breaker.reason}), next probe ${report.breaker.retry_at}` : ''}`,
      ...report.warnings.map((w) => `warning: ${w}`),
    ].join('\n');
    io.result(report, text);
    return report.ready ? 0 : 2;
  },
});
