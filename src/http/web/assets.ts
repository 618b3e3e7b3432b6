import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PACKAGE_ROOT } from '../../config.js';

/**
 * The dashboard's static files (our own CSS, a small script, the icon), read once at start-up
 * and served from memory under content-hashed names, so they can be cached for a year and a
 * new version is fetched as soon as it changes. tsc does not copy non-TypeScript files, so
 * the compiled server reads them from src/ (both are in the package).
 */
const FILES = { css: 'app.css', js: 'app.js', icon: 'icon.svg' } as const;
const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

function assetDir(): string {
  const beside = fileURLToPath(new URL('./assets/', import.meta.url));
  return fs.existsSync(path.join(beside, FILES.css)) ? beside : path.join(PACKAGE_ROOT, 'src', 'http', 'web', 'assets');
}

export interface Asset {
  body: Buffer;
  type: string;
}

const dir = assetDir();
/** Served files by hashed name (e.g. app.3f2a9c1b.css). */
export const ASSETS = new Map<string, Asset>();
/** Where pages link them. */
export const ASSET_URLS = {} as Record<keyof typeof FILES, string>;

for (const [key, file] of Object.entries(FILES) as [keyof typeof FILES, string][]) {
  const body = fs.readFileSync(path.join(dir, file));
  const ext = path.extname(file);
  const hashed = `${path.basename(file, ext)}.${createHash('sha256').update(body).digest('hex').slice(0, 10)}${ext}`;
  ASSETS.set(hashed, { body, type: TYPES[ext] ?? 'application/octet-stream' });
  ASSET_URLS[key] = `/assets/${hashed}`;
}
