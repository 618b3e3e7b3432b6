import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { brandConfig } from '../../src/brand-config.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { contrastRatio, DEFAULT_BRAND, envPrefix, formatRatio, hexColor, logoType, MAX_LOGO_BYTES, slug, weakestContrast } from '../../src/domain/brand.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brand-config-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function file(name: string, body: string | Buffer): string {
  const at = path.join(dir, name);
  fs.writeFileSync(at, body);
  return at;
}

const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64)]);
const SVG = '<?xml version="1.0"?>\n<!-- logo -->\n<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><rect width="10" height="10"/></svg>\n';

describe('brand settings', () => {
  it('unset: today’s name and nothing else', () => {
    expect(loadConfig({}).brand).toEqual(DEFAULT_BRAND);
    expect(DEFAULT_BRAND.name).toBe('Starport');
  });

  it('reads every variable', () => {
    const brand = brandConfig({
      BRAND_NAME: ' Acme Stars ',
      BRAND_COLOR: '#0B6E4F',
      BRAND_LOGO_FILE: file('logo.svg', SVG),
      SUPPORT_EMAIL: 'help@acme.example',
      SUPPORT_URL: 'https://acme.example/help/',
      TERMS_URL: 'https://acme.example/terms',
      PRIVACY_URL: 'https://acme.example/privacy',
    });
    expect(brand).toMatchObject({
      name: 'Acme Stars',
      color: '#0b6e4f',
      supportEmail: 'help@acme.example',
      supportUrl: 'https://acme.example/help',
      termsUrl: 'https://acme.example/terms',
      privacyUrl: 'https://acme.example/privacy',
    });
    expect(brand.logo?.type).toBe('image/svg+xml');
    expect(envPrefix(brand)).toBe('ACME_STARS');
    expect(slug(brand)).toBe('acme-stars');
    expect([envPrefix(DEFAULT_BRAND), slug(DEFAULT_BRAND)]).toEqual(['STARPORT', 'starport']);
  });

  it('refuses a name that is not one short line', () => {
    expect(() => brandConfig({ BRAND_NAME: 'Acme\nStars' })).toThrow(/^BRAND_NAME must be one line/);
    expect(() => brandConfig({ BRAND_NAME: 'x'.repeat(61) })).toThrow(/^BRAND_NAME must be one line of at most 60 characters/);
  });

  it('refuses bad contact and legal links, naming the variable', () => {
    expect(() => brandConfig({ SUPPORT_EMAIL: 'not an address' })).toThrow(/^SUPPORT_EMAIL must be an e-mail address, got "not an address"/);
    for (const name of ['SUPPORT_URL', 'TERMS_URL', 'PRIVACY_URL']) {
      expect(() => brandConfig({ [name]: 'javascript:alert(1)' })).toThrow(new RegExp(`^${name} must be an http\\(s\\) URL`));
      expect(() => brandConfig({ [name]: 'acme.example/terms' })).toThrow(new RegExp(`^${name} must be an absolute http\\(s\\) URL`));
    }
  });
});

describe('BRAND_COLOR and WCAG AA contrast', () => {
  it('computes WCAG 2 ratios', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(contrastRatio('#ffffff', '#ffffff')).toBe(1);
    // #767676 is the lightest grey that passes 4.5:1 on white; #777777 just fails.
    expect(contrastRatio('#767676', '#ffffff')).toBeGreaterThanOrEqual(4.5);
    expect(contrastRatio('#777777', '#ffffff')).toBeLessThan(4.5);
    expect(hexColor('abc')).toBe('#aabbcc');
    expect(hexColor('#12345')).toBeUndefined();
  });

  it('accepts the stylesheet’s own indigo and a dark green', () => {
    expect(brandConfig({ BRAND_COLOR: '#4338ca' }).color).toBe('#4338ca');
    expect(brandConfig({ BRAND_COLOR: '0b6e4f' }).color).toBe('#0b6e4f');
  });

  it('refuses a colour below 4.5:1 on a dashboard background, naming the variable, the background and the ratio', () => {
    for (const color of ['#ffcc00', '#777777', '#7c9cff']) {
      const weakest = weakestContrast(color);
      expect(weakest.ratio).toBeLessThan(4.5);
      let error: unknown;
      try {
        brandConfig({ BRAND_COLOR: color });
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain(`BRAND_COLOR ${color} has a contrast ratio of ${formatRatio(weakest.ratio)}:1 against ${weakest.background}`);
      expect((error as Error).message).toContain('at least 4.5:1');
    }
    // Yellow on white is about 1.6:1.
    expect(() => brandConfig({ BRAND_COLOR: '#ffcc00' })).toThrow(/contrast ratio of 1\.\d\d:1/);
  });

  it('refuses what is not a hex colour', () => {
    expect(() => brandConfig({ BRAND_COLOR: 'red' })).toThrow(/^BRAND_COLOR must be a hex colour such as #4338ca, got "red"/);
  });
});

describe('BRAND_LOGO_FILE', () => {
  it('accepts a PNG and an SVG by their content, whatever their names', () => {
    expect(brandConfig({ BRAND_LOGO_FILE: file('logo.dat', PNG) }).logo).toEqual({ body: PNG, type: 'image/png' });
    expect(brandConfig({ BRAND_LOGO_FILE: file('logo.png', SVG) }).logo?.type).toBe('image/svg+xml');
  });

  it('refuses anything else, named with the file', () => {
    const jpeg = file('logo.jpg', Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46]));
    expect(() => brandConfig({ BRAND_LOGO_FILE: jpeg })).toThrow(`BRAND_LOGO_FILE must be an SVG or PNG image, "${jpeg}" is neither`);
    const html = file('logo.svg', '<html><body><svg></svg><script>alert(1)</script></body></html>');
    expect(() => brandConfig({ BRAND_LOGO_FILE: html })).toThrow(/^BRAND_LOGO_FILE must be an SVG or PNG image/);
    expect(logoType(Buffer.from(''))).toBeUndefined();
  });

  it(`refuses a file over ${MAX_LOGO_BYTES / 1024} KiB, with its size`, () => {
    const big = file('big.png', Buffer.concat([PNG, Buffer.alloc(MAX_LOGO_BYTES)]));
    expect(() => brandConfig({ BRAND_LOGO_FILE: big })).toThrow(`BRAND_LOGO_FILE must be at most 256 KiB, "${big}" has ${MAX_LOGO_BYTES + PNG.length} bytes`);
    const exact = file('exact.png', Buffer.concat([PNG, Buffer.alloc(MAX_LOGO_BYTES - PNG.length)]));
    expect(brandConfig({ BRAND_LOGO_FILE: exact }).logo?.body.length).toBe(MAX_LOGO_BYTES);
  });

  it('refuses a file that cannot be read', () => {
    const missing = path.join(dir, 'missing.svg');
    expect(() => brandConfig({ BRAND_LOGO_FILE: missing })).toThrow(`BRAND_LOGO_FILE cannot be read: "${missing}" (ENOENT)`);
  });
});
