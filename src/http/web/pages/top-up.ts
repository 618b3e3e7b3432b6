import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { depositMemo } from '../../../accounts/deposit-memo.js';
import { formatTon, NANOTONS_PER_TON } from '../../../domain/money.js';
import { transactionUrl } from '../../../deposits/explorer.js';
import { type Deposit, listDeposits } from '../../../deposits/store.js';
import { ApiError } from '../../../domain/api-error.js';
import { fundTestBalance, MAX_TEST_FUNDING } from '../../../ledger/test-funding.js';
import { readBalance } from '../../../ledger/ledger.js';
import { copyField, emptyState } from '../components.js';
import { modePath, time, ton } from '../../html/format.js';
import { type Html, html, type Slot } from '../../html/html.js';
import { field, redirect, sendHtml } from '../../html/http.js';
import { csrfField, dashboardPage, notice, type View } from '../layout.js';
import type { Web } from '../web.js';
import { dashboardAudit } from '../audit.js';
import { jettonTransferLink, parseAmountInput, parseUsdtAmountInput, qrSvg, transferLink } from '../../../ton/transfer-link.js';
import { formatDecimal, formatUsdt } from '../../../domain/usdt.js';
import { CLIENT_DEPOSIT_STATUSES } from '../../../deposits/wire.js';
import { may, whoMay } from '../rules.js';

/** The newest deposits shown on the top-up page (the API lists them all: GET /api/v1/deposits). */
const DEPOSITS_SHOWN = 20;

/**
 * The account's deposits: amount (for USDT the USDT sent and the rate it was converted at),
 * status (credited, or a USDT deposit waiting for a rate), block time and the transaction.
 */
function depositsTable(deposits: Deposit[], network: 'mainnet' | 'testnet'): Html {
  const rows = deposits.map(
    (d) => html`<tr>
  <td data-label="Amount" class="num">${d.status === 'awaiting_rate' ? '' : ton(d.amount)}${
    d.asset === 'USDT' ? html`<br><span class="muted small" data-usdt>${formatUsdt(d.jettonAmount ?? 0n)} USDT${d.rate ? ` at ${d.rate} USD/TON` : ''}</span>` : ''
  }</td>
  <td data-label="Status">${
    d.status === 'awaiting_rate'
      ? html`<span class="badge badge-awaiting_rate" data-status="awaiting_rate">Waiting for a rate</span>`
      : html`<span class="badge badge-credited" data-status="credited">Credited</span>`
  }</td>
  <td data-label="Sent">${time(d.chainTime)}</td>
  <td data-label="Transaction"><a class="mono" href="${transactionUrl(d.txHash, network)}" rel="noopener noreferrer" target="_blank" title="${d.txHash}">${d.txHash.slice(0, 8)}…${d.txHash.slice(-8)}</a></td>
</tr>`,
  );
  return html`<div class="table-wrap" role="region" aria-label="Your deposits" tabindex="0">
<table class="table deposits-table">
  <caption class="visually-hidden">Your deposits, newest first</caption>
  <thead><tr><th scope="col" class="num">Amount</th><th scope="col">Status</th><th scope="col">Sent</th><th scope="col">Transaction</th></tr></thead>
  <tbody>${rows}</tbody>
</table>
</div>`;
}

