import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { reissueKey } from '../../src/accounts/accounts.js';
import { generateApiKey, type Mode } from '../../src/domain/api-key.js';
import { PROJECT_ROOT } from '../support/cli.js';
import { type Harness, startHarness, type TestAccount } from '../support/harness.js';
import { disableAccount, seedLiveOrder } from '../support/http.js';
import { DocumentChecker } from '../support/openapi.js';
import { type ApiOperation, contractProblems, fetchDocument, operationsOf, pathOf, type Schema } from './support/api-document.js';
import { rawRequest } from './support/raw-http.js';
import { type Receiver, startReceiver } from '../support/webhook-receiver.js';

/**
 * Suite 4: the authorization matrix. Every operation of the served OpenAPI document × every
 * kind of bad credential must answer the contract's 401 with the right code; and every
 * operation called with another account's or the other mode's key must answer without a
 * trace of the data it does not own (distinctive external_ids, usernames, order ids and
 * balances are seeded per account and mode, and every body is searched for them). Ids of
 * another owner are 404. Each owner also has a webhook endpoint (its URL and `whsec_` secrets are
 * markers too), so `/webhook_endpoints/{id}` paths are aimed at real endpoints: another owner's
 * DELETE or rotate_secret is 404 and leaves the endpoint as it was; the owner's own DELETE runs
 * last, after every other case has used the endpoint.
 */

/**
 * Statuses an operation may add for a key of the wrong mode (docs/api.md "Errors": deposits are live-only,
 * test helpers test-only). Taken from each operation's documented error codes.
 */
const MODE_RESTRICTED_CODES = ['live_key_required', 'test_key_required'];

interface Owner {
  label: string;
  accountId: string;
  mode: Mode;
  key: string;
  orderId: string;
  endpointId: string;
  /** Strings that only this owner's data contains. */
  markers: string[];
}

