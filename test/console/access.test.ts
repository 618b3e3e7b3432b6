import { afterAll, beforeAll, expect, test } from 'vitest';
import type { WebClient } from '../support/web.js';
import { consoleClient, type SignedInOperator, signedInOperator } from '../support/console.js';
import { type Harness, startHarness } from '../support/harness.js';
import { signedUp } from '../support/web.js';

/**
 * The authorization matrix: every route the console serves (read from the server itself, so a
 * new route joins the matrix without an edit here) × {anonymous, a client's dashboard session,
 * a client's API key, support, admin}. Nothing but an operator's own session gets past the
 * sign-in; support is refused the admin routes; a form of a route one may not use changes nothing.
 */
let h: Harness;
let support: SignedInOperator;
let admin: SignedInOperator;
let clientSession: string;
let apiKey: string;

beforeAll(async () => {
  h = await startHarness({ OPERATOR_PORT: '0' });
  support = await signedInOperator(h, 'support');
  admin = await signedInOperator(h, 'admin');
  const { client } = await signedUp(h);
  clientSession = client.session as string;
  apiKey = (await h.account({ live: '10' })).liveKey;
});
afterAll(async () => {
  await h?.close();
});

/** Sample values for the routes' parameters. */
const SAMPLE: Record<string, string> = { id: 'acct_0000000000000000000000', name: 'none' };
const concrete = (url: string) => url.replace(/:(\w+)/g, (_, name: string) => SAMPLE[name] ?? 'x');

type Identity = 'anonymous' | 'client session' | 'client API key' | 'support' | 'admin';

async function visit(identity: Identity, method: string, url: string) {
  let client: WebClient;
  const headers: Record<string, string> = {};
  if (identity === 'support' || identity === 'admin') {
    client = (identity === 'support' ? support : admin).client;
  } else {
    client = consoleClient(h);
    // A client's cookie under both names, and the key as a bearer token and as the console's cookie.
    if (identity === 'client session') headers.cookie = `sp_session=${clientSession}; sp_operator=${clientSession}`;
    if (identity === 'client API key') {
      headers.authorization = `Bearer ${apiKey}`;
      headers.cookie = `sp_operator=${apiKey}`;
    }
  }
  if (method === 'GET') return client.get(url, headers);
  const csrf = identity === 'support' || identity === 'admin' ? ((await client.get('/')).csrf as string) : 'none';
  return client.post(url, { _csrf: csrf }, headers);
}

test('every console route × every identity', async () => {
  const routes = (h.service.console?.app.consoleRoutes ?? []).filter((r) => r.access !== 'public');
  expect(routes.map((r) => `${r.method} ${r.url}`)).toContain('GET /');
  const outcomes: string[] = [];
  for (const route of routes) {
    const url = concrete(route.url);
    for (const identity of ['anonymous', 'client session', 'client API key', 'support', 'admin'] as const) {
      const page = await visit(identity, route.method, url);
      const allowed = identity === 'admin' || (identity === 'support' && route.access === 'support');
      const where = `${identity} ${route.method} ${route.url} → ${page.status} ${page.location ?? ''}`;
      outcomes.push(where);
      if (identity !== 'support' && identity !== 'admin') {
        expect(page.status, where).toBe(303);
        expect(page.location, where).toMatch(/^\/login/);
      } else if (!allowed) {
        expect(page.status, where).toBe(403);
        expect(page.body, where).toContain('Admins only');
      } else {
        expect(page.location ?? '', where).not.toMatch(/^\/login/);
        expect(page.status, where).not.toBe(403);
        expect(page.status, where).toBeLessThan(500);
      }
    }
  }
  expect(outcomes.length).toBe(routes.length * 5);
});

test('public routes are only the sign-in pages and the static files', () => {
  const open = (h.service.console?.app.consoleRoutes ?? []).filter((r) => r.access === 'public').map((r) => `${r.method} ${r.url}`);
  expect(open.sort()).toEqual(
    [
      'GET /assets/:name',
      'GET /enrol',
      'GET /enrol/qr.svg',
      'GET /login',
      'GET /login/code',
      'GET /set-password',
      'POST /enrol',
      'POST /login',
      'POST /login/code',
      'POST /logout',
      'POST /set-password',
    ].sort(),
  );
});
