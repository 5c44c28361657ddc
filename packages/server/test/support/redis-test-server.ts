// A redis-server of the test's own on a free port (no persistence), so a test can stop, restart
// (empty), pause or put it to sleep without touching the shared Redis. Stopped by stop().
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { Redis } from 'ioredis';

export interface TestRedisServer {
  url: string;
  port: number;
  /** Stops the server (SIGKILL: nothing is saved); the port stays this server's for restart(). */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty, and resolves once it answers. */
  restart(): Promise<void>;
  /** `CLIENT PAUSE ms ALL`: every client's commands wait, connections stay open. */
  pause(ms: number): Promise<void>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function answering(url: string): Promise<void> {
  const deadline = performance.now() + 5_000;
  for (;;) {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.ping();
      return;
    } catch (error) {
      if (performance.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    } finally {
      client.disconnect();
    }
  }
}

export async function startRedisServer(): Promise<TestRedisServer> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await answering(url);
  };
  const kill = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null) return;
    running.kill('SIGKILL');
    await once(running, 'exit');
  };
  await start();
  return {
    url,
    port,
    kill,
    restart: start,
    async pause(ms) {
      const client = new Redis(url);
      try {
        await client.call('CLIENT', 'PAUSE', String(ms), 'ALL');
      } finally {
        client.disconnect();
      }
    },
    stop: kill,
  };
}
