import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A webhook receiver on loopback (node:http): records every request with its raw body and
 * answers as the test says — a status, the same after `delayMs` (a slow receiver), or holding
 * the request open (a hung receiver).
 */
export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
  path: string;
  at: number;
  /** When the connection of this request closed (the sender gave up, or the answer was sent). */
  closedAt?: number;
}

export type Behaviour = { status: number; body?: string; headers?: Record<string, string>; delayMs?: number } | 'hang';

export interface Receiver {
  url: string;
  received: Received[];
  /** How the next requests are answered, one entry each; then `fallback`. */
  script: Behaviour[];
  fallback: Behaviour;
  /** Answers every request held open so far with `status`. */
  releaseHeld(status?: number): void;
  held(): number;
  /** The most requests it had unanswered at once so far. */
  mostOpen(): number;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const held: http.ServerResponse[] = [];
  const delayed = new Set<NodeJS.Timeout>();
  let open = 0;
  let mostOpen = 0;
  const receiver: Receiver = {
    url: '',
    received: [],
    script: [],
    fallback: { status: 200, body: '{"received":true}' },
    releaseHeld(status = 200) {
      for (const response of held.splice(0)) if (!response.writableEnded) response.writeHead(status).end();
    },
    held: () => held.length,
    mostOpen: () => mostOpen,
    async close() {
      for (const timer of delayed) clearTimeout(timer);
      delayed.clear();
      receiver.releaseHeld();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer((request, response) => {
    mostOpen = Math.max(mostOpen, ++open);
    response.once('close', () => open--);
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
      const received: Received = { headers: request.headers, body, json, path: request.url ?? '', at: Date.now() };
      receiver.received.push(received);
      response.once('close', () => {
        received.closedAt = Date.now();
      });
      const behaviour = receiver.script.shift() ?? receiver.fallback;
      const answer = (b: Exclude<Behaviour, 'hang'>) => {
        if (!response.writableEnded && !response.destroyed) response.writeHead(b.status, { 'content-type': 'text/plain', ...b.headers }).end(b.body ?? '');
      };
      if (behaviour === 'hang') held.push(response);
      else if (behaviour.delayMs) {
        const timer = setTimeout(() => {
          delayed.delete(timer);
          answer(behaviour);
        }, behaviour.delayMs);
        delayed.add(timer);
      } else answer(behaviour);
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
  const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64'))
    .update(`${id}.${timestamp}.${received.body}`)
    .digest('base64');
  return String(received.headers['webhook-signature'])
    .split(' ')
    .some((entry) => entry === `v1,${expected}`);
}
