import { STYLE } from './page-style.js';
import { type Brand, DEFAULT_BRAND_NAME, envPrefix } from '../../../domain/brand.js';
import { API_ERRORS, ERROR_STATUS } from '../../../domain/api-error.js';
import { ERROR_CODES, ERROR_DOCS } from './components.js';

/**
 * The API reference page (GET /docs): plain server-rendered HTML with its own small stylesheet,
 * nothing loaded from elsewhere. The guide sections are written here; the endpoint, object and
 * error sections are rendered from the OpenAPI document, so the page and the document cannot
 * disagree.
 */

type Json = Record<string, unknown>;
export type ReferenceDocument = Json & { paths: Record<string, Record<string, Json>>; components: { schemas: Record<string, Json> }; servers: { url: string }[] };

const esc = (text: unknown) => String(text).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

/** The little Markdown our descriptions use: `code` and **bold**. */
const inline = (text: unknown) =>
  esc(text)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');

/** A code block; it scrolls sideways on a narrow screen, so it takes the keyboard's focus too. */
const pre = (text: string, label = '') => `<pre tabindex="0"${label ? ` aria-label="${esc(label)}"` : ''}><code>${esc(text)}</code></pre>`;
const json = (value: unknown) => JSON.stringify(value, null, 2);

function resolve(doc: ReferenceDocument, schema: Json | undefined): Json | undefined {
  const ref = schema?.$ref;
  if (typeof ref !== 'string') return schema;
  return doc.components.schemas[ref.split('/').pop() as string];
}

const refName = (schema: Json | undefined) => (typeof schema?.$ref === 'string' ? (schema.$ref.split('/').pop() as string) : undefined);

/** A short type label for a schema: `string`, `"stars" | "premium"`, `Amount`, `OrderEvent[]`… */
function typeLabel(schema: Json | undefined): string {
  if (!schema) return 'any';
  const name = refName(schema);
  if (name) return `<a href="#schema-${esc(name)}">${esc(name)}</a>`;
  if (schema.const !== undefined) return `<code>${esc(JSON.stringify(schema.const))}</code>`;
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => `<code>${esc(JSON.stringify(value))}</code>`).join(' | ');
  if (Array.isArray(schema.oneOf)) return schema.oneOf.map((variant) => typeLabel(variant as Json)).join(' | ');
  const type = Array.isArray(schema.type) ? schema.type.join(' | ') : String(schema.type ?? 'any');
  if (type === 'array') return `${typeLabel(schema.items as Json)}[]`;
  return esc(type);
}

function constraints(schema: Json): string {
  const parts: string[] = [];
  const { minLength, maxLength, minimum, maximum } = schema;
  if (minLength !== undefined && maxLength !== undefined) parts.push(`${minLength}–${maxLength} characters.`);
  else if (maxLength !== undefined) parts.push(`At most ${maxLength} characters.`);
  else if (minLength !== undefined) parts.push(`At least ${minLength} characters.`);
  if (minimum !== undefined || maximum !== undefined) parts.push(`${minimum ?? '−∞'}–${maximum ?? '∞'}.`);
  // A format (date-time, uri) says it better than its pattern.
  if (typeof schema.pattern === 'string' && schema.format === undefined) parts.push(`Pattern <code>${esc(schema.pattern)}</code>.`);
  return parts.join('; ');
}

interface Row {
  name: string;
  type: string;
  required: boolean;
  description: string;
}

/** The fields of an object schema, nested plain objects flattened as `a.b`. */
function fieldRows(doc: ReferenceDocument, schema: Json | undefined, prefix = ''): Row[] {
  const resolved = resolve(doc, schema);
  const properties = (resolved?.properties ?? {}) as Record<string, Json>;
  const required = new Set((resolved?.required ?? []) as string[]);
  const rows: Row[] = [];
  for (const [name, property] of Object.entries(properties)) {
    const full = `${prefix}${name}`;
    const nested = !refName(property) && property.type === 'object' && property.properties && Object.keys(property.properties).length > 0;
    const extra = constraints(property);
    rows.push({
      name: full,
      type: nested ? 'object' : typeLabel(property),
      required: required.has(name),
      description: [property.description ? inline(property.description) : '', extra].filter(Boolean).join(' '),
    });
    if (nested) rows.push(...fieldRows(doc, property, `${full}.`));
  }
  return rows;
}

