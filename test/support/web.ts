import { expect } from 'vitest';
import type { Harness } from './harness.js';

/**
 * A minimal browser over `inject` for the dashboard's HTTP suites: a cookie jar, form posts
 * (application/x-www-form-urlencoded), the CSRF token read from the last page, and helpers for
 * the usual flows. Every response is checked for the dashboard's security headers.
 */
export interface Page {
  status: number;
  body: string;
  headers: Record<string, string | string[] | number | undefined>;
  location: string | undefined;
  /** The first CSRF token on the page, if any. */
  csrf: string | undefined;
}

export const PASSWORD = 'correct horse battery';

let emailCounter = 0;
export const newEmail = (tag = 'web') => `${tag}-${process.pid}-${Date.now()}-${++emailCounter}@example.com`;

export class WebClient {
  readonly cookies = new Map<string, string>();

  constructor(
    private readonly h: Harness,
    private readonly ip = '127.0.0.1',
  ) {}

  private cookieHeader(): string | undefined {
    if (this.cookies.size === 0) return undefined;
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private absorb(setCookie: string | string[] | number | undefined): void {
    if (setCookie === undefined) return;
    for (const line of Array.isArray(setCookie) ? setCookie : [String(setCookie)]) {
      const [pair = '', ...attributes] = line.split(';').map((s) => s.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const expired = attributes.some((a) => /^max-age=0$/i.test(a) || (/^expires=/i.test(a) && Date.parse(a.slice(8)) < Date.now()));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async request(method: 'GET' | 'POST', url: string, form?: Record<string, string>, headers: Record<string, string> = {}): Promise<Page> {
    const cookie = this.cookieHeader();
    const response = await this.h.inject({
      method,
      url,
      remoteAddress: this.ip,
      headers: {
        ...(cookie && { cookie }),
        ...(form && { 'content-type': 'application/x-www-form-urlencoded' }),
        ...headers,
      },
      ...(form && { payload: new URLSearchParams(form).toString() }),
    });
    this.absorb(response.headers['set-cookie']);
    const body = response.body;
    const page: Page = {
      status: response.statusCode,
      body,
      headers: response.headers,
      location: response.headers.location as string | undefined,
      csrf: /name="_csrf" value="([^"]+)"/.exec(body)?.[1],
    };
    expectSecurityHeaders(page, url);
    return page;
  }

  get(url: string, headers: Record<string, string> = {}): Promise<Page> {
    return this.request('GET', url, undefined, headers);
  }

  post(url: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Page> {
    return this.request('POST', url, form, headers);
  }

  /** GETs `formUrl` for its CSRF token, then posts `fields` with it to `action` (default: the same URL). */
  async submit(formUrl: string, fields: Record<string, string>, action = formUrl): Promise<Page> {
    const page = await this.get(formUrl);
    expect(page.csrf, `a CSRF token on ${formUrl} (status ${page.status})`).toBeTruthy();
    return this.post(action, { ...fields, _csrf: page.csrf as string });
  }

  async signUp(email = newEmail(), password = PASSWORD): Promise<Page> {
    return this.submit('/signup', { email, password });
  }

  async logIn(email: string, password = PASSWORD): Promise<Page> {
    return this.submit('/login', { email, password });
  }

  async logOut(): Promise<Page> {
    return this.submit('/', {}, '/logout');
  }

  /** The session cookie's value, or undefined when logged out. */
  get session(): string | undefined {
    return this.cookies.get('sp_session');
  }
}

export function expectSecurityHeaders(page: Page, url: string): void {
  const csp = String(page.headers['content-security-policy'] ?? '');
  expect(csp, `CSP on ${url}`).toContain("frame-ancestors 'none'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
  expect(page.headers['x-content-type-options']).toBe('nosniff');
  expect(page.headers['referrer-policy']).toMatch(/^(same-origin|no-referrer)$/);
}

/** A signed-up, logged-in client. */
export async function signedUp(h: Harness, ip?: string): Promise<{ client: WebClient; email: string }> {
  const client = new WebClient(h, ip);
  const email = newEmail();
  const page = await client.signUp(email);
  // Sign-up answers with the new account's two keys, shown once.
  expect(page.status, page.body.slice(0, 500)).toBe(200);
  expect(page.body).toContain('data-testid="new-key-test"');
  expect(client.session).toBeTruthy();
  return { client, email };
}

/** The account id of an e-mail, read from the database. */
export async function accountIdOf(h: Harness, email: string): Promise<string> {
  const row = await h.service.db.kysely.selectFrom('accounts').select('id').where('email', '=', email.toLowerCase()).executeTakeFirstOrThrow();
  return row.id;
}
