import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PROJECT_ROOT } from '../support/cli.js';
import { type Harness, startHarness } from '../support/harness.js';

/**
 * docs/dashboard.md's "Pages" table and the dashboard's routes agree: every path the table
 * names is a route the service registered, and every page (GET route) the dashboard registered
 * is named in the table, the test-mode twin (`/test/…`) included.
 */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

/** METHOD /path of every route, read from Fastify's own route table, parameters as `<name>`. */
function registeredRoutes(): Set<string> {
  const tree = h.service.app.printRoutes({ commonPrefix: false });
  const found = new Set<string>();
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│ ]*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = (match[1] as string).length / 4;
    stack.length = depth;
    stack.push(match[2] as string);
    const route = stack.join('');
    for (const method of (match[3] ?? '').split(', ').filter(Boolean)) found.add(`${method} ${route.replace(/:([A-Za-z0-9_]+)/g, '<$1>')}`);
  }
  return found;
}

/** What the table names: `POST /x` as written, a bare path as a GET; parameters as `<name>`. */
function documentedRoutes(): string[] {
  const text = fs.readFileSync(path.join(PROJECT_ROOT, 'docs', 'dashboard.md'), 'utf8');
  const section = text.slice(text.indexOf('\n## Pages'), text.indexOf('\n**Header.**'));
  const routes: string[] = [];
  for (const line of section.split('\n')) {
    const cell = /^\| ([^|]+) \|/.exec(line)?.[1];
    if (!cell || /^-+$/.test(cell.trim()) || cell.trim() === 'path') continue;
    for (const [, code] of cell.matchAll(/`([^`]+)`/g)) routes.push(/^[A-Z]+ /.test(code as string) ? (code as string) : `GET ${code}`);
  }
  return routes;
}

/** Not dashboard pages: the API, its reference, the probes, the metrics and the static files. */
const NOT_PAGES = /^(\/api(\/|$)|\/docs$|\/healthz$|\/readyz$|\/metrics$|\/assets\/)/;

describe('docs/dashboard.md "Pages"', () => {
  test('every path it names is a registered route', () => {
    const registered = registeredRoutes();
    const documented = documentedRoutes();
    expect(documented.length).toBeGreaterThan(25);
    expect(documented.filter((route) => !registered.has(route))).toEqual([]);
  });

  test('every page the dashboard registers is named in it', () => {
    const documented = new Set(documentedRoutes());
    const pages = [...registeredRoutes()].filter((route) => route.startsWith('GET ') && !NOT_PAGES.test(route.slice(4)));
    expect(pages.length).toBeGreaterThan(25);
    expect(pages.filter((route) => !documented.has(route))).toEqual([]);
  });
});
