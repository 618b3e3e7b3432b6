import { ASSET_URLS } from './assets.js';
import { type Html, html, type Slot } from './html.js';

/**
 * The HTML shell both browser faces share (the client dashboard, src/http/web, and the
 * operator console, src/http/console): the document with our own files only (the strict CSP of
 * http.ts), the brand, notices, the CSRF field and the error card.
 */
export function document(options: { title: string; body: Slot; bodyClass?: string; charts?: boolean }): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>${options.title} · Starport</title>
<link rel="icon" href="${ASSET_URLS.icon}" type="image/svg+xml">
${
  options.charts
    ? html`<link rel="stylesheet" href="${ASSET_URLS.chartCss}">
<script src="${ASSET_URLS.chartJs}" defer></script>
`
    : ''
}<link rel="stylesheet" href="${ASSET_URLS.css}">
<script src="${ASSET_URLS.js}" defer></script>
</head>
<body class="${options.bodyClass ?? ''}">
${options.body}
</body>
</html>
`;
}

export const brand = html`<span class="brand-mark" aria-hidden="true"></span><span class="brand-name">Starport</span>`;

export function csrfField(token: string): Html {
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

export function notice(kind: 'success' | 'error' | 'info' | 'warning', message: Slot): Html {
  const role = kind === 'error' ? 'alert' : 'status';
  return html`<div class="notice notice-${kind}" role="${role}">${message}</div>`;
}

export function errorPage(status: number, heading: string, message: Slot, action: { href: string; label: string } = { href: '/', label: 'Go to the overview' }): Html {
  return document({
    title: heading,
    bodyClass: 'signed-out',
    body: html`<main id="main" class="auth">
  <a class="brand auth-brand" href="/" aria-label="Starport">${brand}</a>
  <div class="card auth-card">
    <p class="eyebrow">Error ${status}</p>
    <h1>${heading}</h1>
    <p>${message}</p>
    <p><a class="button" href="${action.href}">${action.label}</a></p>
  </div>
</main>`,
  });
}