/** Top up: live (deposit address, memo, link and QR) and test ("Add test funds" through the ledger). */
export function topUpRoutes(app: FastifyInstance, web: Web): void {
  const { ctx } = web;

  const usdtMaster = ctx.usdt?.master;

  const livePage = async (view: View, amountText: string, asset: 'ton' | 'usdt'): Promise<Html> => {
    const address = ctx.depositAddress;
    const intro = html`<div class="page-head"><h1>Top up your live balance</h1></div>
<p class="lead">Send ${usdtMaster ? 'TON or USDT' : 'TON'} from any wallet to ${ctx.brand.name}'s deposit address with your personal comment. Your live balance is credited once the transfer is final on the TON blockchain.</p>`;
    const recent = await listDeposits(ctx.db.kysely, { accountId: view.session.accountId, status: CLIENT_DEPOSIT_STATUSES, limit: DEPOSITS_SHOWN });
    const deposits = html`<section class="section" aria-labelledby="deposits-heading">
  <div class="section-head"><h2 id="deposits-heading">Deposits</h2></div>
  ${
    recent.length === 0
      ? emptyState('No deposits yet', 'Transfers to the deposit address with your comment appear here with their status, usually within a minute of being sent.')
      : depositsTable(recent, ctx.tonNetwork ?? 'mainnet')
  }
</section>`;
    if (!address) {
      return dashboardPage(view, {
        title: 'Top up',
        section: 'top-up',
        body: html`${intro}
${notice('warning', html`<strong>Live top-ups are not configured yet.</strong> The deposit wallet has not been set up on this ${ctx.brand.name} installation. Meanwhile you can build and test your integration with <a href="${modePath('test', '/top-up')}">test funds</a>.`)}
${deposits}`,
      });
    }
    const memo = await depositMemo(ctx.db, view.session.accountId);
    const usdt = asset === 'usdt' && usdtMaster && ctx.usdt ? { ...ctx.usdt, master: usdtMaster } : undefined;
    let link: string;
    let qrUrl: string;
    let amountError: string | undefined;
    if (usdt) {
      const amount = parseUsdtAmountInput(amountText);
      const units = amount.ok ? amount.units : undefined;
      link = jettonTransferLink(address, usdt.master, memo, units);
      qrUrl = `/top-up/qr.svg?asset=usdt${units !== undefined ? `&amount=${formatUsdt(units)}` : ''}`;
      amountError = amount.ok ? undefined : amount.message;
    } else {
      const amount = parseAmountInput(amountText);
      const nanotons = amount.ok ? amount.nanotons : undefined;
      link = transferLink(address, memo, nanotons);
      qrUrl = `/top-up/qr.svg${nanotons !== undefined ? `?amount=${formatTon(nanotons)}` : ''}`;
      amountError = amount.ok ? undefined : amount.message;
    }
    const unit = usdt ? 'USDT' : 'TON';
    const switcher = usdtMaster
      ? html`<nav class="asset-switch" aria-label="Currency">
  <a class="button ${usdt ? 'button-secondary' : 'button-primary'}" href="/top-up"${usdt ? '' : html` aria-current="page"`}>Send TON</a>
  <a class="button ${usdt ? 'button-primary' : 'button-secondary'}" href="/top-up?asset=usdt"${usdt ? html` aria-current="page"` : ''}>Send USDT</a>
</nav>`
      : '';
    const terms = usdt
      ? html`<li>
        <p class="label">Conversion</p>
        <p class="hint" data-usdt-terms>Your balance stays in TON. USDT (on TON) is converted when it arrives, at the TON/USD rate of that moment less ${formatDecimal(usdt.spreadPercent)}&nbsp;%, rounded down to the nanoton. If no current rate is available the deposit waits and is credited as soon as one is. At least ${formatUsdt(usdt.minUnits)} USDT per transfer; smaller ones wait for the operator. Send USDT on TON only (token contract <span class="mono">${usdt.master}</span>), and keep the comment.</p>
      </li>`
      : '';
    const body = html`${intro}
${switcher}
<div class="grid-2 topup">
  <section class="card" aria-labelledby="transfer-heading">
    <h2 id="transfer-heading">Transfer details${usdt ? ' (USDT)' : ''}</h2>
    <ol class="steps-compact">
      <li>
        <p class="label" id="address-label">Deposit address</p>
        ${copyField('deposit-address', address, 'deposit address', { className: 'wrap' })}
      </li>
      <li>
        <p class="label">Comment (memo)</p>
        ${copyField('deposit-memo', memo, 'comment')}
        <p class="hint">Always add this comment to the transfer. Without it we cannot tell that the ${unit} is yours. It is the same for every top-up.</p>
      </li>
      <li>
        <form method="get" action="/top-up" class="amount-form" data-transfer-form data-address="${address}" data-memo="${memo}"${
          usdt ? html` data-jetton="${usdt.master}" data-decimals="6" data-unit="USDT"` : html` data-decimals="9" data-unit="TON"`
        }>
          ${usdt ? html`<input type="hidden" name="asset" value="usdt">` : ''}
          <label for="amount">Amount in ${unit} <span class="muted">(optional)</span></label>
          <div class="input-row">
            <input id="amount" name="amount" type="text" inputmode="decimal" autocomplete="off" spellcheck="false" value="${amountText}"
              aria-describedby="amount-hint${amountError ? ' amount-error' : ''}"${amountError ? html` aria-invalid="true"` : ''}>
            <button type="submit" class="button button-secondary" data-no-js>Update link</button>
          </div>
          <p id="amount-hint" class="hint">Fills in the amount in the link and QR code. Leave it empty to choose the amount in your wallet.</p>
          <p id="amount-error" class="field-error" role="alert"${amountError ? '' : html` hidden`}>${amountError ?? ''}</p>
        </form>
      </li>
      ${terms}
    </ol>
  </section>
  <section class="card qr-card" aria-labelledby="wallet-heading">
    <h2 id="wallet-heading">Pay with a wallet app</h2>
    <img id="transfer-qr" class="qr" src="${qrUrl}" width="232" height="232" alt="QR code of the transfer link: scan it with a TON wallet app to send ${unit} with your comment.">
    <p><a id="transfer-link" class="button button-primary" href="${link}">Open in wallet app</a></p>
    ${copyField('transfer-uri', link, 'transfer link', { className: 'wrap small' })}
  </section>
</div>
${deposits}`;
    return dashboardPage(view, { title: 'Top up', section: 'top-up', body });
  };

  const testPage = async (view: View, options: { amountText?: string; status?: Slot; error?: string } = {}): Promise<Html> => {
    const balance = await readBalance(ctx.db.kysely, { accountId: view.session.accountId, mode: 'test' });
    const error = options.error;
    const body = html`<div class="page-head"><h1>Add test funds</h1></div>
<p class="lead">Test funds are free and only work with your test key (<code>sk_test_…</code>). Use them to try orders end to end; they can never buy anything real.</p>
<div class="grid-2">
  <section class="card" aria-labelledby="add-heading">
    <h2 id="add-heading">Add test funds</h2>
    ${
      may(view.session.role, 'POST', '/test/top-up')
        ? html`<form method="post" action="/test/top-up" class="stack" novalidate>
      ${csrfField(view.csrf)}
      <div class="field">
        <label for="amount">Amount in TON</label>
        <input id="amount" name="amount" type="text" inputmode="decimal" autocomplete="off" value="${options.amountText ?? '100'}"
          aria-describedby="amount-hint${error ? ' amount-error' : ''}"${error ? html` aria-invalid="true"` : ''} required>
        <p id="amount-hint" class="hint">Up to ${(MAX_TEST_FUNDING / NANOTONS_PER_TON).toLocaleString('en-US')} TON at a time.</p>
        ${error ? html`<p id="amount-error" class="field-error">${error}</p>` : ''}
      </div>
      <button type="submit" class="button button-primary">Add test funds</button>
    </form>`
        : html`<p data-testid="test-funds-read-only">Your role is ${view.session.role}: ${whoMay('POST', '/test/top-up')} add test funds.</p>`
    }
  </section>
  <section class="card" aria-labelledby="test-balance-heading">
    <h2 id="test-balance-heading">Test balance</h2>
    <dl class="balance">
      <div><dt>Available</dt><dd class="amount" data-testid="test-available">${ton(balance?.available ?? 0n)}</dd></div>
      <div><dt>Reserved</dt><dd class="amount-small">${ton(balance?.reserved ?? 0n)}</dd></div>
    </dl>
    <p><a href="${modePath('test', '/guide')}">Create a first test order →</a></p>
  </section>
</div>`;
    return dashboardPage(view, { title: 'Add test funds', section: 'top-up', body, notice: options.status });
  };

  web.page('/top-up', async (request, reply, mode) => {
    const view = web.view(request, mode);
    if (mode === 'live') return sendHtml(reply, await livePage(view, field(request.query, 'amount'), field(request.query, 'asset') === 'usdt' ? 'usdt' : 'ton'));
    const added = field(request.query, 'notice') === 'funds_added';
    return sendHtml(reply, await testPage(view, { status: added ? notice('success', 'Test funds added.') : undefined }));
  });

  app.post('/test/top-up', { preHandler: [web.authenticated, web.sessionCsrf] }, async (request: FastifyRequest, reply: FastifyReply) => {
    const view = web.view(request, 'test');
    const amountText = field(request.body, 'amount');
    const amount = parseAmountInput(amountText, MAX_TEST_FUNDING / NANOTONS_PER_TON);
    if (!amount.ok || amount.nanotons === undefined) {
      const error = amount.ok ? 'Enter an amount in TON, like 100.' : amount.message;
      return sendHtml(reply, await testPage(view, { amountText, error }), 400);
    }
    try {
      await fundTestBalance(ctx.db, { accountId: view.session.accountId, amount: amount.nanotons, reference: request.id });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      return sendHtml(reply, await testPage(view, { amountText, error: error.message }), 400);
    }
    request.log.info({ account_id: view.session.accountId, amount: String(amount.nanotons) }, 'dashboard test funds added');
    await dashboardAudit(ctx.db.kysely, request, { action: 'dashboard.test_funds', session: view.session, mode: 'test', details: { amount: formatTon(amount.nanotons) } });
    return redirect(reply, '/test/top-up?notice=funds_added');
  });

  app.get('/top-up/qr.svg', { preHandler: web.authenticated }, async (request, reply) => {
    const address = ctx.depositAddress;
    if (!address) return reply.code(404).type('text/plain; charset=utf-8').send('Live top-ups are not configured.');
    const memo = await depositMemo(ctx.db, (request.dashboardSession as { accountId: string }).accountId);
    let link: string;
    if (field(request.query, 'asset') === 'usdt' && usdtMaster) {
      const amount = parseUsdtAmountInput(field(request.query, 'amount'));
      link = jettonTransferLink(address, usdtMaster, memo, amount.ok ? amount.units : undefined);
    } else {
      const amount = parseAmountInput(field(request.query, 'amount'));
      link = transferLink(address, memo, amount.ok ? amount.nanotons : undefined);
    }
    const svg = await qrSvg(link);
    return reply.header('cache-control', 'private, no-store').type('image/svg+xml').send(svg);
  });
}
