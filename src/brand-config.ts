import fs from 'node:fs';
import { type Brand, DEFAULT_BRAND_NAME, formatRatio, hexColor, logoType, MAX_LOGO_BYTES, MIN_TEXT_CONTRAST, weakestContrast } from './domain/brand.js';
import { ConfigError, type Env, httpUrl } from './env.js';
import { isMailAddress } from './notifications/outbox.js';

/** The brand: a logo checked by its content and size, an accent refused below WCAG AA contrast. */
export function brandConfig(env: Env): Brand {
  const name = (env.BRAND_NAME ?? '').trim() || DEFAULT_BRAND_NAME;
  if (name.length > 60 || /[\u0000-\u001f\u007f]/.test(name)) throw new ConfigError(`BRAND_NAME must be one line of at most 60 characters, got "${name.slice(0, 80)}"`);
  const supportEmail = env.SUPPORT_EMAIL?.trim() || undefined;
  if (supportEmail && !isMailAddress(supportEmail)) throw new ConfigError(`SUPPORT_EMAIL must be an e-mail address, got "${supportEmail}"`);
  return {
    name,
    logo: brandLogo(env.BRAND_LOGO_FILE),
    color: brandColor(env.BRAND_COLOR),
    supportEmail,
    supportUrl: httpUrl(env, 'SUPPORT_URL'),
    termsUrl: httpUrl(env, 'TERMS_URL'),
    privacyUrl: httpUrl(env, 'PRIVACY_URL'),
  };
}

function brandLogo(file: string | undefined): Brand['logo'] {
  if (!file) return undefined;
  let body: Buffer;
  try {
    const size = fs.statSync(file).size;
    if (size > MAX_LOGO_BYTES) throw new ConfigError(`BRAND_LOGO_FILE must be at most ${MAX_LOGO_BYTES / 1024} KiB, "${file}" has ${size} bytes`);
    body = fs.readFileSync(file);
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`BRAND_LOGO_FILE cannot be read: "${file}" (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const type = logoType(body);
  if (!type) throw new ConfigError(`BRAND_LOGO_FILE must be an SVG or PNG image, "${file}" is neither (checked by its content)`);
  return { body, type };
}

function brandColor(raw: string | undefined): string | undefined {
  if (!raw) return undefined;
  const color = hexColor(raw);
  if (!color) throw new ConfigError(`BRAND_COLOR must be a hex colour such as #4338ca, got "${raw}"`);
  const weakest = weakestContrast(color);
  if (weakest.ratio < MIN_TEXT_CONTRAST) {
    throw new ConfigError(
      `BRAND_COLOR ${color} has a contrast ratio of ${formatRatio(weakest.ratio)}:1 against ${weakest.background}; WCAG AA needs at least ${MIN_TEXT_CONTRAST}:1 for text: choose a darker colour`,
    );
  }
  return color;
}
