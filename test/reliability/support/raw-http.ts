import net from 'node:net';

/**
 * HTTP/1.1 over a bare TCP socket, byte for byte: what `fetch` refuses to send (NUL bytes or
 * invalid UTF-8 in the path and headers, duplicate JSON keys as written, chunked bodies, odd
 * encodings) reaches the server exactly as written. One connection per request
 * (`Connection: close`); every request has a hard deadline, so a server that hangs fails the
 * test instead of stalling it.
 */
export interface RawRequest {
  method: string;
  /** Request target as raw bytes or latin1 text (percent-encoding is the caller's business). */
  target: string | Buffer;
  /** Header lines, each [name, value]; values may be Buffers with any bytes. */
  headers: [string, string | Buffer][];
  body?: Buffer;
  /** Send the body with Transfer-Encoding: chunked, in chunks of this many bytes. */
  chunked?: number;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  ms: number;
}

export class RawTimeout extends Error {}

export function rawRequest(origin: string, request: RawRequest, timeoutMs = 10_000): Promise<RawResponse> {
  const { hostname, port } = new URL(origin);
  const started = performance.now();
  const head: Buffer[] = [Buffer.from(`${request.method} `, 'latin1'), toBuffer(request.target), Buffer.from(' HTTP/1.1\r\n', 'latin1')];
  const names = new Set(request.headers.map(([name]) => name.toLowerCase()));
  const headers: [string, string | Buffer][] = [...request.headers];
  if (!names.has('host')) headers.unshift(['Host', `${hostname}:${port}`]);
  headers.push(['Connection', 'close']);
  const body = request.body;
  if (body !== undefined && request.chunked) headers.push(['Transfer-Encoding', 'chunked']);
  else if (body !== undefined && !names.has('content-length')) headers.push(['Content-Length', String(body.length)]);
  for (const [name, value] of headers) head.push(Buffer.from(`${name}: `, 'latin1'), toBuffer(value), Buffer.from('\r\n', 'latin1'));
  head.push(Buffer.from('\r\n', 'latin1'));
  const payload = body === undefined ? Buffer.alloc(0) : request.chunked ? chunk(body, request.chunked) : body;

  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port) });
    const received: Buffer[] = [];
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (error) return reject(error);
      try {
        resolve({ ...parseResponse(Buffer.concat(received)), ms: performance.now() - started });
      } catch (parseError) {
        reject(parseError);
      }
    };
    const timer = setTimeout(() => finish(new RawTimeout(`no complete answer within ${timeoutMs} ms to ${request.method} ${String(request.target).slice(0, 200)}`)), timeoutMs);
    // write, not end: Node's HTTP server drops a request whose client half-closes before the
    // answer is ready (it does not allow half-open sockets); `Connection: close` ends it instead.
    socket.on('connect', () => socket.write(Buffer.concat([...head, payload])));
    socket.on('data', (data) => received.push(data));
    // The server may answer and close before reading the whole body (413): what came back counts.
    socket.on('error', (error) => (received.length > 0 ? finish() : finish(error)));
    socket.on('close', () => finish());
  });
}

function toBuffer(value: string | Buffer): Buffer {
  return typeof value === 'string' ? Buffer.from(value, 'latin1') : value;
}

function chunk(body: Buffer, size: number): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at < body.length; at += size) {
    const piece = body.subarray(at, at + size);
    parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`, 'latin1'), piece, Buffer.from('\r\n', 'latin1'));
  }
  parts.push(Buffer.from('0\r\n\r\n', 'latin1'));
  return Buffer.concat(parts);
}

/** Parses one HTTP/1.1 response (Content-Length, chunked, or read-until-close bodies). */
export function parseResponse(raw: Buffer): Omit<RawResponse, 'ms'> {
  // Interim answers (100 Continue to `Expect: 100-continue`) precede the real one.
  while (/^HTTP\/1\.[01] 1\d\d /.test(raw.subarray(0, 16).toString('latin1'))) {
    const interimEnd = raw.indexOf('\r\n\r\n');
    if (interimEnd < 0) break;
    raw = raw.subarray(interimEnd + 4);
  }
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) throw new Error(`incomplete response (${raw.length} bytes): ${JSON.stringify(raw.toString('latin1').slice(0, 300))}`);
  const [statusLine = '', ...lines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (!status) throw new Error(`not an HTTP status line: ${JSON.stringify(statusLine)}`);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  let body = raw.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = unchunk(body);
  else if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
  return { status: Number(status[1]), headers, body: body.toString('utf8') };
}

function unchunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd < 0) throw new Error('truncated chunked body');
    const size = Number.parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size)) throw new Error('bad chunk size');
    if (size === 0) return Buffer.concat(parts);
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
}
