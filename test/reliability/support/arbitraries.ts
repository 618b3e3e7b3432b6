import fc from 'fast-check';
import type { ApiOperation, Schema } from './api-document.js';
import type { RawRequest } from './raw-http.js';

/**
 * fast-check arbitraries for hostile HTTP requests, built from an operation of the served
 * OpenAPI document. Bodies are produced as text (then bytes), not through JSON.stringify, so
 * they can carry duplicate keys, raw number tokens (50.0, 1e400, -0), escaped keys, NUL
 * bytes, invalid UTF-8, other encodings, deep nesting and sizes around the 16 KiB limit.
 */

const NASTY_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '__proto__',
  'constructor',
  'prototype',
  '../../../../etc/passwd',
  '%00',
  '%ff',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, sent as typed
  '${7*7}',
  '\uD800',
  '\uDFFF\uD800',
  '\u202E',
  '\uFEFF',
  '𝕏'.repeat(40),
  'x'.repeat(129),
  'x'.repeat(4000),
  'NaN',
  'Infinity',
  '1e400',
  'null',
  'true',
  '@',
  '@@durov',
  '@durov',
  'durov_',
  'test_failed',
  '@test_invalid',
  'stars',
  'premium',
  '50',
  '-1',
  '０',
];

/** Raw JSON number tokens JSON.stringify would never write. */
const NUMBER_TOKENS = [
  '50.0',
  '5e1',
  '1e2',
  '-0',
  '0.5',
  '1e400',
  '-1e400',
  '5E+1',
  '50.000000000000001',
  '9007199254740993',
  `1${'0'.repeat(400)}`,
  '0.1e-400',
  '3',
  '6',
  '12',
  '10000',
  '10001',
  '49',
];

export const nastyString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
);

/** A JSON text for any value (sometimes a raw token). */
const anyJsonText: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v) ?? 'null') },
  { weight: 2, arbitrary: fc.constantFrom(...NUMBER_TOKENS) },
  { weight: 2, arbitrary: nastyString.map((s) => JSON.stringify(s)) },
  { weight: 1, arbitrary: fc.constantFrom('{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}', '[]', '{}', 'null', 'true') },
);

/**
 * Values the schema cannot tell but the test service accepts: a webhook URL must resolve, and the
 * only names that resolve here are loopback ones (allowed by the fuzz harness in test mode).
 */
const HINTS: Record<string, unknown[]> = { url: ['http://127.0.0.1:9/fuzz-hook'] };
function withHint(key: string, schema: Schema): Schema {
  const hints = HINTS[key];
  return hints ? { ...schema, examples: [...(Array.isArray(schema.examples) ? schema.examples : []), ...hints] } : schema;
}

/** A JSON text that the schema should accept (best effort), for the parts the schema describes. */
export function validJsonText(schema: Schema): fc.Arbitrary<string> {
  return validValue(schema).map((value) => JSON.stringify(value) ?? 'null');
}

function validValue(schema: Schema): fc.Arbitrary<unknown> {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...schema.enum);
  if ('const' in schema) return fc.constant(schema.const);
  const examples: unknown[] = Array.isArray(schema.examples) ? schema.examples : [];
  const type = Array.isArray(schema.type) ? schema.type : [schema.type];
  const options: fc.Arbitrary<unknown>[] = [];
  if (examples.length > 0) options.push(fc.constantFrom(...examples));
  if (type.includes('null')) options.push(fc.constant(null));
  if (type.includes('string')) {
    const pattern = typeof schema.pattern === 'string' ? new RegExp(schema.pattern, 'u') : undefined;
    options.push(
      pattern
        ? fc.stringMatching(pattern).filter((s) => s.length >= (schema.minLength ?? 0) && s.length <= (schema.maxLength ?? 1e6))
        : fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 40, 200) }),
    );
  }
  if (type.includes('integer') || type.includes('number')) {
    options.push(fc.integer({ min: schema.minimum ?? 0, max: schema.maximum ?? 20000 }), fc.constantFrom(3, 6, 12, 50, 100, 10000));
  }
  if (type.includes('boolean')) options.push(fc.boolean());
  if (type.includes('object') && schema.properties) {
    options.push(
      fc.record(Object.fromEntries(Object.entries<Schema>(schema.properties).map(([key, sub]) => [key, validValue(withHint(key, sub))])), {
        requiredKeys: schema.required ?? [],
      }),
    );
  }
  if (type.includes('array')) options.push(fc.array(validValue(schema.items ?? {}), { maxLength: 3 }));
  return options.length > 0 ? fc.oneof(...options) : fc.jsonValue({ maxDepth: 2 });
}

