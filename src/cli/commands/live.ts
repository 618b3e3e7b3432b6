import { loadConfig } from '../../config.js';
import { SessionFormatError } from '../../live/fragment/session-store.js';
import { operatorSetFragmentSession } from '../../operator/fragment-session.js';
import { liveCheckReport } from '../../operator/live-check.js';
import { operatorPauseLive, operatorResumeLive, PauseError } from '../../operator/live-pause.js';
import { type Command, UsageError } from '../command.js';
import { withDatabase } from '../database.js';
import { ACTOR_HELP, actorOf, actorOption, operatorCommand, reasonOf, time } from '../operator.js';

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
    const now = Date.now();
    let names: string[];
    try {
      ({ names } = await withDatabase((db) => operatorSetFragmentSession(db.kysely, { raw, actor }, now)));
    } catch (error) {
      if (error instanceof SessionFormatError) throw new UsageError(error.message);
      throw error;
    }
    io.result({ stored: true, cookies: names, updated_at: time(now) }, `Fragment session stored (cookies: ${names.join(', ')}); every process uses it from its next call.`);
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
    const report = await withDatabase((db) => liveCheckReport(db, config));
    const text = [
      `live trading: ${report.ready ? 'ready' : `NOT ready (${report.blockers.join('; ')})`}`,
      `fragment session: ${report.fragment.session}${report.fragment.message ? ` (${report.fragment.message})` : ''}${report.fragment.source ? `, from ${report.fragment.source}` : ''}${report.fragment.session_set_at ? ` set ${report.fragment.session_set_at}` : ''}`,
      `kyc: ${report.kyc.state}${'observed_at' in report.kyc ? ` (Fragment's last answer, ${report.kyc.observed_at})` : ' (no purchase has reached the payment step yet)'}`,
      `wallet: mnemonic ${report.wallet.mnemonic.replace('_', ' ')}, ${report.wallet.version}${report.wallet.address ? ` ${report.wallet.address}` : ''}; balance ${report.wallet.balance !== null ? `${report.wallet.balance} TON (minimum ${report.wallet.min_balance})` : `unknown: ${report.wallet.balance_note ?? 'not reported'}`}`,
      `circuit breaker: ${report.breaker.state}${report.breaker.state === 'open' ? ` since ${report.breaker.since} (${report.breaker.reason}), next probe ${report.breaker.retry_at}` : ''}`,
      ...(report.breaker.operator_pause
        ? [
            `paused by operator: ${report.breaker.operator_pause.by} since ${report.breaker.operator_pause.since} (${report.breaker.operator_pause.message}); starport live resume ends it`,
          ]
        : []),
      ...report.warnings.map((w) => `warning: ${w}`),
    ].join('\n');
    io.result(report, text);
    return report.ready ? 0 : 2;
  },
});

export const livePause: Command = operatorCommand({
  path: ['live', 'pause'],
  summary: 'Pause live fulfilment for maintenance, on every process, until `live resume`',
  usage:
    'starport live pause --reason TEXT [--actor NAME] [--json]\n\n' +
    'New live orders answer 503 live_unavailable (nothing reserved) and queued ones wait, as while the circuit breaker\n' +
    'is open; they still fail after LIVE_MAX_WAIT_SECONDS. No upstream success or probe ends the pause: only\n' +
    "`starport live resume` (or the console's Live page). The operators are alerted.\n" +
    ACTOR_HELP,
  options: { reason: { type: 'string' }, ...actorOption },
  async run(values, io) {
    const actor = actorOf(values);
    const reason = reasonOf(values);
    const { changed } = await withDatabase((db) => pauseCall(() => operatorPauseLive(db.kysely, { actor, reason })));
    io.result(
      { paused: true, changed },
      changed ? 'Live fulfilment paused: new live orders answer 503 until `starport live resume`.' : 'Live fulfilment was already paused by an operator; nothing changed.',
    );
    return 0;
  },
});

export const liveResume: Command = operatorCommand({
  path: ['live', 'resume'],
  summary: "End the operator's pause of live fulfilment",
  usage: `starport live resume [--reason TEXT] [--actor NAME] [--json]\n\nLive orders are taken again (unless the circuit breaker is open). ${ACTOR_HELP}`,
  options: { reason: { type: 'string' }, ...actorOption },
  async run(values, io) {
    const actor = actorOf(values);
    const reason = values.reason === undefined ? undefined : reasonOf(values);
    const { changed } = await withDatabase((db) => pauseCall(() => operatorResumeLive(db.kysely, { actor, reason })));
    io.result({ paused: false, changed }, changed ? 'Live fulfilment resumed.' : 'Live fulfilment was not paused by an operator; nothing changed.');
    return 0;
  },
});

async function pauseCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof PauseError) throw new UsageError(error.message);
    throw error;
  }
}
