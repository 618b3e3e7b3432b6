import { normalizeEmail } from '../../../accounts/accounts.js';
import { findAccount } from '../../../accounts/admin.js';
import { issuePasswordLink } from '../../../accounts/dashboard-users.js';
import { listMembers } from '../../../accounts/team.js';
import { recordAudit } from '../../../audit/audit.js';
import { isMode } from '../../../domain/api-key.js';
import { MoneyFormatError, parseTon } from '../../../domain/money.js';
import { AdjustmentError } from '../../../ledger/adjust.js';
import { operatorSetStatus } from '../../../operator/account-status.js';
import { operatorReissueKey, operatorRevokeKey } from '../../../operator/api-keys.js';
import { operatorAdjust } from '../../../operator/balance-adjust.js';
import { verifyOperatorCode } from '../../../operator/operator-two-factor.js';
import { operatorResetTwoFactor } from '../../../operator/two-factor-reset.js';
import { notice } from '../../html/document.js';
import { time } from '../../html/format.js';
import { html, type Slot } from '../../html/html.js';
import { field, redirect, sendHtml } from '../../html/http.js';
import type { Console } from '../console.js';
import { accountPage } from './account-page.js';

type Request = Parameters<Parameters<Console['post']>[2]>[0];
type Reply = Parameters<Parameters<Console['post']>[2]>[1];

const REASON_MAX = 1000;
const NO_REASON = 'Give a reason (at most 1000 characters): it goes to the audit log.';
const WRONG_CODE = 'That two-factor code is not right, or was already used.';

/** The reason of a form, trimmed, or undefined when it is blank or too long. */
function reasonOf(request: Request): string | undefined {
  const reason = field(request.body, 'reason').trim();
  return reason === '' || [...reason].length > REASON_MAX ? undefined : reason;
}

/**
 * The account page's forms. Each action is the CLI's own operation (src/operator/), audited
 * with the operator, their IP and the reason given; a refusal answers the page again with the
 * message and changes nothing. Successes redirect (?notice=…), except those that hand out a
 * secret (a set-password link, a reissued key): those answer the page with it, shown once.
 */
