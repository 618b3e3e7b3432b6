import fs from 'node:fs';
import fc from 'fast-check';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { LOGIN_FAILURES_PER_EMAIL } from '../../src/accounts/auth-throttle.js';
import { readBalance } from '../../src/ledger/ledger.js';
import { type Harness, startHarness } from '../support/harness.js';
import { accountIdOf, newEmail, PASSWORD, signedUp, WebClient } from '../support/web.js';
import { nastyString } from './support/arbitraries.js';

/** What the browser checks report: any sign that an injected payload ran or became markup. */
const XSS_SIGNS = `flag: window.__xss ?? null,
  injected: document.querySelectorAll('[data-xss]').length,
  scripts: [...document.scripts].filter((s) => (s.textContent ?? '').includes('__xss') || s.src.includes('__xss')).length,
  links: document.querySelectorAll('a[href^="javascript:"]').length,
  handlers: [...document.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => a.name.startsWith('on') && a.value.includes('__xss'))).length`;
import { announceSeed, RUNS, SEED } from './support/settings.js';

/**
 * Suite 5: dashboard security, against a real service: CSRF refusal, session fixation,
 * cookie flags (with and without HTTPS behind a trusted proxy), login throttling, clickjacking
 * headers on every page, and XSS through every user-supplied field the dashboard renders
 * (external_id, the order search box, the e-mail address, the login `next` parameter, webhook
 * endpoint URLs — as the API stores them and as the dashboard's add form echoes a refused one)
 * — in the HTML and in a real Chromium, where no payload may run or become an element or an
 * attribute. Recipients cannot carry markup (a username is [A-Za-z0-9_]; the API refuses
 * anything else), which the suite checks too.
 *
 * Without /usr/bin/chromium the browser part is skipped with a warning, unless
 * BROWSER_TESTS=1 (CI), where a missing browser fails.
 */
const CHROMIUM = '/usr/bin/chromium';
const HAVE_CHROMIUM = fs.existsSync(CHROMIUM);
const BROWSER_REQUIRED = process.env.BROWSER_TESTS === '1';
if (!HAVE_CHROMIUM) console.warn(`!! dashboard XSS browser check ${BROWSER_REQUIRED ? 'FAILS' : 'SKIPPED'}: no Chromium at ${CHROMIUM}`);

/** Each payload, if it ever ran or became markup, sets window.__xss or leaves an <img data-xss>. */
const PAYLOADS = [
  '<script>window.__xss=1</script>',
  '"><img data-xss src=x onerror="window.__xss=2">',
  "'><svg data-xss onload=window.__xss=3>",
  '</textarea><script>window.__xss=4</script>',
  'javascript:window.__xss=5',
];
/**
 * Webhook endpoint URLs carrying markup that the API accepts (an absolute http URL on loopback,
 * allowed in test mode here; it keeps the URL as sent), and one live-mode https URL on a public
 * address (never sent to: no live order exists for the account).
 */
const URL_PAYLOADS = [
  'http://127.0.0.1:9/"><script>window.__xss=7</script>',
  "http://127.0.0.1:9/x?q='><svg data-xss onload=window.__xss=8>",
  'http://127.0.0.1:9/</textarea><img data-xss src=x onerror="window.__xss=9">',
  'http://127.0.0.1:9/x" data-xss="1" onfocus="window.__xss=10" autofocus x="',
];
const LIVE_URL_PAYLOAD = 'https://192.0.3.10/"><img data-xss src=x onerror="window.__xss=11">';
/** URLs the API refuses (not http(s), not a URL): the dashboard's add form shows them back in its error page. */
const REFUSED_URL_PAYLOADS = ['javascript:window.__xss=12', '"><script>window.__xss=13</script>', 'javascript://127.0.0.1/%0Awindow.__xss=14'];
/** A syntactically valid e-mail address (no spaces, one @) that is also markup. */
const XSS_EMAIL = `"><img/data-xss/src=x/onerror=window.__xss=6>${Date.now()}@evil.example`;

let h: Harness;
beforeAll(async () => {
  // Loopback webhook URLs allowed in test mode: the URL payloads and the fuzz's endpoints use them.
  h = await startHarness({ RATE_LIMIT_RPS: '0', WEBHOOK_ALLOW_LOOPBACK: '1' });
});
afterAll(async () => {
  await h?.close();
});

const setCookieLines = (headers: Record<string, unknown>) => {
  const value = headers['set-cookie'];
  return (Array.isArray(value) ? value : value === undefined ? [] : [String(value)]) as string[];
};