// The operations are read before the tests are collected, so each is a test of its own.
// Loopback webhooks allowed: the test-mode endpoints point at a receiver on loopback.
const h: Harness = await startHarness({ RATE_LIMIT_RPS: '0', WEBHOOK_ALLOW_LOOPBACK: '1' });
const document = await fetchDocument(h.url);
const checker = DocumentChecker.for(document);
const operations = operationsOf(document).filter((op) => !op.isPublic);
const owners: Owner[] = [];
const credentials: { label: string; header: string | undefined; status: number; code: string }[] = [];
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  const seed = Math.random().toString(36).slice(2, 8);
  const accounts: Record<string, TestAccount> = {
    A: await h.account({ test: '123.456789012', live: '654.321098765' }),
    B: await h.account({ test: '11.111111111', live: '22.222222222' }),
  };
  for (const [name, account] of Object.entries(accounts)) {
    for (const mode of ['test', 'live'] as const) {
      const externalId = `MARK-${name}-${mode}-${seed}`;
      const username = `${name === 'A' ? 'Alpha' : 'Bravo'}${mode === 'test' ? 'Tst' : 'Lve'}${seed}`;
      const key = mode === 'test' ? account.testKey : account.liveKey;
      let orderId: string;
      if (mode === 'test') {
        const response = await fetch(`${h.url}/api/v1/orders`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': `authz-${name}` },
          body: JSON.stringify({ product: 'stars', recipient: `@${username}`, quantity: 50, external_id: externalId }),
        });
        expect(response.status).toBe(201);
        orderId = ((await response.json()) as { id: string }).id;
      } else {
        // Live fulfilment is not configured (POST is 503): the order is made by the service's own code.
        const result = await seedLiveOrder(h, account.accountId, { idempotencyKey: `authz-${name}`, product: 'stars', username, quantity: 50, externalId });
        orderId = result.order.id;
      }
      const balance = ((await (await fetch(`${h.url}/api/v1/balance`, { headers: { authorization: `Bearer ${key}` } })).json()) as { balance: { value: string } }).balance.value;
      // Test mode: the loopback receiver. Live mode must be https on a public address; it only
      // subscribes to order.failed, and this account's live order is parked, so nothing is sent there.
      const url = mode === 'test' ? `${receiver.url}?owner=${name}-${mode}-${seed}` : `https://192.0.3.10/starport-authz/${name}-${mode}-${seed}`;
      const created = await fetch(`${h.url}/api/v1/webhook_endpoints`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url, ...(mode === 'live' && { events: ['order.failed'] }) }),
      });
      const endpoint = (await created.json()) as { id: string; secret: string };
      expect(created.status, JSON.stringify(endpoint)).toBe(201);
      expect(endpoint.secret).toMatch(/^whsec_/);
      owners.push({
        label: `${name}/${mode}`,
        accountId: account.accountId,
        mode,
        key,
        orderId,
        endpointId: endpoint.id,
        markers: [externalId, username, orderId, account.accountId, balance, endpoint.id, url, endpoint.secret],
      });
    }
  }
  const revoked = await h.account();
  await reissueKey(h.service.db, revoked.accountId, 'test');
  const disabled = await h.account();
  await disableAccount(h, disabled.accountId);
  const valid = owners[0]?.key as string;
  credentials.push(
    { label: 'no header', header: undefined, status: 401, code: 'missing_api_key' },
    { label: 'Basic scheme', header: `Basic ${valid}`, status: 401, code: 'missing_api_key' },
    { label: 'Token scheme', header: `Token ${valid}`, status: 401, code: 'missing_api_key' },
    { label: 'Bearer without a key', header: 'Bearer', status: 401, code: 'missing_api_key' },
    { label: 'key without a scheme', header: valid, status: 401, code: 'missing_api_key' },
    { label: 'malformed: short', header: 'Bearer sk_test_abc', status: 401, code: 'invalid_api_key' },
    { label: 'malformed: bad checksum', header: `Bearer ${valid.slice(0, -1)}${valid.endsWith('0') ? '1' : '0'}`, status: 401, code: 'invalid_api_key' },
    { label: 'malformed: other prefix', header: `Bearer sk_prod_${valid.slice(8)}`, status: 401, code: 'invalid_api_key' },
    { label: 'malformed: bad alphabet', header: `Bearer ${valid.slice(0, 10)}-${valid.slice(11)}`, status: 401, code: 'invalid_api_key' },
    { label: 'unknown well-formed key', header: `Bearer ${generateApiKey('test')}`, status: 401, code: 'invalid_api_key' },
    { label: 'unknown live key', header: `Bearer ${generateApiKey('live')}`, status: 401, code: 'invalid_api_key' },
    { label: 'revoked key', header: `Bearer ${revoked.testKey}`, status: 401, code: 'api_key_revoked' },
    { label: 'disabled account', header: `Bearer ${disabled.testKey}`, status: 401, code: 'account_disabled' },
  );
}, 60_000);

afterAll(async () => {
  await h.close();
  await receiver?.close();
});

/** Paths whose parameter names a slice of the caller's own data, not an id someone owns: a statement's month. */
const CALLER_SCOPED_PATH = /^\/statements\/\{[^}]+\}$/;

/** This calendar month in UTC: every seeded account existed in it, so its statement exists. */
const currentMonth = () => new Date().toISOString().slice(0, 7);

/** The kind of id a path template takes: an order's or a webhook endpoint's (a new kind must be added here). */
function pathIdOf(template: string, owner: Owner | undefined): string {
  if (CALLER_SCOPED_PATH.test(template)) return currentMonth();
  if (/^\/orders\/\{[^}]+\}$/.test(template)) return owner?.orderId ?? 'ord_unknown';
  if (/^\/webhook_endpoints\/\{[^}]+\}(\/rotate_secret)?$/.test(template)) return owner?.endpointId ?? 'we_unknown';
  throw new Error(`authz matrix: no seeded id for the path ${template}; seed one per owner and add it to pathIdOf`);
}

const isEndpointPath = (operation: ApiOperation) => operation.template.startsWith('/webhook_endpoints/');

/** What a webhook endpoint is now (secret, previous secret, status), to prove a refused request changed nothing. */
async function endpointState(owner: Owner) {
  return h.service.db.kysely
    .selectFrom('webhook_endpoints')
    .select(['id', 'secret', 'previous_secret', 'previous_secret_until', 'status', 'updated_at'])
    .where('id', '=', owner.endpointId)
    .executeTakeFirst();
}

