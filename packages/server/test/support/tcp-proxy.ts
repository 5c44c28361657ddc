// A TCP proxy on port 0 that a test can cut (every open connection is destroyed and new ones are
// refused) and restore, to show how adapters behave while PostgreSQL or Redis is unreachable.
import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Destroys every open connection; new ones are closed at once until restore(). */
  cut(): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let isCut = false;
  const server = net.createServer((client) => {
    if (isCut) {
      client.destroy();
      return;
    }
    const upstream = net.connect(targetPort, targetHost);
    sockets.add(client);
    sockets.add(upstream);
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');
  return {
    port: address.port,
    cut() {
      isCut = true;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    restore() {
      isCut = false;
    },
    async close() {
      isCut = true;
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A load balancer in miniature: each new connection goes to the next of `targets` in turn (a
 * target that refuses is skipped), as a TCP proxy in front of several instances would.
 */
export async function startRoundRobinProxy(targets: readonly { host: string; port: number }[]): Promise<{ url: string; close(): Promise<void> }> {
  let next = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    const attempt = (tries: number): void => {
      const target = targets[next++ % targets.length]!;
      const upstream = net.connect(target.port, target.host);
      upstream.once('error', () => {
        if (tries > 1 && client.bytesWritten === 0) attempt(tries - 1);
        else client.destroy();
      });
      upstream.once('connect', () => {
        sockets.add(upstream);
        client.pipe(upstream).pipe(client);
        const drop = (): void => {
          client.destroy();
          upstream.destroy();
        };
        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
      });
    };
    attempt(targets.length);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