describe('CSRF', () => {
  test('a logged-in form without, with a wrong, or with a cross-site token is 403 and changes nothing', async () => {
    const { client, email } = await signedUp(h, '10.9.0.1');
    const accountId = await accountIdOf(h, email);
    for (const extra of [{}, { _csrf: '' }, { _csrf: 'A'.repeat(43) }] as Record<string, string>[]) {
      expect((await client.post('/test/top-up', { amount: '100', ...extra })).status).toBe(403);
    }
    const token = (await client.get('/test/top-up')).csrf as string;
    expect((await client.post('/test/top-up', { amount: '100', _csrf: token }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await readBalance(h.service.db.kysely, { accountId, mode: 'test' }))?.available).toBe(0n);
    // The right token from the same site works: the refusals above were about the token.
    expect((await client.post('/test/top-up', { amount: '100', _csrf: token })).status).toBe(303);
  });

  test('the signed-out forms (log in, sign up) need their pre-session token too', async () => {
    const client = new WebClient(h, '10.9.0.2');
    expect((await client.post('/login', { email: newEmail(), password: PASSWORD })).status).toBe(403);
    expect((await client.post('/signup', { email: newEmail(), password: PASSWORD })).status).toBe(403);
  });
});

describe('sessions and cookies', () => {
  test('session fixation: a planted session id is never adopted; login always issues a new one', async () => {
    const { client: victim, email } = await signedUp(h, '10.9.1.1');
    await victim.logOut();
    const planted = 'P'.repeat(43);
    victim.cookies.set('sp_session', planted);
    expect((await victim.logIn(email)).status).toBe(303);
    expect(victim.session).toBeTruthy();
    expect(victim.session).not.toBe(planted);
    // The attacker holding the planted value has nothing.
    const attacker = new WebClient(h, '10.9.1.2');
    attacker.cookies.set('sp_session', planted);
    expect((await attacker.get('/')).status).toBe(303);
    // A second login (another browser) gets its own id; after logout the old id is dead.
    const second = new WebClient(h, '10.9.1.4');
    expect((await second.logIn(email)).status).toBe(303);
    expect(second.session).not.toBe(victim.session);
    const before = victim.session as string;
    await victim.logOut();
    const thief = new WebClient(h, '10.9.1.3');
    thief.cookies.set('sp_session', before);
    expect((await thief.get('/')).status, 'a logged-out session id is dead').toBe(303);
  });

  test('the session cookie is HttpOnly, SameSite=Lax, Path=/; not Secure over plain http', async () => {
    const client = new WebClient(h, '10.9.2.1');
    const form = await client.get('/signup');
    const page = await client.post('/signup', { email: newEmail(), password: PASSWORD, _csrf: form.csrf as string });
    const session = setCookieLines(page.headers).find((line) => line.startsWith('sp_session='));
    expect(session).toBeTruthy();
    expect(session).toMatch(/;\s*HttpOnly/i);
    expect(session).toMatch(/;\s*SameSite=Lax/i);
    expect(session).toMatch(/;\s*Path=\//i);
    expect(session).not.toMatch(/;\s*Secure/i);
    for (const line of setCookieLines(form.headers)) expect(line, 'the pre-session cookie too').toMatch(/HttpOnly/i);
  });

  test('behind a trusted HTTPS proxy (TRUST_PROXY) cookies are Secure and HSTS is sent', async () => {
    const proxied = await startHarness({ RATE_LIMIT_RPS: '0', TRUST_PROXY: 'true' });
    try {
      const client = new WebClient(proxied, '127.0.0.1');
      const https = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'dash.example' };
      const form = await client.get('/signup', https);
      expect(form.headers['strict-transport-security']).toMatch(/max-age=\d+/);
      for (const line of setCookieLines(form.headers)) expect(line).toMatch(/;\s*Secure/i);
      const page = await client.post('/signup', { email: newEmail(), password: PASSWORD, _csrf: form.csrf as string }, https);
      const session = setCookieLines(page.headers).find((line) => line.startsWith('sp_session='));
      expect(session).toMatch(/;\s*Secure/i);
      expect(session).toMatch(/;\s*HttpOnly/i);
    } finally {
      await proxied.close();
    }
  });

  test(`login throttling: after ${LOGIN_FAILURES_PER_EMAIL} wrong passwords even the right one is refused (429)`, async () => {
    const { client, email } = await signedUp(h, '10.9.3.1');
    await client.logOut();
    for (let i = 0; i < LOGIN_FAILURES_PER_EMAIL; i++) expect((await new WebClient(h, `10.9.3.${i + 2}`).logIn(email, 'not the password')).status).toBe(401);
    const throttled = await new WebClient(h, '10.9.3.99').logIn(email, PASSWORD);
    expect(throttled.status).toBe(429);
    expect(throttled.headers['set-cookie'] ?? '').not.toMatch(/sp_session=[^;]/);
  });
});

describe('hostile input to the dashboard', () => {
  test('random query strings, path ids and form fields never produce a 5xx, with or without a valid CSRF token', async () => {
    announceSeed('dashboard fuzz');
    const { client, email } = await signedUp(h, '10.9.5.1');
    const token = (await client.get('/test')).csrf as string;
    const cookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    // Real webhook ids of this account to aim at: a test endpoint with a message, a live endpoint.
    const addedTest = await client.post('/test/webhooks', { url: 'http://127.0.0.1:9/fuzz-hook', _csrf: token });
    const addedLive = await client.post('/webhooks', { url: 'https://192.0.3.10/fuzz-hook', events: 'order.failed', _csrf: token });
    expect([addedTest.status, addedLive.status], addedTest.body.slice(0, 300) + addedLive.body.slice(0, 300)).toEqual([200, 200]);
    const accountId = await accountIdOf(h, email);
    const endpoints = await h.service.db.kysely.selectFrom('webhook_endpoints').select(['id', 'mode']).where('account_id', '=', accountId).execute();
    expect(endpoints.map((e) => e.mode).sort()).toEqual(['live', 'test']);
    const testEndpoint = endpoints.find((e) => e.mode === 'test')?.id as string;
    expect((await client.post(`/test/webhooks/${testEndpoint}/test`, { _csrf: token })).status).toBe(303);
    const message = (await h.service.db.kysely.selectFrom('webhook_messages').select('id').where('endpoint_id', '=', testEndpoint).executeTakeFirstOrThrow()).id;
    const realIds = [...endpoints.map((e) => e.id), message];
    const routes = [
      ['GET', '/test/orders'],
      ['GET', '/orders'],
      ['GET', '/test/orders/{x}'],
      ['GET', '/test/keys/reissue'],
      ['GET', '/top-up/qr.svg'],
      ['GET', '/login'],
      ['GET', '/set-password/{x}'],
      ['GET', '/assets/{x}'],
      ['GET', '/test/webhooks'],
      ['GET', '/webhooks'],
      ['GET', '/test/webhooks/{x}'],
      ['GET', '/webhooks/{x}'],
      ['POST', '/test/top-up'],
      ['POST', '/test/keys/reissue'],
      ['POST', '/keys/reissue'],
      ['POST', '/login'],
      ['POST', '/signup'],
      ['POST', '/set-password/{x}'],
      ['POST', '/test/webhooks'],
      ['POST', '/webhooks'],
      ['POST', '/test/webhooks/{x}/rotate'],
      ['POST', '/webhooks/{x}/rotate'],
      ['POST', '/test/webhooks/{x}/delete'],
      ['POST', '/test/webhooks/{x}/test'],
      ['POST', '/webhooks/{x}/test'],
      ['POST', '/test/webhooks/{x}/enable'],
      ['POST', '/webhooks/{x}/enable'],
      ['POST', '/test/webhooks/{x}/messages/{y}/redeliver'],
      ['GET', '/alerts'],
      ['GET', '/test/alerts'],
      ['POST', '/alerts'],
      ['POST', '/test/alerts'],
      ['POST', '/alerts/remove'],
      ['POST', '/test/alerts/remove'],
      ['GET', '/account'],
      ['GET', '/account/confirm'],
      ['POST', '/account/confirm'],
      ['POST', '/account/switch'],
      ['POST', '/account/two-factor'],
      ['POST', '/login/code'],
      ['GET', '/team'],
      ['POST', '/team/invite'],
      ['POST', '/team/members/{x}/role'],
      ['POST', '/team/members/{x}/remove'],
      ['POST', '/team/two-factor'],
      ['GET', '/invite/{x}'],
      ['POST', '/invite/{x}'],
      ['GET', '/activity'],
      ['GET', '/activity.csv'],
    ] as const;
    const fieldNames = fc.constantFrom(
      'amount',
      'threshold',
      'mode',
      'replaces',
      'email',
      'password',
      'password_again',
      'next',
      'q',
      'status',
      'after',
      'before',
      'url',
      'events',
      '__proto__',
      'constructor[prototype][x]',
      '_csrf',
      'code',
      'role',
      'account',
      'required',
    );
    // Besides nasty strings, values the webhook forms can act on: loopback URLs (test mode; never a
    // name to resolve), a public https URL (live mode), event types.
    const value = fc.oneof(
      { weight: 4, arbitrary: nastyString },
      { weight: 1, arbitrary: nastyString.map((s) => `http://127.0.0.1:9/${s}`) },
      { weight: 1, arbitrary: fc.constantFrom('https://192.0.3.10/hook', 'order.delivered', 'order.failed', '*', 'webhook.test') },
    );
    const pairs = fc.array(fc.tuple(fieldNames, value), { maxLength: 6 });
    // Path ids: nasty strings, or this account's real endpoint and message ids (never for delete,
    // which would end the endpoint for the rest of the run).
    const pathId = fc.oneof({ weight: 3, arbitrary: nastyString }, { weight: 1, arbitrary: fc.constantFrom(...realIds) });
    const encodeId = (id: string) => encodeURIComponent(id.replace(/[\uD800-\uDFFF]/g, '?')) || 'x';
    const encode = (list: [string, string][]) => list.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v.replace(/[\uD800-\uDFFF]/g, '?'))}`).join('&');
    const runs = Math.max(200, Math.floor(RUNS / 5));
    const liveEndpoint = endpoints.find((e) => e.mode === 'live')?.id as string;
    // Run first: every webhook route on this account's real ids, logged in, with a valid token.
    const examples = routes
      .filter(([, template]) => template.includes('webhooks/{x}'))
      .map((route) => [route, [] as [string, string][], route[1].startsWith('/test/') ? testEndpoint : liveEndpoint, message, 'x', true, true] as const);
    const statuses = new Map<string, Set<number>>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        pairs,
        pathId,
        pathId,
        nastyString,
        fc.boolean(),
        fc.boolean(),
        async ([method, template], fields, id, second, nastyId, withToken, loggedIn) => {
          const path = template.replace('{x}', encodeId(template.endsWith('/delete') ? nastyId : id)).replace('{y}', encodeId(second));
          const form = encode([...fields, ...(withToken ? [['_csrf', token] as [string, string]] : [])]);
          // Never log out or land on a password change for real: those end the shared session.
          const response = await h.service.app.inject({
            method,
            url: method === 'GET' ? `${path}?${form}` : path,
            remoteAddress: '10.9.5.1',
            headers: { ...(loggedIn && { cookie }), ...(method === 'POST' && { 'content-type': 'application/x-www-form-urlencoded' }) },
            ...(method === 'POST' && { payload: form }),
          });
          expect(response.statusCode, `${method} ${path} ${form.slice(0, 200)} → ${response.body.slice(0, 200)}`).toBeLessThan(500);
          const seen = statuses.get(template) ?? new Set<number>();
          seen.add(response.statusCode);
          statuses.set(template, seen);
        },
      ),
      { numRuns: runs, seed: SEED, examples: examples.map((e) => [...e]) as never },
    );
    // The webhook pages were reached past the session and CSRF checks, not only refused by them.
    expect([...(statuses.get('/test/webhooks/{x}') ?? [])], 'a real endpoint page was rendered').toContain(200);
    expect([...(statuses.get('/test/webhooks/{x}/test') ?? [])], 'a form with a valid token was acted on').toContain(303);
  });
});

describe('XSS and clickjacking', () => {
  let client: WebClient;
  let pages: string[];

  beforeAll(async () => {
    // The e-mail itself is markup: it is shown in the header of every page. Sign-up refuses an
    // address that cannot be mailed (docs/dashboard.md), so the operator creates this one.
    client = new WebClient(h, '10.9.4.1');
    expect((await client.signUp(XSS_EMAIL)).status).toBe(400);
    const { createAccount } = await import('../../src/accounts/accounts.js');
    const { issuePasswordLink } = await import('../../src/accounts/dashboard-users.js');
    await createAccount(h.service.db, XSS_EMAIL);
    const link = await issuePasswordLink(h.service.db, XSS_EMAIL);
    expect((await client.submit(`/set-password/${link.token}`, { password: PASSWORD, password_again: PASSWORD })).status).toBe(303);
    const accountId = await accountIdOf(h, XSS_EMAIL);
    await h.credit(accountId, 'test', '100');
    const keys = await h.service.db.kysely.selectFrom('api_keys').select('id').where('account_id', '=', accountId).execute();
    expect(keys.length).toBe(2);
    // The test key is shown once at sign-up; take a fresh one for the API calls.
    const { reissueKey } = await import('../../src/accounts/accounts.js');
    const apiKey = await reissueKey(h.service.db, accountId, 'test');
    const liveKey = await reissueKey(h.service.db, accountId, 'live');
    const ids: string[] = [];
    for (const [i, payload] of PAYLOADS.entries()) {
      const response = await fetch(`${h.url}/api/v1/orders`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': `xss-${i}` },
        body: JSON.stringify({ product: 'stars', recipient: '@xss_target', quantity: 50, external_id: payload }),
      });
      expect(response.status).toBe(201);
      ids.push(((await response.json()) as { id: string }).id);
    }
    // Markup as a recipient never gets in: the API refuses it.
    const refused = await fetch(`${h.url}/api/v1/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': 'xss-recipient' },
      body: JSON.stringify({ product: 'stars', recipient: '<script>x</script>', quantity: 50 }),
    });
    expect(refused.status).toBe(400);
    // Markup in webhook endpoint URLs: kept as sent by the API, rendered in the endpoint list,
    // on each endpoint's page, and in the "disabled" notice.
    const endpointIds: string[] = [];
    for (const [mode, url] of [...URL_PAYLOADS.map((u) => ['test', u] as const), ['live', LIVE_URL_PAYLOAD] as const]) {
      const response = await fetch(`${h.url}/api/v1/webhook_endpoints`, {
        method: 'POST',
        headers: { authorization: `Bearer ${mode === 'test' ? apiKey : liveKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url, ...(mode === 'live' && { events: ['order.failed'] }) }),
      });
      const body = (await response.json()) as { id: string; url: string };
      expect(response.status, JSON.stringify(body)).toBe(201);
      expect(body.url).toBe(url);
      endpointIds.push(body.id);
    }
    for (const url of REFUSED_URL_PAYLOADS) {
      const response = await fetch(`${h.url}/api/v1/webhook_endpoints`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url }),
      });
      expect(response.status, url).toBe(400);
    }
    // One endpoint disabled (as after days of failures) so the notice that names its URL is shown.
    await h.service.db.kysely
      .updateTable('webhook_endpoints')
      .set({ status: 'disabled', disabled_reason: 'deliveries failed for 3 days', disabled_at: Date.now() })
      .where('id', '=', endpointIds[0] as string)
      .execute();
    pages = [
      '/test',
      '/test/orders',
      ...ids.map((id) => `/test/orders/${id}`),
      ...PAYLOADS.map((p) => `/test/orders?q=${encodeURIComponent(p)}`),
      '/test/keys',
      '/test/top-up',
      '/test/guide',
      '/test/webhooks',
      '/webhooks',
      '/alerts',
      '/test/alerts',
      ...endpointIds.map((id, i) => (i < URL_PAYLOADS.length ? `/test/webhooks/${id}` : `/webhooks/${id}`)),
      '/',
    ];
  });

  test('no payload reaches a page unescaped, and every page forbids framing', async () => {
    const anonymous = new WebClient(h, '10.9.4.2');
    for (const url of pages) {
      const page = await client.get(url);
      expect(page.status, url).toBe(200);
      assertEscaped(page.body, url);
    }
    // The URLs are on the pages (escaped), so the checks above looked at them.
    const list = (await client.get('/test/webhooks')).body;
    expect(list).toContain('http://127.0.0.1:9/&quot;&gt;&lt;script&gt;window.__xss=7&lt;/script&gt;');
    expect(list).toMatch(/data-status="disabled"/);
    // The add form: a refused URL is shown back in the form, an accepted one on the secret page.
    const token = (await client.get('/test/webhooks')).csrf as string;
    for (const url of [...REFUSED_URL_PAYLOADS, ...URL_PAYLOADS.slice(0, 2)]) {
      const page = await client.post('/test/webhooks', { url, _csrf: token });
      expect(page.status, url).toBe(REFUSED_URL_PAYLOADS.includes(url) ? 400 : 200);
      expect(page.body, url).toContain(escapeHtml(url.trim()));
      assertEscaped(page.body, url);
    }
    for (const url of [...PAYLOADS.map((p) => `/login?next=${encodeURIComponent(p)}`), '/signup', '/set-password/x']) {
      const page = await anonymous.get(url);
      assertEscaped(page.body, url);
      expect(page.headers['x-frame-options'], url).toBe('DENY');
      expect(String(page.headers['content-security-policy']), url).toContain("frame-ancestors 'none'");
    }
    // An unknown URL is the JSON not_found answer, never an HTML page that could be framed or sniffed.
    for (const payload of PAYLOADS) {
      const response = await h.inject({ method: 'GET', url: `/${encodeURIComponent(payload)}` });
      expect(response.statusCode).toBe(404);
      expect(String(response.headers['content-type'])).toMatch(/^application\/json/);
      assertEscaped(response.body, payload);
    }
  });

  test.runIf(BROWSER_REQUIRED && !HAVE_CHROMIUM)('Chromium is installed (BROWSER_TESTS=1)', () => {
    throw new Error(`BROWSER_TESTS=1 but ${CHROMIUM} is missing: apt-get install -y chromium`);
  });

  test.skipIf(!HAVE_CHROMIUM)('in Chromium: no payload runs or becomes an element, and the dashboard cannot be framed', { timeout: 120_000 }, async () => {
    let browser: Browser | undefined;
    try {
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
      const context = await browser.newContext();
      const origin = new URL(h.url);
      await context.addCookies([{ name: 'sp_session', value: client.session as string, domain: origin.hostname, path: '/', httpOnly: true, sameSite: 'Lax' }]);
      const page = await context.newPage();
      const dialogs: string[] = [];
      page.on('dialog', async (dialog) => {
        dialogs.push(dialog.message());
        await dialog.dismiss();
      });
      for (const url of [...pages, ...PAYLOADS.map((p) => `/login?next=${encodeURIComponent(p)}`)]) {
        await page.goto(`${h.url}${url}`, { waitUntil: 'load' });
        // (A string: the test project compiles without the DOM library.)
        const found = await page.evaluate(`({ ${XSS_SIGNS} })`);
        expect(found, url).toEqual({ flag: null, injected: 0, scripts: 0, links: 0, handlers: 0 });
      }
      // Typed into the add-endpoint form: a refused URL comes back in the form, an accepted one on the secret page.
      for (const url of [...REFUSED_URL_PAYLOADS, ...URL_PAYLOADS]) {
        await page.goto(`${h.url}/test/webhooks`, { waitUntil: 'load' });
        await page.fill('#webhook-url', url);
        await page.click('form[action="/test/webhooks"] button[type="submit"]');
        await page.locator('#url-error, [data-testid="webhook-secret"]').first().waitFor();
        await page.waitForLoadState('load');
        const found = await page.evaluate(`({
          ${XSS_SIGNS},
          shown: document.body.textContent.includes(${JSON.stringify(url)}) || document.querySelector('#webhook-url')?.value === ${JSON.stringify(url)},
          refused: document.querySelector('#url-error') !== null,
        })`);
        expect(found, url).toEqual({ flag: null, injected: 0, scripts: 0, links: 0, handlers: 0, shown: true, refused: REFUSED_URL_PAYLOADS.includes(url) });
      }
      expect(dialogs).toEqual([]);
      // A page on another origin frames the dashboard: the browser must refuse to render it.
      await page.goto('about:blank');
      await page.setContent(`<iframe id="f" src="${h.url}/login" width="400" height="300"></iframe>`);
      const frame = page.frames().find((f) => f !== page.mainFrame());
      expect(frame).toBeTruthy();
      // Wait until the frame's navigation is over (refused: an error page; allowed: the login page).
      await expect.poll(() => frame?.url() ?? '', { timeout: 10_000 }).not.toMatch(/^(about:blank)?$/);
      await frame?.waitForLoadState('load');
      const rendered = await frame?.evaluate(`document.querySelector('form[action="/login"]') !== null`);
      expect({ url: frame?.url(), rendered }, 'the login form must not render inside a frame').toMatchObject({ rendered: false });
    } finally {
      await browser?.close();
    }
  });
});

function assertEscaped(body: string, url: string): void {
  // A payload that survived as markup: one of its tags with its marker, an attribute it broke
  // out into, or a javascript: link.
  expect(body, url).not.toMatch(/<(script|img|svg)\b[^>]*(__xss|data-xss)/i);
  expect(body, url).not.toMatch(/<script>window\.__xss/i);
  expect(body, url).not.toMatch(/href=["']?javascript:/i);
  expect(body, url).not.toMatch(/<\/textarea><script>/i);
  expect(body, url).not.toMatch(/data-xss="1"|on[a-z]+="window\.__xss/i);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
}