function fieldTable(rows: Row[], caption: string): string {
  if (rows.length === 0) return '<p class="muted">No fields.</p>';
  return `<table><caption>${esc(caption)}</caption><thead><tr><th>field</th><th>type</th><th></th><th>notes</th></tr></thead><tbody>${rows
    .map(
      (row) =>
        `<tr><td><code>${esc(row.name)}</code></td><td>${row.type}</td><td>${row.required ? '<span class="req">required</span>' : '<span class="muted">optional</span>'}</td><td>${row.description}</td></tr>`,
    )
    .join('')}</tbody></table>`;
}

function curlFor(path: string, method: string, operation: Json, env: string): string {
  const lines = [
    `curl -sS${method === 'get' ? '' : ` -X ${method.toUpperCase()}`} "$${env}_BASE_URL${examplePath(path, operation)}" \\`,
    `  -H "Authorization: Bearer $${env}_API_KEY"`,
  ];
  const parameters = (operation.parameters ?? []) as Json[];
  if (parameters.some((p) => p.name === 'Idempotency-Key')) lines[lines.length - 1] += ' \\\n  -H "Idempotency-Key: $(uuidgen)"';
  const body = (operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
  const examples = body?.['application/json']?.examples as Record<string, { value: unknown }> | undefined;
  const example = examples ? Object.values(examples)[0]?.value : undefined;
  if (example !== undefined) lines[lines.length - 1] += ` \\\n  -H "Content-Type: application/json" \\\n  -d '${JSON.stringify(example)}'`;
  return lines.join('\n');
}

function examplePath(path: string, operation: Json): string {
  const parameters = (operation.parameters ?? []) as Json[];
  let out = path.replace(/\{([^}]+)\}/g, (_, name: string) => String(parameters.find((p) => p.name === name)?.example ?? (name === 'id' ? '$ORDER_ID' : `{${name}}`)));
  const query = parameters.filter((p) => p.in === 'query' && p.required).map((p) => `${p.name}=${String(p.example ?? '')}`);
  if (query.length > 0) out += `?${query.join('&')}`;
  return out;
}