export function accountActions(web: Console): void {
  const id = (request: Request) => (request.params as { id: string }).id;
  const consoleOf = (request: Request) => ({ operatorId: web.session(request).operatorId, ip: request.ip });
  /** The page with `message` on top; 404 when there is no such account, whatever the status. */
  const answer = async (request: Request, reply: Reply, message: Slot, status: number) => {
    const { code, page } = await accountPage(web, request, id(request), message, status);
    return sendHtml(reply, page, code === 404 ? 404 : status);
  };
  const refuse = (request: Request, reply: Reply, message: Slot, status = 400) => answer(request, reply, notice('error', message), status);

  web.post('/accounts/:id/adjust', 'admin', async (request, reply) => {
    const session = web.session(request);
    const body = request.body;
    const mode = field(body, 'mode');
    if (!isMode(mode)) return refuse(request, reply, 'Choose the live or the test balance.');
    const direction = field(body, 'direction');
    if (direction !== 'credit' && direction !== 'debit') return refuse(request, reply, 'Choose credit or debit.');
    let amount: bigint;
    try {
      amount = parseTon(field(body, 'amount').trim());
    } catch (error) {
      if (error instanceof MoneyFormatError) return refuse(request, reply, `Amount: ${error.message}`);
      throw error;
    }
    if (amount === 0n) return refuse(request, reply, 'Amount: must be more than 0.');
    const reason = reasonOf(request);
    if (reason === undefined) return refuse(request, reply, NO_REASON);
    if (!(await verifyOperatorCode(web.ctx.db, session.operatorId, field(body, 'code')))) return refuse(request, reply, `${WRONG_CODE} Nothing was moved.`, 401);
    try {
      await operatorAdjust(web.ctx.db, {
        accountId: id(request),
        mode,
        amount: direction === 'debit' ? -amount : amount,
        reason,
        actor: session.email,
        action: direction === 'debit' ? 'balance.debit' : 'balance.credit',
        console: consoleOf(request),
      });
    } catch (error) {
      if (error instanceof AdjustmentError) return refuse(request, reply, error.message, 409);
      throw error;
    }
    return redirect(reply, `/accounts/${id(request)}?notice=credited`);
  });

  web.post('/accounts/:id/two-factor-reset', 'support', async (request, reply) => {
    const reason = reasonOf(request);
    if (reason === undefined) return refuse(request, reply, NO_REASON);
    const email = normalizeEmail(field(request.body, 'email'));
    const members = await listMembers(web.ctx.db.kysely, id(request));
    if (!members.some((m) => m.email === email)) return refuse(request, reply, 'Choose a member of this account. Nothing was changed.');
    await operatorResetTwoFactor(web.ctx.db, { email, reason, actor: web.session(request).email, console: consoleOf(request) });
    return redirect(reply, `/accounts/${id(request)}?notice=two-factor`);
  });

  web.post('/accounts/:id/password-link', 'support', async (request, reply) => {
    const session = web.session(request);
    const accountId = id(request);
    const reason = reasonOf(request);
    if (reason === undefined) return refuse(request, reply, NO_REASON);
    const email = normalizeEmail(field(request.body, 'email'));
    if (!(await listMembers(web.ctx.db.kysely, accountId)).some((m) => m.email === email)) return refuse(request, reply, 'Choose a member of this account. No link was issued.');
    const origin = web.ctx.publicUrl;
    // As `starport account invite`: a token at an address nothing listens on is one handed to a stranger.
    if (origin === undefined) return refuse(request, reply, 'PUBLIC_URL is not set, so no link can point at the dashboard: set it to the origin the service is reached at.', 409);
    const link = await issuePasswordLink(web.ctx.db, email, Date.now(), (tx, issued) =>
      recordAudit(tx, {
        actor: session.email,
        source: 'console',
        operatorId: session.operatorId,
        ip: request.ip,
        action: 'account.password_link',
        accountId,
        reason,
        details: { email: issued.email, link_account_id: issued.accountId },
        now: Date.now(),
      }),
    );
    const url = `${origin}/set-password/${link.token}`;
    return answer(
      request,
      reply,
      notice(
        'success',
        html`Set-password link for ${link.email}, shown once: <code class="wrap-any" data-testid="password-link">${url}</code> It works once, until ${time(link.expiresAt)}. Hand it to the person; no e-mail is sent.`,
      ),
      200,
    );
  });

  for (const verb of ['disable', 'enable'] as const) {
    web.post(`/accounts/:id/${verb}`, 'admin', async (request, reply) => {
      const reason = reasonOf(request);
      if (reason === undefined) return refuse(request, reply, NO_REASON);
      if (!(await findAccount(web.ctx.db.kysely, id(request)))) return answer(request, reply, undefined, 404);
      await operatorSetStatus(web.ctx.db, {
        accountId: id(request),
        status: verb === 'disable' ? 'disabled' : 'active',
        reason,
        actor: web.session(request).email,
        console: consoleOf(request),
      });
      return redirect(reply, `/accounts/${id(request)}?notice=status`);
    });
  }

  web.post('/accounts/:id/keys/revoke', 'admin', async (request, reply) => {
    const mode = field(request.body, 'mode');
    if (!isMode(mode)) return refuse(request, reply, 'Choose the live or the test key.');
    const reason = reasonOf(request);
    if (reason === undefined) return refuse(request, reply, NO_REASON);
    if (!(await findAccount(web.ctx.db.kysely, id(request)))) return answer(request, reply, undefined, 404);
    const revoked = await operatorRevokeKey(web.ctx.db, { accountId: id(request), mode, reason, actor: web.session(request).email, console: consoleOf(request) });
    if (revoked.revokedPrefix === null) return refuse(request, reply, `The account has no active ${mode} key. Nothing was changed.`, 409);
    return redirect(reply, `/accounts/${id(request)}?notice=key-revoked`);
  });

  web.post('/accounts/:id/keys/reissue', 'admin', async (request, reply) => {
    const session = web.session(request);
    const mode = field(request.body, 'mode');
    if (!isMode(mode)) return refuse(request, reply, 'Choose the live or the test key.');
    const reason = reasonOf(request);
    if (reason === undefined) return refuse(request, reply, NO_REASON);
    if (!(await findAccount(web.ctx.db.kysely, id(request)))) return answer(request, reply, undefined, 404);
    if (!(await verifyOperatorCode(web.ctx.db, session.operatorId, field(request.body, 'code'))))
      return refuse(request, reply, `${WRONG_CODE} No key was issued; the current one still works.`, 401);
    const key = await operatorReissueKey(web.ctx.db, { accountId: id(request), mode, reason, actor: session.email, console: consoleOf(request) });
    // The key is in this answer only: not in a redirect, the log or the audit row (which keeps its prefix).
    return answer(
      request,
      reply,
      notice(
        'success',
        html`New ${mode} key, shown once: <code class="wrap-any" data-testid="new-key">${key}</code> The previous ${mode} key is revoked. Hand it to the account's owner now; it cannot be shown again.`,
      ),
      200,
    );
  });
}
