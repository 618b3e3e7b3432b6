import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A webhook receiver on loopback (node:http): records every request with its raw body and
 * answers as the test says — a status, or holding the request open (a hung receiver).
 */
export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
  path: string;
  at: number;
}

export type Behaviour = { status: number; body?: string; headers?: Record<string, string> } | 'hang';

export interface Receiver {
  url: string;
  received: Received[];
  /** How the next requests are answered, one entry each; then `fallback`. */
  script: Behaviour[];
  fallback: Behaviour;
  /** Answers every request held open so far with `status`. */
  releaseHeld(status?: number): void;
  held(): number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const held: http.ServerResponse[] = [];
  const receiver: Receiver = {
    url: '',
    received: [],
    script: [],
    fallback: { status: 200, body: '{"received":true}' },
    releaseHeld(status = 200) {
      for (const response of held.splice(0)) if (!response.writableEnded) response.writeHead(status).end();
    },
    held: () => held.length,
    async close() {
      receiver.releaseHeld();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      receiver.received.push({ headers: request.headers, body, json, path: request.url ?? '', at: Date.now() });
      const behaviour = receiver.script.shift() ?? receiver.fallback;
      if (behaviour === 'hang') held.push(response);
      else response.writeHead(behaviour.status, { 'content-type': 'text/plain', ...behaviour.headers }).end(behaviour.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

/**
 * Standard Webhooks verification written from the spec with node:crypto, independent of the
 * service's signer and of the SDK: true when one of the `v1,` signatures is
 * HMAC-SHA256(secret bytes, `${id}.${timestamp}.${body}`).
 */
export function independentlyVerified(received: Received, secret: string): boolean {
  const id = String(received.headers['webhook-id']);
  const timestamp = String(received.headers['webhook-timestamp']);
  const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64')).update(`${id}.${timestamp}.${received.body}`).digest('base64');
  return String(received.headers['webhook-signature'])
    .split(' ')
    .some((entry) => entry === `v1,${expected}`);
}