/** One body member as text: a documented field (valid or hostile value) or a hostile key. */
function memberText(schema: Schema): fc.Arbitrary<string> {
  const properties = Object.entries<Schema>(schema.properties ?? {});
  const documented = properties.map(([key, sub]) =>
    fc.tuple(
      fc.oneof({ weight: 6, arbitrary: fc.constant(JSON.stringify(key)) }, { weight: 1, arbitrary: fc.constant(escapedKey(key)) }),
      fc.oneof({ weight: 5, arbitrary: validJsonText(withHint(key, sub)) }, { weight: 3, arbitrary: anyJsonText }),
    ),
  );
  const hostileKey = fc.tuple(
    fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', ''), nastyString).map((k) => JSON.stringify(k)),
    anyJsonText,
  );
  const arbitraries =
    documented.length > 0
      ? [
          { weight: 8, arbitrary: fc.oneof(...documented) },
          { weight: 1, arbitrary: hostileKey },
        ]
      : [{ weight: 1, arbitrary: hostileKey }];
  return fc.oneof(...arbitraries).map(([k, v]) => `${k}:${v}`);
}

/** "product" written with \u escapes: the same key to a JSON parser, different bytes to anything naive. */
function escapedKey(key: string): string {
  return `"${[...key].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`;
}

/** A body that follows the schema: every documented field once, in random order, valid values. */
function conformingBody(schema: Schema): fc.Arbitrary<string> {
  return validValue(schema).map((value) => JSON.stringify(value) ?? '{}');
}

/** An object body from members (documented fields, duplicates, hostile keys), as text. */
function objectBody(schema: Schema): fc.Arbitrary<string> {
  return fc.array(memberText(schema), { maxLength: 8 }).map((members) => `{${members.join(',')}}`);
}

const INVALID_UTF8 = [
  Buffer.from([0xff]),
  Buffer.from([0xc0, 0x80]),
  Buffer.from([0x80]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xf4, 0x90, 0x80, 0x80]),
  Buffer.from([0xe2, 0x82]),
];

