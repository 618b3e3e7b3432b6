/**
 * The reseller's brand (docs/operations.md "Branding"): the name, logo, accent colour and
 * contact links shown to clients on the dashboard, the signed-out pages, e-mails, Telegram
 * messages and the API reference. Unset, every value is today's: "Starport", its star mark and
 * its indigo.
 */
export interface Brand {
  /** BRAND_NAME. */
  name: string;
  /** BRAND_LOGO_FILE, read and checked at start-up; undefined = the built-in star mark. */
  logo: BrandLogo | undefined;
  /** BRAND_COLOR as #rrggbb (lower case); undefined = the stylesheet's own accent. */
  color: string | undefined;
  supportEmail: string | undefined;
  supportUrl: string | undefined;
  termsUrl: string | undefined;
  privacyUrl: string | undefined;
}

export interface BrandLogo {
  body: Buffer;
  type: 'image/svg+xml' | 'image/png';
}

export const DEFAULT_BRAND_NAME = 'Starport';

export const DEFAULT_BRAND: Brand = {
  name: DEFAULT_BRAND_NAME,
  logo: undefined,
  color: undefined,
  supportEmail: undefined,
  supportUrl: undefined,
  termsUrl: undefined,
  privacyUrl: undefined,
};

/** The largest logo accepted: it is served on every page, from memory. */
export const MAX_LOGO_BYTES = 256 * 1024;

/**
 * The backgrounds the accent is drawn on or against (src/http/web/assets/app.css, light only:
 * the dashboard declares `color-scheme: light`): the page, the cards and the white text of a
 * primary button. The tinted background of the current menu entry and of pills is derived from
 * the accent (`tint`), and checked with them.
 */
const ACCENT_BACKGROUNDS = [
  { name: 'the card background #ffffff', color: '#ffffff' },
  { name: 'the page background #f5f6f8', color: '#f5f6f8' },
] as const;

/** WCAG 2 AA for normal text. */
export const MIN_TEXT_CONTRAST = 4.5;

/** `#rgb` or `#rrggbb` (the `#` optional) as `#rrggbb`; undefined when it is neither. */
export function hexColor(raw: string): string | undefined {
  const match = /^#?([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(raw.trim());
  if (!match) return undefined;
  const digits = (match[1] as string).toLowerCase();
  return `#${digits.length === 3 ? [...digits].map((d) => d + d).join('') : digits}`;
}

function channels(hex: string): [number, number, number] {
  const value = Number.parseInt(hex.slice(1), 16);
  return [(value >> 16) & 0xff, (value >> 8) & 0xff, value & 0xff];
}

/** WCAG 2 relative luminance of a #rrggbb colour. */
function luminance(hex: string): number {
  const [r, g, b] = channels(hex).map((c) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** The WCAG 2 contrast ratio of two #rrggbb colours, from 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/** The ratio shown in messages: rounded down to two decimals, so 4.499 never reads as 4.5. */
export function formatRatio(ratio: number): string {
  return (Math.floor(ratio * 100) / 100).toFixed(2);
}

/** How much of the accent its tinted background (current menu entry, pills) holds. */
export const TINT_WEIGHT = 0.08;

/** The background the accent contrasts least with (its own tint included), and that ratio. */
export function weakestContrast(accent: string): { background: string; ratio: number } {
  const soft = tint(accent, TINT_WEIGHT);
  const backgrounds = [...ACCENT_BACKGROUNDS, { name: `its own tint ${soft} (the current menu entry)`, color: soft }];
  const [first, ...rest] = backgrounds.map((bg) => ({ background: bg.name, ratio: contrastRatio(accent, bg.color) }));
  return rest.reduce((worst, next) => (next.ratio < worst.ratio ? next : worst), first as { background: string; ratio: number });
}

/** `accent` mixed with white, `weight` (0–1) of the accent: the tinted backgrounds. */
export function tint(accent: string, weight: number): string {
  return mix(accent, '#ffffff', weight);
}

/** `accent` mixed with black, `weight` (0–1) of the accent: the hover shade. */
export function shade(accent: string, weight: number): string {
  return mix(accent, '#000000', weight);
}

function mix(a: string, b: string, weight: number): string {
  const [ca, cb] = [channels(a), channels(b)];
  return `#${ca
    .map((c, i) =>
      Math.round(c * weight + (cb[i] as number) * (1 - weight))
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')}`;
}

/** The brand name as an environment-variable prefix: "Acme Stars" → ACME_STARS. */
export function envPrefix(brand: Brand): string {
  return (
    brand.name
      .toUpperCase()
      .replace(/[^A-Z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '') || 'API'
  );
}

/** The brand name as a URL path segment: "Acme Stars" → acme-stars. */
export function slug(brand: Brand): string {
  return (
    brand.name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'orders'
  );
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * What a logo file is, by its content (not its name): a PNG by its signature, an SVG by an
 * `<svg` root element after an optional BOM, XML declaration, comments and doctype; else undefined.
 */
export function logoType(body: Buffer): BrandLogo['type'] | undefined {
  if (body.length > PNG_SIGNATURE.length && body.subarray(0, PNG_SIGNATURE.length).equals(PNG_SIGNATURE)) return 'image/png';
  const text = body.toString('utf8').replace(/^\uFEFF/, '');
  const prologue = /^\s*(?:<\?xml[^>]*\?>\s*)?(?:(?:<!--[\s\S]*?-->|<!DOCTYPE[^>]*>)\s*)*<svg[\s>]/i;
  return prologue.test(text) && /<\/svg>\s*$/i.test(text) ? 'image/svg+xml' : undefined;
}
