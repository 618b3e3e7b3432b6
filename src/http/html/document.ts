import type { Brand } from '../../domain/brand.js';
import { ASSET_URLS } from './assets.js';
import { brandFiles } from './brand.js';
import { type Html, html, type Slot } from './html.js';

/**
 * The HTML shell both browser faces share (the client dashboard, src/http/web, and the
 * operator console, src/http/console): the document with our own files only (the strict CSP of
 * http.ts), the brand (docs/operations.md "Branding"), notices, the CSRF field and the error card.
 */
export function document(brand: Brand, options: { title: string; body: Slot; bodyClass?: string; charts?: boolean }): Html {
  const files = brandFiles(brand);
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>${options.title} · ${brand.name}</title>
<link rel="icon" href="${files.logo?.url ?? ASSET_URLS.icon}" type="${files.logo?.type ?? 'image/svg+xml'}">
${
  options.charts
    ? html`<link rel="stylesheet" href="${ASSET_URLS.chartCss}">
<script src="${ASSET_URLS.chartJs}" defer></script>
`
    : ''
}<link rel="stylesheet" href="${ASSET_URLS.css}">
${
  files.css
    ? html`<link rel="stylesheet" href="${files.css.url}">
`
    : ''
}<script src="${ASSET_URLS.js}" defer></script>
</head>
<body class="${options.bodyClass ?? ''}">
${options.body}
</body>
</html>
`;
}

export function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

/** The logo (or the built-in mark) and the name; the link around it carries the accessible name. */
export function brandMark(brand: Brand): Html {
  const logo = brandFiles(brand).logo;
  const mark = logo ? html`<img class="brand-logo" src="${logo.url}" alt="" data-testid="brand-logo">` : html`<span class="brand-mark" aria-hidden="true"></span>`;
  return html`${mark}<span class="brand-name">${brand.name}</span>`;
}

/** Support, terms and privacy, as far as the operator set them (nothing when none is). */
export function brandLinks(brand: Brand): Html[] {
  const links: Html[] = [];
  if (brand.supportUrl) links.push(html`<a href="${brand.supportUrl}" data-testid="support-link">Support</a>`);
  else if (brand.supportEmail) links.push(html`<a href="mailto:${brand.supportEmail}" data-testid="support-link">Support</a>`);
  if (brand.termsUrl) links.push(html`<a href="${brand.termsUrl}" data-testid="terms-link">Terms</a>`);
  if (brand.privacyUrl) links.push(html`<a href="${brand.privacyUrl}" data-testid="privacy-link">Privacy</a>`);
  return links;
}

export function joined(parts: Html[]): Html[] {
  return parts.flatMap((part, i) => (i === 0 ? [part] : [html` · `, part]));
}

/** A page of the signed-in dashboard; `section` is the menu entry it belongs to (none: an error page). */
export function notice(kind: 'success' | 'error' | 'info' | 'warning', message: Slot): Html {
  const role = kind === 'error' ? 'alert' : 'status';
  return html`<div class="notice notice-${kind}" role="${role}">${message}</div>`;
}

/** The signed-out pages' footer: the operator's support and legal links, when set. */
export function authFooter(brand: Brand): Slot {
  const links = brandLinks(brand);
  return links.length > 0 ? html`<footer class="auth-footer" data-testid="auth-footer">${joined(links)}</footer>` : '';
}

export function errorPage(
  brand: Brand,
  status: number,
  heading: string,
  message: Slot,
  action: { href: string; label: string } = { href: '/', label: 'Go to the overview' },
): Html {
  return document(brand, {
    title: heading,
    bodyClass: 'signed-out',
    body: html`<main id="main" class="auth">
  <a class="brand auth-brand" href="/" aria-label="${brand.name}">${brandMark(brand)}</a>
  <div class="card auth-card">
    <p class="eyebrow">Error ${status}</p>
    <h1>${heading}</h1>
    <p>${message}</p>
    <p><a class="button" href="${action.href}">${action.label}</a></p>
  </div>
  ${authFooter(brand)}
</main>`,
  });
}