/** Whole-body shapes: what a hostile or broken client might send as the payload. */
export function bodyBytes(schema: Schema | undefined): fc.Arbitrary<Buffer> {
  const object = schema ?? { type: 'object', properties: {} };
  const text = fc.oneof(
    { weight: 10, arbitrary: conformingBody(object) },
    { weight: 6, arbitrary: objectBody(object) },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 1, max: 9000 })
        .chain((depth) =>
          fc.constantFrom(
            `${'['.repeat(depth)}${']'.repeat(depth)}`,
            `{"product":${'['.repeat(depth)}${']'.repeat(depth)}}`,
            `${'{"a":'.repeat(Math.min(depth, 3000))}1${'}'.repeat(Math.min(depth, 3000))}`,
          ),
        ),
    },
    {
      weight: 1,
      // Around the 16 KiB limit: padded strings, big arrays, many keys.
      arbitrary: fc
        .integer({ min: 16_000, max: 17_000 })
        .chain((size) =>
          fc.constantFrom(
            `{"product":"stars","recipient":"durov","quantity":50,"external_id":"${'a'.repeat(size)}"}`,
            `{"product":"stars","x":[${Array.from({ length: Math.floor(size / 2) }, () => '0').join(',')}]}`,
            `{${Array.from({ length: Math.floor(size / 8) }, (_, i) => `"k${i}":1`).join(',')}}`,
          ),
        ),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        ' ',
        '\n',
        'null',
        '[]',
        '"stars"',
        '1',
        'true',
        '{',
        '{"product":',
        '{"a":1}}',
        '\u0000',
        '{"product":"stars"\u0000}',
        'undefined',
        "{'product':'stars'}",
      ),
    },
    { weight: 1, arbitrary: anyJsonText },
  );
  return fc.oneof(
    { weight: 10, arbitrary: text.map((t) => Buffer.from(t, 'utf8')) },
    // Invalid UTF-8 inside a string value of a valid body (external_id, recipient…).
    { weight: 2, arbitrary: fc.tuple(conformingBody(object), fc.nat(), fc.constantFrom(...INVALID_UTF8)).map(([t, at, bad]) => spliceIntoString(t, at, bad)) },
    // Invalid UTF-8 spliced somewhere into a plausible body.
    { weight: 2, arbitrary: fc.tuple(text, fc.nat(), fc.constantFrom(...INVALID_UTF8)).map(([t, at, bad]) => splice(Buffer.from(t, 'utf8'), at, bad)) },
    // Other encodings of a plausible body: UTF-16 with or without BOM, a UTF-8 BOM, latin1.
    {
      weight: 1,
      arbitrary: fc.tuple(conformingBody(object), fc.constantFrom('utf16le', 'utf16be', 'bom8', 'bom16', 'latin1')).map(([t, encoding]) => encode(t, encoding)),
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)) },
  );
}

/** Inserts `insert` right after the opening quote of one of the body's string values. */
function spliceIntoString(text: string, at: number, insert: Buffer): Buffer {
  const starts = [...text.matchAll(/":"/g)].map((m) => Buffer.byteLength(text.slice(0, (m.index ?? 0) + 3)));
  const buffer = Buffer.from(text, 'utf8');
  if (starts.length === 0) return splice(buffer, at, insert);
  const index = starts[at % starts.length] as number;
  return Buffer.concat([buffer.subarray(0, index), insert, buffer.subarray(index)]);
}

function splice(buffer: Buffer, at: number, insert: Buffer): Buffer {
  const index = buffer.length === 0 ? 0 : at % buffer.length;
  return Buffer.concat([buffer.subarray(0, index), insert, buffer.subarray(index)]);
}

function encode(text: string, encoding: string): Buffer {
  const utf16be = (t: string) => {
    const le = Buffer.from(t, 'utf16le');
    for (let i = 0; i + 1 < le.length; i += 2) [le[i], le[i + 1]] = [le[i + 1] as number, le[i] as number];
    return le;
  };
  switch (encoding) {
    case 'utf16le':
      return Buffer.from(text, 'utf16le');
    case 'utf16be':
      return utf16be(text);
    case 'bom8':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]);
    case 'bom16':
      return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    default:
      return Buffer.from(text, 'latin1');
  }
}

/** A value for a path or query parameter, already written into the request target (percent-encoded or raw). */
export function parameterText(schema: Schema, pool: string[] = []): fc.Arbitrary<string> {
  const valid = validValue(schema).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  const value = fc.oneof({ weight: 4, arbitrary: valid }, ...(pool.length > 0 ? [{ weight: 4, arbitrary: fc.constantFrom(...pool) }] : []), { weight: 3, arbitrary: nastyString });
  return fc.oneof(
    { weight: 12, arbitrary: value.map((v) => encodeURIComponent(safeForUri(v))) },
    // Percent-escapes of arbitrary bytes (invalid UTF-8, %00, %2F …).
    { weight: 2, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 12 }).map((bytes) => [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('')) },
    // Raw text, unencoded: latin1 bytes straight into the request line.
    { weight: 1, arbitrary: value },
    { weight: 1, arbitrary: fc.constantFrom('%', '%zz', '%0', '..', '.', '%2e%2e', 'x'.repeat(9000), `ord_${'A'.repeat(20000)}`) },
  );
}

