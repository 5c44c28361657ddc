// Both listeners against sockets that misbehave: idle or trickling sockets are cut, a listener at
// its connection cap refuses more without hurting the open ones, and whatever Node's parser refuses
// is answered in the contract's error body with an X-Request-Id, on the stream port too.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.ts';
import { testAppDeps } from '../support/app-deps.ts';
import { applyListenerLimits, capsNotice, connectionCaps, DESCRIPTOR_RESERVE, MIN_OPEN_FILES, SERVER_OPTIONS } from '../../src/http/listener-limits.ts';
import { createStreamServer } from '../../src/http/stream-server.ts';
import { createLogger, silentLogger, type Logger } from '../../src/logger.ts';
import { SqlitePriceLog } from '../../src/prices/sqlite/sqlite-price-log.ts';
import { FakeKeyStore } from '../support/fake-catalog-store.ts';

const KEY = 'ck_test_pro_key';
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** The listeners of this test, by port, to count their open sockets. */
const servers = new Map<number, http.Server>();

async function openSockets(port: number): Promise<number> {
  return new Promise((resolve, reject) => servers.get(port)!.getConnections((error, count) => (error ? reject(error) : resolve(count))));
}

async function listening(server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  servers.set(port, server);
  return port;
}

async function apiServer(limits: { maxConnections: number; headersTimeoutMs: number }, logger: Logger = silentLogger): Promise<number> {
  const keys = new FakeKeyStore({ [KEY]: 'pro' });
  const server = http.createServer(SERVER_OPTIONS, createApp(testAppDeps({ keys })));
  applyListenerLimits(server, limits, logger);
  return listening(server);
}

async function streamServer(limits?: { maxConnections: number; headersTimeoutMs: number }): Promise<number> {
  const priceLog = new SqlitePriceLog(':memory:');
  const stream = createStreamServer({
    priceLog,
    keys: new FakeKeyStore({ [KEY]: 'pro' }),
    logger: silentLogger,
    heartbeatMs: 1000,
    maxBufferBytes: 1 << 20,
    ...(limits === undefined ? {} : { limits }),
  });
  const port = await listening(stream.server);
  closers.push(async () => {
    await stream.close();
    await priceLog.close();
  });
  return port;
}

/** Writes `request` (possibly nothing) and collects what comes back until the server closes. */
function exchange(port: number, request: string): Promise<{ text: string; closedAfterMs: number; socket: Socket }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      if (request !== '') socket.write(request);
    });
    let text = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve({ text, closedAfterMs: performance.now() - started, socket }));
  });
}

function parse(text: string): { status: number; requestId: string | undefined; body: { status: string; error: string; message: string } } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const requestId = /^x-request-id: (.+)$/imu.exec(head)?.[1];
  return { status: Number(head.split(' ')[1]), requestId, body: JSON.parse(body) as { status: string; error: string; message: string } };
}

