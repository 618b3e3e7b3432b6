import { transactionUrl } from '../../../deposits/explorer.js';
import type { BreakerState } from '../../../live/breaker.js';
import type { LiveStatus } from '../../../live/live.js';
import type { RecentPayment } from '../../../live/wallet/recent-payments.js';
import type { LiveCheckReport } from '../../../operator/live-check.js';
import { csrfField } from '../../html/document.js';
import { time, ton } from '../../html/format.js';
import { type Html, html } from '../../html/html.js';
import type { ConsoleContext } from '../context.js';

/**
 * The pieces of the console's Live page (pages/live.ts): the state of live fulfilment, the
 * check's result, the admin's forms and the paying wallet's recent payments. Nothing here
 * ever holds the Fragment session's value: the page knows only when it was set.
 */

type WalletReport = Awaited<ReturnType<ConsoleContext['wallet']>>;

const row = (label: string, value: Html | string, testId: string) => html`<div><dt>${label}</dt><dd data-testid="${testId}">${value}</dd></div>`;

/** What live fulfilment does now, who paused it and why. */
export function stateText(live: LiveStatus, breaker: BreakerState): Html | string {
  const pause = breaker.operatorPause;
  const upstream =
    breaker.state === 'open'
      ? html`Upstream paused: ${breaker.reason ?? 'unknown'}${breaker.openedAt ? html` since ${time(breaker.openedAt)}` : ''}${breaker.retryAt ? html`, next probe ${time(breaker.retryAt)}` : ''}`
      : '';
  if (pause) {
    return html`<strong>Paused by operator</strong>: ${pause.reason} (${pause.by}, since ${time(pause.at)})${upstream ? html`<br>${upstream}` : ''}`;
  }
  if (upstream) return upstream;
  if (live.status === 'available') return 'Available';
  return `Not configured (${[!live.fragment_session && 'Fragment session', !live.wallet && 'wallet'].filter(Boolean).join(' and ')} missing)`;
}

export function statusSection(input: { live: LiveStatus; breaker: BreakerState; sessionSetAt: number | undefined; wallet: WalletReport }): Html {
  const { live, breaker, sessionSetAt, wallet } = input;
  const session = sessionSetAt !== undefined ? html`Set on this page or by the CLI, ${time(sessionSetAt)}` : live.fragment_session ? 'From FRAGMENT_COOKIES' : 'Not set';
  const kyc = live.kyc ? `${live.kyc.state} (Fragment's last answer, ${live.kyc.observed_at})` : 'unknown: no purchase has reached the payment step yet';
  let walletText: Html | string = 'Not configured';
  if (wallet.state === 'ok') walletText = html`<span class="mono wrap-any" data-testid="wallet-address">${wallet.address}</span><br>${wallet.balance} TON · seqno ${wallet.seqno}`;
  else if (wallet.state === 'error')
    walletText = html`${wallet.address ? html`<span class="mono wrap-any" data-testid="wallet-address">${wallet.address}</span><br>` : ''}Balance unknown: ${wallet.message}`;
  return html`<section class="section" aria-labelledby="state-heading">
  <h2 id="state-heading">State</h2>
  <div class="stack">
  <dl class="details card">
    ${row('Live fulfilment', stateText(live, breaker), 'live-state')}
    ${row('Fragment session', session, 'session-state')}
    ${row('KYC', kyc, 'kyc-state')}
    ${row('Paying wallet', walletText, 'wallet-state')}
  </dl>
  <form method="get" action="/live/check" class="button-row"><button type="submit" class="button button-secondary">Check live trading now</button>
  <span class="hint">Asks Fragment whether the session is logged in and the chain for the wallet's balance, as <code>starport live check</code>.</span></form>
  </div>
</section>`;
}

export function checkSection(report: LiveCheckReport): Html {
  const f = report.fragment;
  const w = report.wallet;
  const b = report.breaker;
  const session = html`${f.session === 'valid' ? 'Logged in' : f.session === 'not_configured' ? 'No session set' : html`<strong>Not logged in</strong>`}${f.message ? html`: <span data-testid="check-message">${f.message}</span>` : ''}${f.source ? ` (from ${f.source === 'database' ? 'the stored session' : f.source})` : ''}`;
  const wallet = html`mnemonic ${w.mnemonic.replace('_', ' ')}, ${w.version}${w.address ? html` <span class="mono wrap-any">${w.address}</span>` : ''}; ${
    w.balance !== null ? `balance ${w.balance} TON (minimum ${w.min_balance})` : `balance unknown: ${w.balance_note ?? 'not reported'}`
  }`;
  const breaker = html`${b.state}${b.state === 'open' ? ` since ${b.since} (${b.reason}), next probe ${b.retry_at}` : ''}${
    b.operator_pause ? html`; paused by operator ${b.operator_pause.by} since ${b.operator_pause.since} (${b.operator_pause.message})` : ''
  }`;
  const verdict = report.ready
    ? html`<p class="notice notice-success" role="status" data-testid="check-verdict">Live trading can run.</p>`
    : html`<div class="notice notice-warning" role="status" data-testid="check-verdict"><p>Live trading cannot run:</p><ul>${report.blockers.map((b) => html`<li>${b}</li>`)}</ul></div>`;
  return html`<section class="section" aria-labelledby="check-heading">
  <h2 id="check-heading">Check</h2>
  ${verdict}
  <dl class="details card">
    ${row('Fragment session', session, 'check-session')}
    ${row('KYC', `${report.kyc.state}${'observed_at' in report.kyc ? ` (Fragment's last answer, ${report.kyc.observed_at})` : ''}`, 'check-kyc')}
    ${row('Wallet', wallet, 'check-wallet')}
    ${row('Circuit breaker', breaker, 'check-breaker')}
  </dl>
  ${report.warnings.map((w) => html`<p class="notice notice-info" role="note">${w}</p>`)}
</section>`;
}

