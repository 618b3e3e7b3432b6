import net from 'node:net';

/**
 * TCP on 127.0.0.1 for start-up and shutdown tests against a database that is not there:
 * a port nothing listens on, a server that accepts connections and never answers, and a relay
 * in front of a real server that can be made to hang (bytes dropped both ways, new connections
 * accepted and left unanswered) or to vanish (the same, and new connections refused: the
 * database's host is gone). Neither resets a connection: a pg client in use that sees a reset
 * emits an 'error' event, which is the pool's error handling to deal with, not start-up's or
 * shutdown's.
 */

/** A port on 127.0.0.1 that was free a moment ago and is closed now: connecting is refused. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface HangServer {
  port: number;
  /** Connections accepted so far. */
  accepted(): number;
  close(): Promise<void>;
}

/** Accepts every connection and never sends a byte (a server that is up but stuck). */
export async function startHangServer(): Promise<HangServer> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    accepted: () => accepted,
    close: () => closeServer(server, sockets),
  };
}

export interface TcpRelay {
  port: number;
  /** From now on nothing gets through either way, on open and new connections alike. */
  hang(): void;
  /** Hangs, and stops listening: new connections are refused, open ones stay silent. */
  vanish(): Promise<void>;
  close(): Promise<void>;
}

/** Relays 127.0.0.1:PORT to `target` (e.g. PostgreSQL) until told to hang or go down. */
export async function startTcpRelay(target: { host: string; port: number }): Promise<TcpRelay> {
  const sockets = new Set<net.Socket>();
  let hanging = false;
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  };
  const server = net.createServer((client) => {
    track(client);
    if (hanging) return;
    const upstream = net.connect(target.port, target.host);
    track(upstream);
    client.on('data', (chunk) => {
      if (!hanging) upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!hanging) client.write(chunk);
    });
    // While hanging, a side that closes is not told to the other (a partition says nothing).
    client.on('close', () => {
      if (!hanging) upstream.destroy();
    });
    upstream.on('close', () => {
      if (!hanging) client.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    hang() {
      hanging = true;
    },
    async vanish() {
      hanging = true;
      // Stops accepting at once; the callback would wait for the open (silent) connections.
      server.close();
    },
    close: () => closeServer(server, sockets),
  };
}

async function closeServer(server: net.Server, sockets: Set<net.Socket>): Promise<void> {
  for (const socket of sockets) socket.destroy();
  if (!server.listening) return;
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