/** encodeURIComponent throws on lone surrogates. */
function safeForUri(value: string): string {
  return value.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

export interface Credentials {
  testKey: string;
  liveKey: string;
}

function authorization(keys: Credentials): fc.Arbitrary<[string, string | Buffer][]> {
  return fc
    .oneof(
      { weight: 12, arbitrary: fc.constant(`Bearer ${keys.testKey}`) },
      { weight: 2, arbitrary: fc.constant(`Bearer ${keys.liveKey}`) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          `bearer ${keys.testKey}`,
          `BEARER  ${keys.testKey}`,
          `Bearer ${keys.testKey} `,
          'Bearer',
          'Bearer ',
          `Basic ${keys.testKey}`,
          `Bearer ${keys.testKey.slice(0, -1)}x`,
          `Bearer ${'sk_test_'.padEnd(46, 'A')}`,
        ),
      },
      { weight: 1, arbitrary: nastyString.map((s) => `Bearer ${s}`) },
    )
    .chain((value) =>
      fc.oneof(
        { weight: 10, arbitrary: fc.constant<[string, string | Buffer][]>([['Authorization', value]]) },
        { weight: 1, arbitrary: fc.constant<[string, string | Buffer][]>([]) },
        {
          weight: 1,
          arbitrary: fc.constant<[string, string | Buffer][]>([
            ['Authorization', value],
            ['Authorization', value],
          ]),
        },
      ),
    );
}

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json;charset=UTF-16',
  'APPLICATION/JSON',
  'application/json ; foo=bar',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/jsonx',
  'application/json, text/plain',
  '',
  '*/*',
];

function headerBytes(): fc.Arbitrary<string | Buffer> {
  return fc.oneof(
    { weight: 3, arbitrary: nastyString.map((s) => s.replace(/[\r\n]/g, '')) },
    // obs-text: bytes 0x80–0xff are legal in header values and reach the server as latin1.
    { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 40 }).map((b) => Buffer.from([...b].map((x) => (x === 10 || x === 13 ? 32 : x)))) },
  );
}

/** Everything but the body and target of one request. */
export function headerSet(keys: Credentials, hasBody: boolean, idempotencyPool: string[]): fc.Arbitrary<[string, string | Buffer][]> {
  const contentType = fc.oneof(
    { weight: 10, arbitrary: fc.constant<[string, string | Buffer][]>([['Content-Type', 'application/json']]) },
    { weight: 3, arbitrary: fc.constantFrom(...CONTENT_TYPES).map((v): [string, string | Buffer][] => [['Content-Type', v]]) },
    { weight: 1, arbitrary: fc.constant<[string, string | Buffer][]>([]) },
    { weight: 1, arbitrary: headerBytes().map((v): [string, string | Buffer][] => [['Content-Type', v]]) },
  );
  const idempotency = fc.oneof(
    { weight: 16, arbitrary: fc.uuid().map((v): [string, string | Buffer][] => [['Idempotency-Key', v]]) },
    { weight: 3, arbitrary: fc.constantFrom(...idempotencyPool).map((v): [string, string | Buffer][] => [['Idempotency-Key', v]]) },
    { weight: 1, arbitrary: fc.constant<[string, string | Buffer][]>([]) },
    {
      weight: 2,
      arbitrary: fc
        .oneof(headerBytes(), fc.constantFrom('x'.repeat(255), 'x'.repeat(256), '€'.repeat(255), '€'.repeat(256)))
        .map((v): [string, string | Buffer][] => [['Idempotency-Key', v]]),
    },
  );
  const extraHeaders = fc.array(
    fc.oneof(
      fc.constantFrom<[string, string | Buffer]>(
        ['Accept', 'text/html'],
        ['Accept-Encoding', 'gzip, br'],
        ['Content-Encoding', 'gzip'],
        ['Expect', '100-continue'],
        ['X-Forwarded-For', '10.0.0.1'],
        ['X-Forwarded-Proto', 'https'],
        ['Request-Id', 'req_forged'],
        ['Origin', 'https://evil.example'],
        ['Cookie', 'sp_session=forged'],
        ['__proto__', 'x'],
      ),
      fc.tuple(fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,20}$/), headerBytes()),
    ),
    { minLength: 1, maxLength: 3 },
  );
  const extra = fc.oneof({ weight: 4, arbitrary: fc.constant<[string, string | Buffer][]>([]) }, { weight: 1, arbitrary: extraHeaders });
  return fc.tuple(authorization(keys), hasBody ? contentType : fc.constant([]), idempotency, extra).map(([a, c, i, e]) => [...a, ...c, ...i, ...e]);
}

