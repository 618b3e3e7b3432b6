import net from 'node:net';

/**
 * A TCP proxy on 127.0.0.1 in front of a server (PostgreSQL), for fault injection. Modes:
 *
 * - `pass`: connections go through.
 * - `refuse`: the proxy stops listening, so new connections are refused (ECONNREFUSED), as by
 *   a server that is down; connections already made keep working.
 * - `partition`: new connections are accepted and never answered (nothing reaches the server),
 *   and existing ones freeze both ways: no byte, FIN or reset crosses, as in a network
 *   partition. Switching back to `pass` heals it: frozen connections resume with what was
 *   held, held new ones reach the server, and a side that closed meanwhile closes the other.
 *
 * `resetAll()` resets every connection at once (both sides), as a server restart or a
 * failover does.
 */
export type ProxyMode = 'pass' | 'refuse' | 'partition';

export interface TcpFaultProxy {
  port: number;
  /** `databaseUrl` with its host and port replaced by the proxy's. */
  urlFor(databaseUrl: string): string;
  mode(): ProxyMode;
  setMode(mode: ProxyMode): Promise<void>;
  resetAll(): void;
  /** Connections currently open through the proxy. */
  open(): number;
  close(): Promise<void>;
}

interface Pair {
  client: net.Socket;
  upstream: net.Socket | undefined;
  frozen: boolean;
  /** Bytes held while frozen, per direction. */
  toUpstream: Buffer[];
  toClient: Buffer[];
  /** A side ended or failed while frozen: the other is closed on healing. */
  closedWhileFrozen: boolean;
  done: boolean;
}

export async function startTcpFaultProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<TcpFaultProxy> {
  let current: ProxyMode = 'pass';
  const pairs = new Set<Pair>();
  let server: net.Server | undefined;
  let port = 0;

  const finish = (pair: Pair) => {
    if (pair.done) return;
    pair.done = true;
    pairs.delete(pair);
    pair.client.destroy();
    pair.upstream?.destroy();
  };

  const connectUpstream = (pair: Pair) => {
    const upstream = net.connect(targetPort, targetHost);
    pair.upstream = upstream;
    upstream.on('data', (chunk: Buffer) => {
      if (pair.frozen) pair.toClient.push(chunk);
      else pair.client.write(chunk);
    });
    for (const socket of [pair.client, upstream]) {
      const onGone = () => {
        if (pair.frozen) pair.closedWhileFrozen = true;
        else finish(pair);
      };
      socket.on('end', onGone);
      socket.on('close', onGone);
      socket.on('error', onGone);
    }
    for (const chunk of pair.toUpstream.splice(0)) upstream.write(chunk);
  };

  const accept = (client: net.Socket) => {
    const pair: Pair = { client, upstream: undefined, frozen: current === 'partition', toUpstream: [], toClient: [], closedWhileFrozen: false, done: false };
    pairs.add(pair);
    client.on('error', () => undefined);
    client.on('data', (chunk: Buffer) => {
      if (pair.frozen || !pair.upstream) pair.toUpstream.push(chunk);
      else pair.upstream.write(chunk);
    });
    if (pair.frozen) {
      // Accepted, never answered: the client waits for the server's reply.
      client.pause();
      client.on('close', () => {
        pair.closedWhileFrozen = true;
      });
      return;
    }
    connectUpstream(pair);
  };

  // A new server each time: a closed one keeps its connections, which `refuse` leaves open.
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const next = net.createServer((client) => accept(client));
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => {
        next.off('error', reject);
        port = (next.address() as net.AddressInfo).port;
        server = next;
        resolve();
      });
    });
  const stopListening = () => {
    server?.close();
    server = undefined;
  };
  await listen();

  const freeze = () => {
    for (const pair of pairs) {
      pair.frozen = true;
      pair.client.pause();
      pair.upstream?.pause();
    }
  };

  const heal = () => {
    for (const pair of [...pairs]) {
      if (!pair.frozen) continue;
      pair.frozen = false;
      if (pair.closedWhileFrozen) {
        finish(pair);
        continue;
      }
      if (!pair.upstream) {
        pair.client.resume();
        connectUpstream(pair);
        continue;
      }
      for (const chunk of pair.toUpstream.splice(0)) pair.upstream.write(chunk);
      for (const chunk of pair.toClient.splice(0)) pair.client.write(chunk);
      pair.client.resume();
      pair.upstream.resume();
    }
  };

  return {
    get port() {
      return port;
    },
    urlFor(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    mode: () => current,
    async setMode(mode) {
      if (mode === current) return;
      const previous = current;
      current = mode;
      if (previous === 'refuse') await listen();
      if (previous === 'partition') heal();
      if (mode === 'refuse') stopListening();
      if (mode === 'partition') freeze();
    },
    resetAll() {
      for (const pair of [...pairs]) {
        pair.done = true;
        pairs.delete(pair);
        pair.client.resetAndDestroy();
        pair.upstream?.resetAndDestroy();
      }
    },
    open: () => pairs.size,
    async close() {
      for (const pair of [...pairs]) finish(pair);
      const last = server;
      server = undefined;
      if (last) await new Promise<void>((resolve) => last.close(() => resolve()));
    },
  };
}
