import { afterAll, beforeAll, expect, test } from 'vitest';
import { cliFor, describeRun, parseJsonStdout } from '../support/cli.js';
import { consoleClient } from '../support/console.js';
import { type Harness, startHarness } from '../support/harness.js';
import { PASSWORD } from '../support/web.js';

/**
 * `starport operator create` and `operator link` (the real CLI process against the harness's
 * database): the printed link opens the console's set-password form; bad input exits 1 with the
 * reason and creates nothing.
 */
let h: Harness;
let cli: ReturnType<typeof cliFor>;

beforeAll(async () => {
  h = await startHarness({ OPERATOR_PORT: '0' });
  cli = cliFor({ ...h.databaseEnv, STARPORT_ACTOR: 'ops-root' });
});
afterAll(async () => {
  await h?.close();
});

test('create prints a one-time link to the console; link issues a new one and clears the old credentials', async () => {
  const email = `cli-${Date.now()}@ops.example.com`;
  const args = ['operator', 'create', '--email', email, '--role', 'support', '--json'];
  const created = await cli(args);
  expect(created.code, describeRun(args, created)).toBe(0);
  const document = parseJsonStdout(created);
  expect(document).toMatchObject({ email, role: 'support', url: null });
  expect(document.path).toMatch(/^\/set-password\?token=[A-Za-z0-9_-]{40,}$/);

  const client = consoleClient(h);
  const form = await client.get(document.path);
  expect(form.status).toBe(200);
  expect(form.body).toContain(email);
  await client.post('/set-password', {
    token: new URLSearchParams(document.path.split('?')[1]).get('token') as string,
    password: PASSWORD,
    password_again: PASSWORD,
    _csrf: form.csrf as string,
  });
  expect((await client.get('/enrol')).status).toBe(200);

  const text = await cli(['operator', 'link', '--email', email.toUpperCase()], { env: { OPERATOR_PORT: '4555' } });
  expect(text.code, describeRun(['operator', 'link'], text)).toBe(0);
  expect(text.stdout).toMatch(new RegExp(`^New set-password link of ${email} \\(support\\):\\nhttp://127\\.0\\.0\\.1:4555/set-password\\?token=`));
  // The old session ended with the new link.
  expect((await client.get('/enrol')).location).toBe('/login');
  expect((await client.get(document.path)).status).toBe(410);
});

test('bad input exits 1 naming the problem', async () => {
  const role = await cli(['operator', 'create', '--email', 'x@ops.example.com', '--role', 'owner']);
  expect(role.code).toBe(1);
  expect(role.stderr).toContain('--role must be one of admin, support, got "owner"');
  const email = await cli(['operator', 'create', '--email', 'not-an-address', '--role', 'admin']);
  expect(email.code).toBe(1);
  expect(email.stderr).toContain('--email must be an e-mail address');
  await cli(['operator', 'create', '--email', 'twice@ops.example.com', '--role', 'admin']);
  const twice = await cli(['operator', 'create', '--email', 'twice@ops.example.com', '--role', 'admin']);
  expect(twice.code).toBe(1);
  expect(twice.stderr).toContain('already exists');
  const unknown = await cli(['operator', 'link', '--email', 'nobody@ops.example.com']);
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toContain('no operator with the e-mail nobody@ops.example.com');
  const rows = await h.service.db.kysely.selectFrom('operators').select('email').where('email', 'in', ['x@ops.example.com', 'not-an-address']).execute();
  expect(rows).toEqual([]);
});