export interface FuzzCase {
  request: RawRequest;
  /** A printable URL for the OpenAPI checker (the raw target, latin1). */
  url: string;
}

/** Requests aimed at one operation of the document. */
export function requestFor(operation: ApiOperation, keys: Credentials, pools: { pathValues: string[]; idempotencyKeys: string[] }): fc.Arbitrary<FuzzCase> {
  const takesBody = operation.body !== undefined;
  const pathParameters = operation.parameters.filter((p) => p.in === 'path');
  const queryParameters = operation.parameters.filter((p) => p.in === 'query');
  const path = fc
    .tuple(...pathParameters.map((p) => parameterText(p.schema, pools.pathValues)))
    .map((values) => `/api/v1${pathParameters.reduce((template, p, i) => template.replace(`{${p.name}}`, values[i] as string), operation.template)}`);
  const queryPair = fc.oneof(
    ...queryParameters.map((p) => fc.tuple(fc.constant(p.name), parameterText(p.schema))),
    fc.tuple(
      fc.constantFrom('__proto__', 'constructor[prototype][polluted]', '__proto__[polluted]', 'a[b]', 'unknown', '', 'product%00', '%ff'),
      parameterText({ type: 'string' }),
    ),
  );
  const query = fc
    .tuple(
      // Each documented parameter at most once (valid or hostile), plus extras and repeats.
      // Left out half the time: lists take many optional filters and cursors, and the happy path
      // needs most of them absent or valid at once.
      fc.tuple(...queryParameters.map((p) => fc.option(fc.tuple(fc.constant(p.name), parameterText(p.schema)), { freq: 2, nil: undefined }))),
      fc.array(queryPair, { maxLength: 3 }),
      fc.oneof({ weight: 12, arbitrary: fc.constant('?') }, { weight: 1, arbitrary: fc.constantFrom('&', '?&&', '#frag?', '??') }),
    )
    .map(([documented, extra, lead]) => {
      const pairs = [...documented.filter((pair) => pair !== undefined), ...extra].map(([k, v]) => (k === '' ? v : `${k}=${v}`));
      return pairs.length === 0 ? '' : `${lead}${pairs.join('&')}`;
    });
  const body = takesBody
    ? fc.option(bodyBytes(operation.body), { freq: 12, nil: undefined })
    : fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: bodyBytes(undefined) });
  return fc
    .record({ path, query, headers: headerSet(keys, takesBody, pools.idempotencyKeys), body, chunked: fc.option(fc.integer({ min: 1, max: 4096 }), { freq: 5, nil: undefined }) })
    .map(({ path: p, query: q, headers, body: b, chunked }) => {
      const target = `${p}${q}`;
      const request: RawRequest = { method: operation.method, target, headers, ...(b !== undefined && { body: b }), ...(b !== undefined && chunked !== undefined && { chunked }) };
      return { request, url: target };
    });
}
