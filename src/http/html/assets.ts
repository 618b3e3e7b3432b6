import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
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
/**
 * The overview's charting library, uPlot (MIT, ~50 KB), served from its npm package like our
 * own files: no CDN, and the Content-Security-Policy stays 'self' only.
 */
const require = createRequire(import.meta.url);
const LIBRARY_FILES = {
  chartJs: require.resolve('uplot/dist/uPlot.iife.min.js'),
  chartCss: require.resolve('uplot/dist/uPlot.min.css'),
} as const;
const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
};

function assetDir(): string {
  const beside = fileURLToPath(new URL('./assets/', import.meta.url));
  return fs.existsSync(path.join(beside, FILES.css)) ? beside : path.join(PACKAGE_ROOT, 'src', 'http', 'html', 'assets');
}

export interface Asset {
  body: Buffer;
  type: string;
}

const dir = assetDir();
/** Served files by hashed name (e.g. app.3f2a9c1b.css). */
export const ASSETS = new Map<string, Asset>();
/** Where pages link them. */
export const ASSET_URLS = {} as Record<keyof typeof FILES | keyof typeof LIBRARY_FILES, string>;

const sources = [...Object.entries(FILES).map(([key, file]) => [key, path.join(dir, file)]), ...Object.entries(LIBRARY_FILES)] as [keyof typeof ASSET_URLS, string][];
for (const [key, file] of sources) {
  const body = fs.readFileSync(file);
  const ext = path.extname(file);
  const hashed = `${path.basename(file, ext)}.${createHash('sha256').update(body).digest('hex').slice(0, 10)}${ext}`;
  ASSETS.set(hashed, { body, type: TYPES[ext] ?? 'application/octet-stream' });
  ASSET_URLS[key] = `/assets/${hashed}`;
}