describe('listener limits', () => {
  it('cuts a socket that never sends a byte, and answers one that trickles its headers with a 408 error body', async () => {
    const port = await apiServer({ maxConnections: 100, headersTimeoutMs: 1_000 });
    const silent = exchange(port, '');
    const trickle = exchange(port, 'GET /v2/brands HTTP/1.1\r\nHost: x\r\n');
    const [idle, partial] = await Promise.all([silent, trickle]);
    expect(idle.closedAfterMs).toBeLessThan(4_000);
    const refused = parse(partial.text);
    expect(refused.status).toBe(408);
    expect(refused.requestId).toBeTruthy();
    expect(refused.body).toMatchObject({ status: 'error', error: 'invalid_request' });
  });

  it.each([
    ['API', apiServer],
    ['stream', streamServer],
  ])('closes sockets that send nothing within the header timeout on the %s port, without an answer, and answers one that sent a byte with 408', async (_port, start) => {
    const port = await start({ maxConnections: 100, headersTimeoutMs: 300 });
    // Half of them never read either: the server must not wait for them to close their side.
    const unread = Array.from({ length: 20 }, () => connect(port, '127.0.0.1').pause());
    closers.push(async () => unread.forEach((socket) => socket.destroy()));
    const silent = Array.from({ length: 20 }, () => exchange(port, ''));
    const closed = await Promise.all(silent);
    for (const socket of closed) {
      expect(socket.text).toBe('');
      expect(socket.closedAfterMs).toBeLessThan(2_500);
    }
    await expect.poll(() => openSockets(port), { timeout: 1_000 }).toBe(0);
    // A socket that has sent a byte is Node's headers timeout's to judge (a 408), not cut silently.
    const asked = await exchange(port, 'G');
    expect(parse(asked.text).status).toBe(408);
  });

  it('refuses sockets beyond the cap on accept, logs each, and keeps serving the open ones', async () => {
    const warnings: Record<string, unknown>[] = [];
    const logger = createLogger({ level: 'warn', write: (line) => warnings.push(JSON.parse(line) as Record<string, unknown>) });
    const port = await apiServer({ maxConnections: 2, headersTimeoutMs: 5_000 }, logger);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
    closers.push(async () => agent.destroy());
    const get = () =>
      new Promise<number>((resolve, reject) => {
        http.get(`http://127.0.0.1:${port}/healthz`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        }).on('error', reject);
      });
    // Two kept-alive sockets fill the cap; a third is closed before it is read.
    expect(await Promise.all([get(), get()])).toEqual([200, 200]);
    const third = await exchange(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(third.text).toBe('');
    expect(await get()).toBe(200);
    expect(warnings).toMatchObject([{ level: 'warn', msg: 'connection refused: listener at its connection cap', max_connections: 2, remote_address: '127.0.0.1' }]);
  });

  it('logs a socket refused at the cap of a Unix-socket listener, which has no remote address', async () => {
    const warnings: Record<string, unknown>[] = [];
    const logger = createLogger({ level: 'warn', write: (line) => warnings.push(JSON.parse(line) as Record<string, unknown>) });
    const directory = mkdtempSync(path.join(os.tmpdir(), 'listener-'));
    const socketPath = path.join(directory, 'api.sock');
    const server = http.createServer(SERVER_OPTIONS, (_req, res) => res.end());
    applyListenerLimits(server, { maxConnections: 1, headersTimeoutMs: 5_000 }, logger);
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    const first = connect(socketPath);
    closers.push(async () => {
      first.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(directory, { recursive: true, force: true });
    });
    await new Promise((resolve) => first.once('connect', resolve));
    // Closed on accept: the peer may see a reset rather than an end, either way the socket closes.
    const refused = connect(socketPath).resume().on('error', () => {});
    await new Promise((resolve) => refused.once('close', resolve));
    expect(warnings).toMatchObject([{ msg: 'connection refused: listener at its connection cap', max_connections: 1 }]);
    expect(warnings[0]).not.toHaveProperty('remote_address');
  });

  it('answers oversized headers on the stream port with 431 in the error body with an X-Request-Id', async () => {
    const port = await streamServer();
    const result = await exchange(port, `GET /v1/stream HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    const refused = parse(result.text);
    expect(refused.status).toBe(431);
    expect(refused.requestId).toBeTruthy();
    expect(refused.body).toMatchObject({ status: 'error', error: 'invalid_request' });
  });

  it('answers a broken request line on the stream port with 400 in the error body', async () => {
    const port = await streamServer();
    const refused = parse((await exchange(port, 'GET /v1/str eam HTTP/1.1\r\nHost: x\r\n\r\n')).text);
    expect(refused.status).toBe(400);
    expect(refused.requestId).toBeTruthy();
    expect(refused.body.status).toBe('error');
  });
});

describe('connectionCaps', () => {
  it('keeps the configured caps when they fit the open-file limit, and scales both down when they do not', () => {
    expect(connectionCaps({ api: 4096, stream: 16384 }, 1_048_576)).toMatchObject({ api: 4096, stream: 16384 });
    const scaled = connectionCaps({ api: 4096, stream: 16384 }, 20_000);
    expect(scaled.api + scaled.stream + DESCRIPTOR_RESERVE).toBeLessThanOrEqual(20_000);
    expect(scaled.stream / scaled.api).toBeCloseTo(4, 1);
  });
});

describe('fitConnectionCaps', () => {
  /** What a service start with the default caps logs at `warn`, under `ulimit -n soft` (hard lowered too). */
  function warningsUnder(openFiles: number): string {
    const script = `import { fitConnectionCaps } from ${JSON.stringify(new URL('../../src/http/listener-limits.ts', import.meta.url).pathname)};
      import { loadConfig } from ${JSON.stringify(new URL('../../src/cli/command-line.ts', import.meta.url).pathname)};
      const config = loadConfig([], {});
      fitConnectionCaps({ api: config.maxConnections, stream: config.maxStreamConnections }, { info() {}, warn(msg) { process.stdout.write(msg + '\\n'); } });`;
    return execFileSync('/bin/sh', ['-c', `ulimit -n ${openFiles}; exec "$0" --input-type=module -e "$1"`, process.execPath, script], { encoding: 'utf8' });
  }

  it('starts quietly with the defaults under a usual open-file limit, though the caps are fitted to it', () => {
    expect(warningsUnder(20_000)).toBe('');
    expect(capsNotice({ api: 4096, stream: 16384 }, connectionCaps({ api: 4096, stream: 16384 }, 20_000))?.level).toBe('info');
  });

  it('warns, saying how to raise it, when the open-file limit is below what the service needs', () => {
    expect(warningsUnder(MIN_OPEN_FILES - 1)).toMatch(/below the \d+ the service needs; raise it \(ulimit -n \d+/u);
  });
});

describe('raiseOpenFileLimit', () => {
  it('raises the soft open-file limit to the hard limit of a process started below it', () => {
    const hard = Number(execFileSync('/bin/sh', ['-c', 'ulimit -Hn'], { encoding: 'utf8' }).trim());
    const script = `import { raiseOpenFileLimit } from ${JSON.stringify(new URL('../../src/http/listener-limits.ts', import.meta.url).pathname)};
      import { readFileSync } from 'node:fs';
      raiseOpenFileLimit({ info() {}, warn(msg, fields) { console.error(msg, JSON.stringify(fields)); } });
      process.stdout.write(readFileSync('/proc/self/limits', 'utf8').split('\\n').find((l) => l.startsWith('Max open files')));`;
    const line = execFileSync('/bin/sh', ['-c', 'ulimit -Sn 1024; exec "$0" --input-type=module -e "$1"', process.execPath, script], { encoding: 'utf8' });
    expect(line.split(/\s{2,}/u).slice(1, 3)).toEqual([String(hard), String(hard)]);
  });
});