/** A request an owner could legitimately send: path ids of `pathOwner`, documented query values, an example body. */
function requestOf(operation: ApiOperation, pathOwner: Owner | undefined) {
  const pathValues = Object.fromEntries(operation.parameters.filter((p) => p.in === 'path').map((p) => [p.name, pathIdOf(operation.template, pathOwner)]));
  const query = operation.parameters
    .filter((p) => p.in === 'query')
    .map((p) => `${encodeURIComponent(p.name)}=${encodeURIComponent(String(exampleOf(p.schema)))}`)
    .join('&');
  const target = `${pathOf(operation.template, pathValues)}${query ? `?${query}` : ''}`;
  const body = operation.body ? Buffer.from(JSON.stringify(exampleOf(operation.body))) : undefined;
  return { target, body };
}

function exampleOf(schema: Schema): unknown {
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('example' in schema) return schema.example;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if ('const' in schema) return schema.const;
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  if (type === 'object') {
    return Object.fromEntries(
      Object.entries<Schema>(schema.properties ?? {})
        .filter(([name]) => (schema.required ?? []).includes(name))
        .map(([name, sub]) => [name, exampleOf(sub)]),
    );
  }
  if (type === 'integer' || type === 'number') return schema.minimum ?? 1;
  if (type === 'boolean') return true;
  if (type === 'array') return [];
  return 'x';
}

async function send(operation: ApiOperation, authorization: string | undefined, pathOwner: Owner | undefined) {
  const { target, body } = requestOf(operation, pathOwner);
  const headers: [string, string][] = [];
  if (authorization !== undefined) headers.push(['Authorization', authorization]);
  if (body) headers.push(['Content-Type', 'application/json'], ['Idempotency-Key', `authz-${Math.random()}`]);
  const response = await rawRequest(h.url, { method: operation.method, target, headers, ...(body && { body }) });
  expect(contractProblems(checker, operation.method, target, response), `${operation.method} ${target}`).toEqual([]);
  return { ...response, sent: `${target} ${body?.toString() ?? ''}` };
}

/** Markers of owners other than the caller found in a body, apart from what the request itself carried (an id echoed in a 404 message). */
function leaks(response: { body: string; sent: string }, caller: Owner | undefined): string[] {
  return owners.filter((o) => o !== caller).flatMap((o) => o.markers.filter((m) => response.body.includes(m) && !response.sent.includes(m)).map((m) => `${o.label}'s ${m}`));
}

test('the document lists authenticated operations', () => {
  expect(operations.length).toBeGreaterThanOrEqual(4);
});

describe.each(operations.map((op) => [`${op.method} ${op.template}`, op] as const))('%s', (_, operation) => {
  test('every bad credential → the contract 401, with nothing of anyone in the body', async () => {
    const before = await endpointState(owners[0] as Owner);
    for (const credential of credentials) {
      for (const pathOwner of [owners[0], undefined]) {
        const response = await send(operation, credential.header, pathOwner);
        const body = JSON.parse(response.body);
        expect({ status: response.status, code: body.error?.code }, `${credential.label}: ${response.body}`).toEqual({ status: credential.status, code: credential.code });
        expect(leaks(response, undefined), credential.label).toEqual([]);
      }
    }
    // A refused DELETE or rotate_secret on a real endpoint left it as it was.
    expect(await endpointState(owners[0] as Owner)).toEqual(before);
  });

  test("another account's or the other mode's key sees nothing it does not own", async () => {
    const hasPathId = operation.parameters.some((p) => p.in === 'path') && !CALLER_SCOPED_PATH.test(operation.template);
    for (const caller of owners) {
      for (const target of hasPathId ? owners : [undefined]) {
        // The owner's own DELETE of its endpoint runs last (its own test below): the other cases need the endpoint.
        if (operation.method === 'DELETE' && isEndpointPath(operation) && target === caller) continue;
        const before = target && target !== caller && isEndpointPath(operation) ? await endpointState(target) : undefined;
        const response = await send(operation, `Bearer ${caller.key}`, target);
        const label = `${caller.label} calling ${operation.method} ${operation.template}${target ? ` on ${target.label}'s id` : ''} → ${response.status} ${response.body.slice(0, 300)}`;
        expect(leaks(response, caller), label).toEqual([]);
        const code = response.status >= 400 ? JSON.parse(response.body).error.code : undefined;
        // 503 live_unavailable is the contract's answer to live writes while live fulfilment is not configured.
        expect(response.status < 500 || code === 'live_unavailable', label).toBe(true);
        if (response.status === 403) expect(MODE_RESTRICTED_CODES.filter((c) => operation.documentedCodes.has(c) || c === code)).toContain(code);
        if (target && target !== caller) expect(response.status, `someone else's id is 404: ${label}`).toBe(404);
        if (before) {
          expect(code, label).toBe('webhook_endpoint_not_found');
          // Not deleted, not rotated: the endpoint is exactly as it was.
          expect(await endpointState(target as Owner), `unchanged after ${label}`).toEqual(before);
        }
        // Own ids are found: order reads, the endpoint list, the owner's own secret rotation.
        if (target === caller && operation.method === 'GET' && /^\/orders\/\{[^}]+\}$/.test(operation.template)) expect(response.status, `own id: ${label}`).toBe(200);
        // A month names the caller's own statement: found, and only the caller's figures in it.
        if (CALLER_SCOPED_PATH.test(operation.template)) expect(response.status, `own statement: ${label}`).toBe(200);
        if (operation.method === 'GET' && operation.template === '/webhook_endpoints') {
          expect(response.status, label).toBe(200);
          expect(
            JSON.parse(response.body).data.map((e: { id: string }) => e.id),
            label,
          ).toContain(caller.endpointId);
        }
        if (target === caller && operation.template.endsWith('/rotate_secret')) {
          expect(response.status, `own rotation: ${label}`).toBe(200);
          const rotated = JSON.parse(response.body) as { secret: string };
          expect(rotated.secret).toMatch(/^whsec_/);
          expect((await endpointState(caller))?.secret).toBe(rotated.secret);
          // The new secret is the owner's too: no one else may ever see it.
          caller.markers.push(rotated.secret);
        }
      }
    }
  });
});

