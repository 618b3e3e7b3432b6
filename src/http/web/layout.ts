import type { Mode } from '../../domain/api-key.js';
import type { Session } from '../../accounts/sessions.js';
import type { Brand } from '../../domain/brand.js';
import { authFooter, brandLinks, brandMark, csrfField, document, errorPage, joined } from '../html/document.js';
import { modePath } from '../html/format.js';
import { type Html, html, type Slot } from '../html/html.js';

export { csrfField, errorPage, notice } from '../html/document.js';
import { may } from './rules.js';
import { verifyBanner } from './verify-banner.js';

/** The page shell and the dashboard's chrome: top bar, navigation, test-mode switch and banner. */
export type Section = 'overview' | 'top-up' | 'keys' | 'orders' | 'balance' | 'statements' | 'webhooks' | 'alerts' | 'guide' | 'team' | 'activity' | 'account';

export interface View {
  session: Session;
  mode: Mode;
  /** The CSRF token of this session, for every form. */
  csrf: string;
  brand: Brand;
}

/** The menu; a role sees the entries it may open (src/http/web/rules.ts, the table the server's guard applies). */
const NAV: { section: Section; label: string; path: string }[] = [
  { section: 'overview', label: 'Overview', path: '/' },
  { section: 'top-up', label: 'Top up', path: '/top-up' },
  { section: 'keys', label: 'API keys', path: '/keys' },
  { section: 'orders', label: 'Orders', path: '/orders' },
  { section: 'balance', label: 'Balance history', path: '/balance' },
  { section: 'statements', label: 'Statements', path: '/statements' },
  { section: 'webhooks', label: 'Webhooks', path: '/webhooks' },
  { section: 'alerts', label: 'Alerts', path: '/alerts' },
  { section: 'guide', label: 'First order', path: '/guide' },
];
/** Pages outside the test/live pair (reached from the account page: the e-mail in the header). */
const MODELESS: Section[] = ['team', 'activity', 'account'];

export function dashboardPage(view: View, options: { title: string; section?: Section; body: Slot; notice?: Slot; charts?: boolean }): Html {
  const { mode, brand } = view;
  const other: Mode = mode === 'live' ? 'test' : 'live';
  const section = options.section;
  const sectionPath = !section || MODELESS.includes(section) ? '/' : (NAV.find((n) => n.section === section)?.path ?? '/');
  const nav = NAV.filter((n) => may(view.session.role, 'GET', n.path)).map(
    (n) => html`<li><a href="${modePath(mode, n.path)}"${n.section === options.section ? html` aria-current="page"` : ''}>${n.label}</a></li>`,
  );
  const testOn = mode === 'test';
  const body = html`<a class="skip-link" href="#main">Skip to content</a>
<div class="chrome">
${testOn ? html`<div class="test-banner" role="note"><strong>Test mode</strong> <span class="banner-text">You are viewing test data. Test orders are simulated and never reach Telegram.</span> <a href="${modePath('live', sectionPath)}">Switch to live data</a></div>` : ''}
<header class="topbar">
  <div class="topbar-inner">
    <a class="brand" href="${modePath(mode, '/')}" aria-label="${brand.name} overview">${brandMark(brand)}</a>
    <a class="mode-switch${testOn ? ' is-on' : ''}" href="${modePath(other, sectionPath)}" title="${testOn ? 'Switch to live data' : 'Switch to test data'}">
      <span class="switch-track" aria-hidden="true"><span class="switch-thumb"></span></span>
      <span>Test mode<span class="visually-hidden">${testOn ? ' is on: switch to live data' : ' is off: switch to test data'}</span></span>
    </a>
    <button type="button" class="button button-secondary button-small menu-toggle" aria-expanded="false" aria-controls="site-menu" hidden>Menu</button>
    <div id="site-menu" class="site-menu">
      <nav class="mainnav" aria-label="Main">
        <ul>${nav}<li><a href="/docs">Docs</a></li></ul>
      </nav>
      <form method="post" action="/logout" class="logout-form">
        ${csrfField(view.csrf)}
        <a class="account-email" href="/account" title="${view.session.email}" data-testid="account-email"><span class="visually-hidden">Signed in as </span>${view.session.email}${view.session.accountEmail !== view.session.email ? html` <span class="muted" data-testid="current-account">· ${view.session.accountEmail}</span>` : ''}</a>
        <button type="submit" class="button button-quiet button-small">Log out</button>
      </form>
    </div>
  </div>
</header>
</div>
<main id="main" class="container" tabindex="-1">
${view.session.emailUnverified ? verifyBanner(view.session.email, view.csrf) : ''}
${options.notice ?? ''}
${options.body}
</main>
<footer class="footer container">${joined([html`<span>${brand.name}</span>`, html`<a href="/docs">API reference</a>`, html`<a href="${modePath('test', '/guide')}">First order guide</a>`, ...brandLinks(brand)])}</footer>`;
  return document(brand, { title: `${options.title}${testOn ? ' (test)' : ''}`, body, bodyClass: testOn ? 'mode-test' : 'mode-live', charts: options.charts });
}

/** The centred card of the signed-out pages. */
export function authPage(brand: Brand, options: { title: string; heading: string; body: Slot; status?: Slot }): Html {
  const body = html`<main id="main" class="auth">
  <a class="brand auth-brand" href="/login" aria-label="${brand.name}">${brandMark(brand)}</a>
  <div class="card auth-card">
    <h1>${options.heading}</h1>
    ${options.status ?? ''}
    ${options.body}
  </div>
  ${authFooter(brand)}
</main>`;
  return document(brand, { title: options.title, body, bodyClass: 'signed-out' });
}

export function csrfErrorPage(brand: Brand): Html {
  return errorPage(brand, 403, 'This form has expired', 'For your security the form could not be accepted. Reload the page and submit it again.', {
    href: '/',
    label: 'Reload the dashboard',
  });
}
