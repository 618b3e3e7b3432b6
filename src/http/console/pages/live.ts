import { fragmentSessionSetAt, SessionFormatError } from '../../../live/fragment/session-store.js';
import { recentPayments } from '../../../live/wallet/recent-payments.js';
import { operatorSetFragmentSession } from '../../../operator/fragment-session.js';
import type { LiveCheckReport } from '../../../operator/live-check.js';
import { operatorPauseLive, operatorResumeLive, PauseError } from '../../../operator/live-pause.js';
import { notice } from '../../html/document.js';
import { type Html, html, type Slot } from '../../html/html.js';
import { field, redirect, sendHtml } from '../../html/http.js';
import type { Console } from '../console.js';
import { consolePage } from '../layout.js';
import { walletWithin } from '../wallet.js';
import { adminForms, checkSection, paymentsSection, statusSection } from './live-view.js';

type Request = Parameters<Parameters<Console['get']>[2]>[0];

/** How many of the paying wallet's payments the page lists. */
const PAYMENTS = 50;

const NOTICES: Record<string, Slot> = {
  session_set: notice('success', 'The Fragment session was stored and the action recorded in the audit log (cookie names only). Every process uses it from its next call.'),
  paused: notice('success', 'Live fulfilment is paused until you resume it. The operators were alerted and the action recorded in the audit log.'),
  already_paused: notice('info', 'Live fulfilment was already paused by an operator; nothing changed.'),
  resumed: notice('success', 'Live fulfilment resumed and the action recorded in the audit log.'),
  not_paused: notice('info', 'Live fulfilment was not paused by an operator; nothing changed.'),
};

/**
 * Live (docs/operations.md "Operator console"): live fulfilment's state (the breaker and the
 * operator's pause), `starport live check` on demand, the paying wallet with its last payments;
 * for an admin, the maintenance pause and resume (`starport live pause|resume`'s operation,
 * src/operator/live-pause.ts) and the Fragment session pasted as `starport fragment session set`
 * stores it (src/operator/fragment-session.ts). The session's value is never put back into a
 * page, a log or an error: a refused paste answers with the CLI's message, which names cookies only.
 */
export function liveRoutes(web: Console): void {
  const livePage = async (request: Request, options: { status?: Slot; check?: LiveCheckReport } = {}): Promise<Html> => {
    const session = web.session(request);
    const { ctx } = web;
    const csrf = web.token(request);
    const [live, breaker, sessionSetAt, wallet, payments] = await Promise.all([
      ctx.liveStatus(),
      ctx.breaker(),
      fragmentSessionSetAt(ctx.db.kysely),
      walletWithin(ctx),
      recentPayments(ctx.db.kysely, PAYMENTS),
    ]);
    const admin = session.role === 'admin';
    const body = html`<h1>Live fulfilment</h1>
${statusSection({ live, breaker, sessionSetAt, wallet })}
${options.check ? checkSection(options.check) : ''}
${admin ? adminForms(csrf, breaker) : html`<p class="notice notice-info" role="status">Only an admin can pause live fulfilment or set the Fragment session.</p>`}
${paymentsSection(payments, ctx.tonNetwork)}`;
    return consolePage({ session, csrf }, { title: 'Live', section: 'live', body, notice: options.status });
  };

  web.get('/live', 'support', async (request, reply) => sendHtml(reply, await livePage(request, { status: NOTICES[field(request.query, 'notice')] })));

  web.get('/live/check', 'support', async (request, reply) => {
    const check = await web.ctx.liveCheck();
    return sendHtml(reply, await livePage(request, { status: NOTICES[field(request.query, 'notice')], check }));
  });

  web.post('/live/session', 'admin', async (request, reply) => {
    const session = web.session(request);
    try {
      await operatorSetFragmentSession(web.ctx.db.kysely, {
        raw: field(request.body, 'cookies'),
        actor: session.email,
        console: { operatorId: session.operatorId, ip: request.ip },
      });
    } catch (error) {
      // The message names cookies, never a value; the pasted text is not put back in the form.
      if (error instanceof SessionFormatError) return sendHtml(reply, await livePage(request, { status: notice('error', `${error.message}. Nothing was stored.`) }), 400);
      throw error;
    }
    return redirect(reply, '/live/check?notice=session_set');
  });

  // Pause and resume: one form each, the same operation shape (src/operator/live-pause.ts).
  const switchRoute = (path: string, operate: typeof operatorPauseLive, notices: { changed: string; unchanged: string }) =>
    web.post(path, 'admin', async (request, reply) => {
      const session = web.session(request);
      try {
        const { changed } = await operate(web.ctx.db.kysely, {
          actor: session.email,
          reason: field(request.body, 'reason'),
          console: { operatorId: session.operatorId, ip: request.ip },
        });
        return redirect(reply, `/live?notice=${changed ? notices.changed : notices.unchanged}`);
      } catch (error) {
        if (error instanceof PauseError) return sendHtml(reply, await livePage(request, { status: notice('error', `${capitalized(error.message)}. Nothing was changed.`) }), 400);
        throw error;
      }
    });
  switchRoute('/live/pause', operatorPauseLive, { changed: 'paused', unchanged: 'already_paused' });
  switchRoute('/live/resume', operatorResumeLive, { changed: 'resumed', unchanged: 'not_paused' });
}

const capitalized = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
