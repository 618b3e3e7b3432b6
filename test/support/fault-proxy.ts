import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fault-injecting HTTP proxy on 127.0.0.1 in front of a service. It forwards every request;
 * for the requests `drop` picks, it lets the service answer in full and then destroys the
 * client's socket instead of relaying the response — the client sees a network error although
 * the server did the work (the case idempotency keys exist for).
 */
export interface SeenRequest {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  /** The status the service answered with. */
  status?: number;
  dropped: boolean;
}

export interface FaultProxy {
  /** http://127.0.0.1:PORT */
  url: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export async function startFaultProxy(target: string, drop: (request: SeenRequest, index: number) => boolean): Promise<FaultProxy> {
  const upstream = new URL(target);
  const requests: SeenRequest[] = [];
  const server = http.createServer((req, res) => {
    const seen: SeenRequest = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, dropped: false };
    const index = requests.push(seen) - 1;
    const forward = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host } },
      (answer) => {
        seen.status = answer.statusCode;
        if (drop(seen, index)) {
          seen.dropped = true;
          // Read the whole answer (the service finishes its work), then cut the client off.
          answer.resume();
          answer.on('end', () => req.socket.destroy());
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => req.socket.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
