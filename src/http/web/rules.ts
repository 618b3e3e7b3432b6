import type { TeamRole } from '../../db/schema.js';

/**
 * Who may do what in the dashboard (docs/dashboard.md, "Team and roles"): one table, read by the
 * server's guard for every signed-in request (src/http/web/access.ts, which answers 403 before
 * the handler runs) and by the pages, which show a role only the menu entries, links and forms
 * it may use. The first rule whose path matches decides; a path is the route or URL without the
 * test-mode prefix and the query ('/test/webhooks/:id' → '/webhooks/:id').
 *
 *   owner      everything
 *   developer  keys, webhooks, orders, test funds; not the team, activity, alerts or settings
 *   viewer     reads balances, orders, history and deposits; no keys, no webhooks, no forms
 *
 * Every person may use their own account page (switch account, their own two-factor). A form
 * (POST) not named below is the owner's: a new form is closed until it is listed here.
 */
const EVERYONE: readonly TeamRole[] = ['owner', 'developer', 'viewer'];
const BUILDERS: readonly TeamRole[] = ['owner', 'developer'];
const OWNERS: readonly TeamRole[] = ['owner'];

interface Rule {
  path: RegExp;
  /** GET and HEAD: who sees the page. */
  read: readonly TeamRole[];
  /** Every other method: who may submit its forms. */
  write: readonly TeamRole[];
}

const RULES: readonly Rule[] = [
  { path: /^\/account(\/|$)/, read: EVERYONE, write: EVERYONE },
  { path: /^\/(team|activity|settings)(\/|\.|$)/, read: OWNERS, write: OWNERS },
  { path: /^\/(keys|webhooks)(\/|$)/, read: BUILDERS, write: BUILDERS },
  // Test funds (POST /test/top-up); the live page only shows how to send a transfer.
  { path: /^\/top-up$/, read: EVERYONE, write: BUILDERS },
  { path: /^\//, read: EVERYONE, write: OWNERS },
];

/** '/test/alerts?x=1' → '/alerts'; '/test' → '/'. */
export function rulePath(url: string): string {
  const path = url.split('?')[0] || '/';
  if (path === '/test') return '/';
  return path.startsWith('/test/') ? path.slice('/test'.length) : path;
}

/** The person's own pages, open to every role (and to a member who still has to enrol in two-factor). */
export function isPersonal(url: string): boolean {
  return /^\/account(\/|$)/.test(rulePath(url));
}

/** Whether `role` may `method` `url` (a route such as '/test/webhooks/:id/rotate' or a URL as a page links it). */
export function may(role: TeamRole, method: string, url: string): boolean {
  const path = rulePath(url);
  const rule = RULES.find((r) => r.path.test(path)) ?? RULES[RULES.length - 1];
  const read = method === 'GET' || method === 'HEAD';
  return (read ? rule?.read : rule?.write)?.includes(role) ?? false;
}

/** Who may `method` `url`, in words for a refusal: "owners", "developers and owners". */
export function whoMay(method: string, url: string): string {
  const roles = (['developer', 'viewer'] as const).filter((r) => may(r, method, url));
  if (roles.includes('viewer')) return 'every member';
  return roles.includes('developer') ? 'developers and owners' : 'owners';
}
