import { createHash } from 'node:crypto';
import { type Brand, shade, TINT_WEIGHT, tint } from '../../domain/brand.js';

/**
 * The brand's files (docs/operations.md "Branding"): the logo, and a small stylesheet that sets
 * the accent, served from our own origin under content-hashed names beside the dashboard's own
 * assets (src/http/web/assets.ts), so the Content-Security-Policy stays 'self' and no inline style
 * is needed. Made once per brand (a service has one).
 */
export interface BrandFile {
  url: string;
  body: Buffer;
  type: string;
  /** The policy of the file itself: an SVG opened on its own runs no script and loads nothing. */
  csp?: string;
}

interface BrandFiles {
  logo: BrandFile | undefined;
  css: BrandFile | undefined;
}

/** An SVG logo is an image, never a document that runs script (docs/operations.md "Branding"). */
const LOGO_CSP = "default-src 'none'; sandbox";

const made = new WeakMap<Brand, BrandFiles>();

export function brandFiles(brand: Brand): BrandFiles {
  const known = made.get(brand);
  if (known) return known;
  const { logo, color } = brand;
  const files = {
    logo: logo ? file('brand-logo', logo.type === 'image/png' ? 'png' : 'svg', logo.body, logo.type) : undefined,
    css: color ? accentCss(color) : undefined,
  };
  made.set(brand, files);
  return files;
}

/** The file `/assets/<name>` stands for, if it is one of the brand's. */
export function brandFile(brand: Brand, name: string): BrandFile | undefined {
  const { logo, css } = brandFiles(brand);
  return [logo, css].find((f) => f?.url === `/assets/${name}`);
}

function file(base: string, ext: string, body: Buffer, type: string): BrandFile {
  const url = `/assets/${base}.${createHash('sha256').update(body).digest('hex').slice(0, 10)}.${ext}`;
  return { url, body, type, ...(type === 'image/svg+xml' && { csp: LOGO_CSP }) };
}

/** The accent overrides app.css's indigo: links, buttons, the current menu entry, the mark. */
function accentCss(color: string): BrandFile {
  const soft = tint(color, TINT_WEIGHT);
  const css = `:root { --primary: ${color}; --primary-hover: ${shade(color, 0.8)}; --primary-soft: ${soft}; }
.brand-mark { background: ${color}; }
.signed-out { background: linear-gradient(180deg, ${soft} 0%, var(--bg) 45%); }
.card.is-current { border-color: ${tint(color, 0.4)}; }
`;
  return file('brand', 'css', Buffer.from(css), 'text/css; charset=utf-8');
}
