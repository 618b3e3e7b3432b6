import { DEFAULT_BRAND } from '../../domain/brand.js';
import type { OperatorSession } from '../../operator/operator-sessions.js';
import { brandMark, csrfField, document } from '../html/document.js';
import { type Html, html, type Slot } from '../html/html.js';

/** The console's chrome: a top bar marked "Operator console", its menu, the operator and sign-out. */
export type Section = 'home' | 'accounts' | 'orders' | 'deposits' | 'live' | 'audit' | 'plans';

const NAV: { section: Section; label: string; path: string }[] = [
  { section: 'home', label: 'Home', path: '/' },
  { section: 'accounts', label: 'Accounts', path: '/accounts' },
  { section: 'orders', label: 'Orders', path: '/orders' },
  { section: 'deposits', label: 'Deposits', path: '/deposits' },
  { section: 'live', label: 'Live', path: '/live' },
  { section: 'plans', label: 'Plans', path: '/plans' },
  { section: 'audit', label: 'Audit', path: '/audit' },
];

export interface ConsoleView {
  session: OperatorSession;
  csrf: string;
}

export function consolePage(view: ConsoleView, options: { title: string; section?: Section; body: Slot; notice?: Slot; charts?: boolean }): Html {
  const nav = NAV.map((n) => html`<li><a href="${n.path}"${n.section === options.section ? html` aria-current="page"` : ''}>${n.label}</a></li>`);
  const body = html`<a class="skip-link" href="#main">Skip to content</a>
<div class="chrome">
<div class="test-banner console-banner" role="note"><strong>Operator console</strong> <span class="banner-text">Actions here change clients' accounts and are recorded in the audit log with your name.</span></div>
<header class="topbar">
  <div class="topbar-inner">
    <a class="brand" href="/" aria-label="${DEFAULT_BRAND.name} operator console home">${brandMark(DEFAULT_BRAND)}</a>
    <button type="button" class="button button-secondary button-small menu-toggle" aria-expanded="false" aria-controls="site-menu" hidden>Menu</button>
    <div id="site-menu" class="site-menu">
      <nav class="mainnav" aria-label="Main">
        <ul>${nav}</ul>
      </nav>
      <form method="post" action="/logout" class="logout-form">
        ${csrfField(view.csrf)}
        <span class="account-email" data-testid="operator-email"><span class="visually-hidden">Signed in as </span>${view.session.email} <span class="muted">· ${view.session.role}</span></span>
        <button type="submit" class="button button-quiet button-small">Sign out</button>
      </form>
    </div>
  </div>
</header>
</div>
<main id="main" class="container" tabindex="-1">
${options.notice ?? ''}
${options.body}
</main>`;
  return document(DEFAULT_BRAND, { title: `${options.title} · Console`, body, bodyClass: 'mode-live console', charts: options.charts });
}