function operationSection(doc: ReferenceDocument, path: string, method: string, operation: Json, env: string): string {
  const id = String(operation.operationId);
  const parameters = (operation.parameters ?? []) as Json[];
  const paramRows = parameters.map((p) => ({
    name: String(p.name),
    type: `${typeLabel(p.schema as Json)} <span class="muted">(${esc(p.in)})</span>`,
    required: Boolean(p.required),
    description: [p.description ? inline(p.description) : '', constraints((p.schema ?? {}) as Json)].filter(Boolean).join(' '),
  }));
  const body = ((operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined)?.['application/json'];
  const responses = Object.entries(operation.responses as Record<string, Json>);
  const responseItems = responses
    .map(([status, response]) => {
      const content = (response.content as Record<string, Json> | undefined)?.['application/json'];
      const examples = Object.entries((content?.examples ?? {}) as Record<string, { summary?: string; value: unknown }>);
      const success = status.startsWith('2');
      const headers = Object.keys((response.headers ?? {}) as Json).filter((h) => h !== 'Request-Id');
      return `<li><span class="status s${status[0]}">${esc(status)}</span> ${inline(response.description)}${
        headers.length > 0 ? ` <span class="muted">Headers: ${headers.map((h) => `<code>${esc(h)}</code>`).join(', ')}.</span>` : ''
      }${success && examples[0] ? pre(json(examples[0][1].value), `${status} example`) : ''}</li>`;
    })
    .join('');
  return `<section class="op" id="${esc(id)}">
<h3><span class="method m-${esc(method)}">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code> <span class="summary">${esc(operation.summary)}</span></h3>
<p>${inline(operation.description ?? '')}</p>
${paramRows.length > 0 ? fieldTable(paramRows, 'Parameters and headers (besides Authorization)') : ''}
${body ? `<p>${inline((operation.requestBody as Json).description ?? '')}</p>${fieldTable(fieldRows(doc, body.schema as Json), 'Request body (JSON)')}` : ''}
<h4>Example</h4>
${pre(curlFor(path, method, operation, env), `curl ${id}`)}
<h4>Responses</h4>
<ul class="responses">${responseItems}</ul>
</section>`;
}

const OBJECTS = ['Order', 'OrderWithEvents', 'OrderEvent', 'Amount', 'Quote', 'RecipientValidation', 'Balance', 'WebhookEndpoint', 'Error'];

function objectSection(doc: ReferenceDocument, name: string): string {
  const schema = doc.components.schemas[name];
  if (!schema) return '';
  let body: string;
  if (Array.isArray(schema.oneOf)) {
    body = `<p>One of these, told apart by <code>type</code>:</p>${(schema.oneOf as Json[])
      .map((variant) => {
        const resolved = resolve(doc, variant) as Json;
        return `<h4 id="schema-${esc(refName(variant))}">${inline(resolved.description ?? refName(variant))}</h4>${fieldTable(fieldRows(doc, resolved), String(refName(variant)))}`;
      })
      .join('')}`;
  } else {
    body = fieldTable(fieldRows(doc, schema), name);
  }
  return `<section id="schema-${esc(name)}"><h3>${esc(name)}</h3><p>${inline(schema.description ?? '')}</p>${body}</section>`;
}

/** The SDKs, by the project's own name (left out of a branded page). */
function sdkSection(base: string): string {
  return `<h2 id="sdk">SDKs</h2>
<p>Two clients ship with the service, in its repository. The TypeScript one, <code>@starport/sdk</code> (<code>packages/sdk</code>), wraps every endpoint with types, generates Idempotency-Keys, retries safely with backoff, raises typed errors and polls for you:</p>
${pre(`import { Starport, InsufficientBalanceError } from '@starport/sdk';

const starport = new Starport({ apiKey: process.env.STARPORT_API_KEY!, baseUrl: '${base}' });
const order = await starport.createOrder({ product: 'stars', recipient: '@durov', quantity: 50 });
const final = await starport.waitForOrder(order.id, { timeout: 60_000 });
console.log(final.status); // "delivered" or "failed"`)}
<p>The Python one, <code>starport</code> (<code>packages/python</code>, Python 3.9+, standard library only; <code>pip install ./packages/python</code>), does the same,
with money as <code>Decimal</code> and one exception class per error code:</p>
${pre(`from starport import Starport, InsufficientBalance

starport = Starport("sk_test_…", base_url="${base}")
order = starport.create_order("stars", "@durov", 50)
final = starport.wait_for_order(order.id, timeout=60)
print(final.status)  # "delivered" or "failed"`)}`;
}

/**
 * The page for `brand` (docs/operations.md "Branding"): its name in the title and the text, its
 * prefix on the example variables. The SDKs carry the project's own name, so a branded page
 * leaves their section out: clients of a reseller use the API (or a client generated from the
 * OpenAPI document).
 */
export function renderReferencePage(doc: ReferenceDocument, brand: Brand): string {
  const name = esc(brand.name);
  const env = envPrefix(brand);
  const sdks = brand.name === DEFAULT_BRAND_NAME;
  const base = doc.servers[0]?.url ?? '/api/v1';
  const operations: { path: string; method: string; operation: Json }[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(methods)) operations.push({ path, method, operation });
  }
  const nav = `<nav aria-label="Contents">
<div class="group">Guide</div>
<ul>
<li><a href="#first-order">Your first order</a></li>
<li><a href="#authentication">Authentication and modes</a></li>
<li><a href="#conventions">Formats</a></li>
<li><a href="#idempotency">Idempotency and retries</a></li>
<li><a href="#polling">Polling</a></li>
<li><a href="#test-mode">Test mode</a></li>
<li><a href="#rate-limits">Rate limits</a></li>
${sdks ? '<li><a href="#sdk">SDKs: TypeScript, Python</a></li>\n' : ''}</ul>
<div class="group">Endpoints</div>
<ul>${operations.map(({ path, method, operation }) => `<li><a href="#${esc(operation.operationId)}">${esc(method.toUpperCase())} ${esc(path)}</a></li>`).join('')}</ul>
<div class="group">Reference</div>
<ul>
<li><a href="#objects">Objects</a></li>
<li><a href="#errors">Errors</a></li>
<li><a href="${esc(base)}/openapi.json">OpenAPI 3.1 document</a></li>
</ul>
</nav>`;

  const magic = [
    [
      '@test_invalid',
      '400 <code>recipient_invalid</code>, <code>details.reason: "not_found"</code>',
      'created (201) → <code>processing</code> → <code>failed</code>, <code>failure_reason: "recipient_invalid"</code>',
    ],
    ...['not_found', 'not_a_user', 'already_premium', 'not_eligible'].map((reason) => [
      `@test_${reason}`,
      `400 <code>recipient_invalid</code>, <code>details.reason: "${reason}"</code>${reason === 'already_premium' ? ' (premium; stars are eligible)' : ''}`,
      `created → <code>processing</code> → <code>failed</code>, <code>failure_reason: "${reason}"</code>${reason === 'already_premium' ? ' (premium; stars are delivered)' : ''}`,
    ]),
    ['@test_failed', 'eligible', 'created → <code>processing</code> → <code>failed</code>, <code>failure_reason: "upstream_error"</code>'],
    ['@test_slow', 'eligible', 'created → <code>processing</code> → about 30 s → <code>delivered</code>'],
    ['any other valid username', 'eligible (<code>display_name</code> = the username)', 'created → <code>processing</code> → <code>delivered</code> (about 2 s)'],
  ];

  const errorRows = ERROR_CODES.map(
    (code) => `<tr id="error-${esc(code)}"><td>${ERROR_STATUS[code]}</td><td><code>${esc(code)}</code></td><td>${inline(ERROR_DOCS[code].when)}</td></tr>`,
  ).join('');

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${name} API reference</title>
<style>${STYLE}</style>
</head>
<body>
<div class="layout">
${nav}
<main>
<h1>${name} API reference</h1>
<p>${name} sells Telegram Stars and Premium subscriptions over HTTP, paid from your prepaid TON balance. Base URL:</p>
${pre(base, 'base URL')}
<p>JSON in and out. Every endpoint needs <code>Authorization: Bearer &lt;key&gt;</code>. The machine-readable description is the
<a href="${esc(base)}/openapi.json">OpenAPI 3.1 document</a> (no key needed): generate a client from it${sdks ? ', or use an <a href="#sdk">SDK (TypeScript, Python)</a>' : ''}.</p>

<h2 id="first-order">Your first order, step by step</h2>
<p>Use a <strong>test key</strong> (<code>sk_test_…</code>): test orders use a separate test balance and never touch the outside world.</p>
<ol>
<li><p>Set your key and the base URL:</p>
${pre(`export ${env}_API_KEY=sk_test_…\nexport ${env}_BASE_URL=${base}`)}</li>
<li><p>Check what you can spend:</p>
${pre(`curl -sS "$${env}_BASE_URL/balance" -H "Authorization: Bearer $${env}_API_KEY"`)}
${pre('{"ok":true,"balance":{"value":"12.5","reserved":"0","currency":"TON"},"mode":"test"}')}</li>
<li><p>Optionally check the recipient and the price:</p>
${pre(`curl -sS -X POST "$${env}_BASE_URL/recipients/validate" \\
  -H "Authorization: Bearer $${env}_API_KEY" -H "Content-Type: application/json" \\
  -d '{"product":"stars","recipient":"@durov","quantity":50}'

curl -sS "$${env}_BASE_URL/quote?product=stars&quantity=50" -H "Authorization: Bearer $${env}_API_KEY"`)}</li>
<li><p>Create the order. Generate one <code>Idempotency-Key</code> per new order and keep it: if the request times out, send it again
with the <em>same</em> key and body and you get the same order back, never a second one.</p>
${pre(`KEY=$(uuidgen)
curl -sS -X POST "$${env}_BASE_URL/orders" \\
  -H "Authorization: Bearer $${env}_API_KEY" \\
  -H "Idempotency-Key: $KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"product":"stars","recipient":"@durov","quantity":50,"external_id":"invoice-1042"}'`)}
<p>The answer is <code>201</code> with the order in <code>fulfillment_pending</code>; its price is now reserved on your balance.</p></li>
<li><p>Poll the order until its <code>status</code> is <code>delivered</code> or <code>failed</code>:</p>
${pre(`ORDER_ID=ord_…   # the "id" from step 4
while :; do
  STATUS=$(curl -sS "$${env}_BASE_URL/orders/$ORDER_ID" -H "Authorization: Bearer $${env}_API_KEY" \\
    | grep -o '"status":"[a-z_]*"' | head -1 | cut -d'"' -f4)
  echo "$STATUS"; case "$STATUS" in delivered|failed) break;; esac
  sleep 1   # test mode; use 5–15 s for live orders
done`)}
<p>A test order is <code>delivered</code> about 2 s after creation: the reserve is debited. Try <code>@test_failed</code> to see a failure: the reserve is released.</p></li>
</ol>

<h2 id="authentication">Authentication and modes</h2>
<ul>
<li>Send <code>Authorization: Bearer &lt;key&gt;</code> on every request (scheme case-insensitive, one space). Keys are shown once in the dashboard; reissuing one revokes the old one at once.</li>
<li><code>sk_live_…</code> keys act on the live balance and live orders; <code>sk_test_…</code> keys on a separate test balance and test orders. Neither mode sees the other’s orders (they answer 404).</li>
<li>A key is 46 characters with a checksum: a mistyped key is <code>invalid_api_key</code> at once. Keep keys on your server: the API sends no CORS headers.</li>
<li>This page and the OpenAPI document need no key.</li>
</ul>

<h2 id="conventions">Formats</h2>
<ul>
<li>Every JSON body has a boolean <code>ok</code> (the OpenAPI document, which follows the OpenAPI schema, excepted). Every response carries a <code>Request-Id</code> header; error bodies repeat it as <code>request_id</code>.</li>
<li>Money is TON as a decimal <em>string</em>: <code>"0.25"</code>, at most 9 fractional digits, trailing zeros trimmed, no exponent. Prices are rounded up to the nanoton. Never parse it into a float.</li>
<li>Timestamps are RFC 3339 in UTC with milliseconds: <code>2026-11-25T21:30:00.123Z</code>. Ids: <code>ord_…</code>, <code>evt_…</code>, <code>req_…</code>.</li>
<li>Input is strict: <code>"100"</code> is not <code>100</code>, unknown body fields are rejected, query integers are digits only, a repeated query parameter is an error.</li>
<li>Products: <code>stars</code> 50–10000; <code>premium</code> 3, 6 or 12 months. Recipients are usernames (4–32 letters, digits or underscores, starting with a letter and not ending with <code>_</code>), with or without a leading <code>@</code>.</li>
</ul>

<h2 id="idempotency">Idempotency and retries</h2>
<ul>
<li><code>POST /orders</code> requires an <code>Idempotency-Key</code> header: a unique string per new order (a UUID), 1–255 characters, compared exactly.</li>
<li>Retry a timed-out or failed-network request with the <strong>same key and body</strong>: the answer is <code>201</code> with the same order in its current state and the header <code>Idempotent-Replayed: true</code>.</li>
<li>The same key with different parameters is <code>409 idempotency_conflict</code>. A second request while the first is still running waits for it (up to 10 s, then <code>409 idempotency_key_in_use</code>: retry with the same key).</li>
<li>Only a request that created an order binds its key: after a 400, 402 or 503 you may send the same key again.</li>
<li>Retry on network errors, <code>429</code> (after <code>Retry-After</code> seconds) and <code>5xx</code>, with exponential backoff and jitter. Do not retry other <code>4xx</code>: fix the request.</li>
</ul>

<h2 id="polling">Polling</h2>
<p>Orders are fulfilled in the background. After <code>POST /orders</code>, poll <code>GET /orders/{id}</code> until <code>status</code> is <code>delivered</code> or <code>failed</code>; both are final.</p>
<ul>
<li>Live orders: poll every <strong>5 to 15 seconds</strong>.</li>
<li>Test orders move to <code>processing</code> within a second and settle about 2 s after creation (<code>@test_slow</code>: about 30 s), so polling every 0.5–1 s is fine in test mode.</li>
<li><code>events</code> tells the history, oldest first; <code>failure_reason</code> says why an order failed.</li>
<li>To be told instead of polling, register a webhook endpoint (<a href="#createWebhookEndpoint">POST /webhook_endpoints</a>): every order event is POSTed to it, signed per Standard Webhooks.</li>
</ul>

<h2 id="test-mode">Test mode</h2>
<p>With a <code>sk_test_…</code> key nothing leaves ${name}: orders are simulated. These recipients (case-insensitive) force an outcome:</p>
<table><thead><tr><th>recipient</th><th>POST /recipients/validate</th><th>order</th></tr></thead><tbody>
${magic.map(([who, validate, order]) => `<tr><td><code>${esc(who)}</code></td><td>${validate}</td><td>${order}</td></tr>`).join('')}
</tbody></table>

<h2 id="rate-limits">Rate limits</h2>
<p>Requests are limited per key. Every authenticated response carries <code>RateLimit-Policy</code> (e.g. <code>"default";q=200;w=2</code>) and <code>RateLimit</code>
(e.g. <code>"default";r=150;t=1</code>: 150 requests left). Over the limit the answer is <code>429 rate_limited</code> with <code>Retry-After</code> in seconds.</p>

${sdks ? sdkSection(base) : ''}
<h2 id="endpoints">Endpoints</h2>
${operations.map(({ path, method, operation }) => operationSection(doc, path, method, operation, env)).join('\n')}

<h2 id="objects">Objects</h2>
${OBJECTS.map((name) => objectSection(doc, name)).join('\n')}

<h2 id="errors">Errors</h2>
<p>Every error answers <code>{"ok": false, "error": {"code", "message", "param"?, "details"?}, "request_id"}</code>. Match on <code>code</code>;
<code>message</code> is for people and may change. <code>param</code> names the input at fault.</p>
${pre(json({ ok: false, error: { code: 'insufficient_balance', message: API_ERRORS.insufficient_balance.message, param: 'quantity', details: { available: '0.1', required: '0.25' } }, request_id: 'req_4Xb0Yw3kq9T2mZlF8sV1aC' }))}
<p>When several checks fail, the first in this order answers: unknown route (404), authentication (401), rate limit (429), body size (413), content type (415),
<code>invalid_json</code>, the Idempotency-Key header, body fields, idempotency replay or conflict, live availability, balance.</p>
<table><thead><tr><th>HTTP</th><th>code</th><th>when</th></tr></thead><tbody>${errorRows}</tbody></table>
</main>
</div>
</body>
</html>
`;
}