/** The admin's forms: pause or resume, and the Fragment session (never pre-filled). */
export function adminForms(csrf: string, breaker: BreakerState): Html {
  const pause = breaker.operatorPause
    ? html`<form method="post" action="/live/resume" class="stack card" data-testid="resume-form">
  ${csrfField(csrf)}
  <p>Live orders are refused until you resume. Orders already paid on chain are still confirmed.</p>
  <div class="field"><label for="resume-reason">Reason (optional, in the audit log)</label><input type="text" id="resume-reason" name="reason" maxlength="1000"></div>
  <button type="submit" class="button button-primary">Resume live fulfilment</button>
</form>`
    : html`<form method="post" action="/live/pause" class="stack card" data-testid="pause-form">
  ${csrfField(csrf)}
  <p>New live orders answer 503 <code>live_unavailable</code> with nothing reserved; queued ones wait (and fail after LIVE_MAX_WAIT_SECONDS). Only a resume ends it; every operator is alerted.</p>
  <div class="field"><label for="pause-reason">Reason (in the audit log and the alert)</label><input type="text" id="pause-reason" name="reason" required maxlength="1000"></div>
  <button type="submit" class="button button-danger">Pause live fulfilment</button>
</form>`;
  return html`<section class="section" aria-labelledby="pause-heading">
  <h2 id="pause-heading">Maintenance pause</h2>
  ${pause}
</section>
<section class="section" aria-labelledby="session-heading">
  <h2 id="session-heading">Fragment session</h2>
  <form method="post" action="/live/session" class="stack card" autocomplete="off" data-testid="session-form">
    ${csrfField(csrf)}
    <div class="field"><label for="cookies">Cookie header of a logged-in fragment.com session</label>
    <textarea id="cookies" name="cookies" rows="4" required autocomplete="off" autocapitalize="off" spellcheck="false" aria-describedby="cookies-hint"></textarea>
    <p class="hint" id="cookies-hint">stel_ssid=…; stel_dt=…; stel_token=…; stel_ton_token=… Stored as <code>starport fragment session set</code> stores it; every process uses it from its next call. It is never shown again.</p></div>
    <button type="submit" class="button button-primary">Store and check</button>
  </form>
</section>`;
}

export function paymentsSection(payments: RecentPayment[], network: 'mainnet' | 'testnet'): Html {
  const rows = payments.map(
    (p) => html`<tr>
  <td data-label="Order"><a class="mono" href="/orders/${p.orderId}">${p.orderId}</a></td>
  <td data-label="Amount" class="num">${ton(p.amount)}</td>
  <td data-label="Destination" class="mono wrap-any">${p.destination}</td>
  <td data-label="Seqno" class="num">${p.seqno}</td>
  <td data-label="Transaction">${p.txHash ? html`<a class="mono wrap-any" href="${transactionUrl(p.txHash, network)}" rel="noopener noreferrer" target="_blank">${p.txHash}</a>` : html`<span class="muted">none seen on chain</span>`}</td>
  <td data-label="State">${p.messageState}${p.outcome !== 'pending' && p.outcome !== 'paid' ? ` (${p.outcome})` : ''}</td>
  <td data-label="Signed" class="when">${time(p.signedAt)}</td>
</tr>`,
  );
  // No payment yet: a sentence, not an empty table (a phone shows rows as labelled cards).
  const list =
    rows.length === 0
      ? html`<p class="muted" data-testid="no-payments">The paying wallet has sent no payment yet.</p>`
      : html`<div class="table-wrap"><table class="table" data-testid="payments"><caption class="visually-hidden">The paying wallet's last ${payments.length} payments, newest first</caption>
  <thead><tr><th scope="col">Order</th><th scope="col" class="num">Amount</th><th scope="col">Destination</th><th scope="col" class="num">Seqno</th><th scope="col">Transaction</th><th scope="col">State</th><th scope="col">Signed</th></tr></thead>
  <tbody>${rows}</tbody></table></div>`;
  return html`<section class="section" aria-labelledby="payments-heading">
  <h2 id="payments-heading">Recent payments</h2>
  ${list}
</section>`;
}