test("an owner's own DELETE /webhook_endpoints/{id} (run last): 200, nothing of anyone else, and the endpoint is gone", async () => {
  const operation = operations.find((op) => op.method === 'DELETE' && op.template === '/webhook_endpoints/{id}');
  expect(operation, 'the document lists DELETE /webhook_endpoints/{id}').toBeTruthy();
  for (const owner of owners) {
    // Every other case left it in place (and rotated only by its owner).
    expect(await endpointState(owner), owner.label).toBeTruthy();
    const response = await send(operation as ApiOperation, `Bearer ${owner.key}`, owner);
    const label = `${owner.label} deleting its own endpoint → ${response.status} ${response.body.slice(0, 300)}`;
    expect(response.status, label).toBe(200);
    expect(JSON.parse(response.body), label).toEqual({ ok: true, id: owner.endpointId, deleted: true });
    expect(leaks(response, owner), label).toEqual([]);
    expect(await endpointState(owner), label).toBeUndefined();
  }
});

test('no secret material is compared with === (keys and session ids by hash lookup, tokens with timingSafeEqual)', () => {
  // API keys, session ids and link tokens are looked up by their SHA-256 in an index; CSRF
  // tokens go through crypto.timingSafeEqual (src/accounts/secrets.ts safeEqual). A plain
  // string comparison of any such value would leak it through timing.
  const suspicious: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (file.endsWith('.ts')) {
        fs.readFileSync(file, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            const comparison = /\b(\w*(?:token|secret|csrf|apikey|api_key|sessionid|session_id|keyhash|key_hash|cookie)\w*)\s*[!=]==?\s*(?!null\b|undefined\b|'|")(\w+)/i.exec(
              line,
            );
            if (comparison && !/typeof/.test(line)) suspicious.push(`${path.relative(PROJECT_ROOT, file)}:${i + 1}: ${line.trim()}`);
          });
      }
    }
  };
  walk(path.join(PROJECT_ROOT, 'src'));
  expect(suspicious).toEqual([]);
  expect(fs.readFileSync(path.join(PROJECT_ROOT, 'src/accounts/secrets.ts'), 'utf8')).toContain('timingSafeEqual(');
  // API keys are found by an index lookup of their SHA-256 (and cached by that hash), never compared.
  const accounts = fs.readFileSync(path.join(PROJECT_ROOT, 'src/accounts/accounts.ts'), 'utf8');
  expect(accounts).toMatch(/const keyHash = hashApiKey\(key\)/);
  expect(accounts).toMatch(/where\('k\.key_hash', '=', keyHash\)/);
});
