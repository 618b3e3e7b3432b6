import { accountForMemo, normalizeMemo } from '../../../accounts/deposit-memo.js';
import { type AccountSummary, findAccount } from '../../../accounts/admin.js';
import { findOrderById } from '../../../orders/order-store.js';
import { notice } from '../../html/document.js';
import { html, type Slot } from '../../html/html.js';
import { field, redirect, sendHtml } from '../../html/http.js';
import type { Console } from '../console.js';
import { consolePage } from '../layout.js';
import { accountActions } from './account-actions.js';
import { accountPage } from './account-page.js';

/**
 * Accounts: search by e-mail, account id, deposit memo or order id, and an account's page
 * (./account-page.ts) whose forms ./account-actions.ts takes.
 */
async function search(web: Console, query: string): Promise<AccountSummary | undefined> {
  const q = query.trim();
  if (q === '') return undefined;
  const db = web.ctx.db.kysely;
  if (q.includes('@') || q.startsWith('acct_')) return findAccount(db, q);
  if (q.startsWith('ord_')) {
    const order = await findOrderById(db, q);
    return order ? findAccount(db, order.accountId) : undefined;
  }
  const byMemo = await accountForMemo(db, normalizeMemo(q));
  return byMemo ? findAccount(db, byMemo) : undefined;
}

const NOTICES: Record<string, Slot> = {
  credited: notice('success', 'The balance was adjusted and the action recorded in the audit log.'),
  status: notice('success', 'The account status was changed and the action recorded in the audit log.'),
  'key-revoked': notice('success', 'The key was revoked: it answers 401 api_key_revoked from the next request. Recorded in the audit log.'),
  'two-factor': notice('success', 'The two-factor sign-in was turned off and every session of the person ended; recorded in the audit log.'),
};

export function accountRoutes(web: Console): void {
  web.get('/accounts', 'support', async (request, reply) => {
    const session = web.session(request);
    const q = field(request.query, 'q');
    const found = q ? await search(web, q) : undefined;
    if (found) return redirect(reply, `/accounts/${found.id}`);
    const body = html`<h1>Accounts</h1>
<form method="get" action="/accounts" class="stack" role="search">
  <div class="field"><label for="q">E-mail, account id, deposit memo or order id</label>
  <input id="q" name="q" type="search" value="${q}" required></div>
  <button type="submit" class="button button-primary">Find</button>
</form>
${q ? html`<p class="notice notice-info" role="status" data-testid="no-match">No account matches “${q}”.</p>` : ''}`;
    return sendHtml(reply, consolePage({ session, csrf: web.token(request) }, { title: 'Accounts', section: 'accounts', body }), q ? 404 : 200);
  });

  web.get('/accounts/:id', 'support', async (request, reply) => {
    const id = (request.params as { id: string }).id;
    const { code, page } = await accountPage(web, request, id, NOTICES[field(request.query, 'notice')]);
    return sendHtml(reply, page, code);
  });

  accountActions(web);
}
