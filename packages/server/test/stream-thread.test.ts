import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/cli/command-line.ts';
import { silentLogger } from '../src/logger.ts';
import { startService } from '../src/main.ts';
import { SqlitePriceLog } from '../src/prices/sqlite/sqlite-price-log.ts';
import { openKeyStore } from '../src/store/open-store.ts';
import { startStreamThread } from '../src/stream-thread.ts';
import { openStream } from './http/sse-client.ts';
import { buildPriceEventOnTopic, PRICE_TOPICS } from '@catalog/contract/testing';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(): Promise<{ dir: string; proKey: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stream-thread-'));
  cleanups.push(async () => fs.rmSync(dir, { recursive: true, force: true }));
  const store = await openKeyStore(`sqlite:${path.join(dir, 'catalog.db')}`, silentLogger);
  const proKey = await store.keys.createKey('pro');
  await store.close();
  return { dir, proKey };
}

const configFor = (dir: string, priceLog: string) =>
  loadConfig(['--db', `sqlite:${path.join(dir, 'catalog.db')}`, '--price-log', priceLog, '--host', '127.0.0.1', '--port', '0', '--sse-port', '0', '--log-level', 'error'], {});

describe('the stream thread', () => {
  it('serves the stream from its own thread, and close() ends every stream cleanly', async () => {
    const { dir, proKey } = await setUp();
    const logFile = path.join(dir, 'prices.db');
    const thread = await startStreamThread(configFor(dir, `sqlite:${logFile}`), silentLogger);
    let failed = false;
    void thread.failed.then(() => (failed = true));
    const stream = await openStream(`${thread.url}/v1/stream`, { Authorization: `Bearer ${proKey}`, Topics: PRICE_TOPICS[0] });
    cleanups.push(async () => stream.close());
    expect(stream.status).toBe(200);

    const log = new SqlitePriceLog(logFile);
    cleanups.push(() => log.close());
    const [stored] = await log.append([buildPriceEventOnTopic(PRICE_TOPICS[0])]);
    const frames = await stream.frames(2);
    expect(frames[1]).toMatchObject({ id: String(stored?.id), event: PRICE_TOPICS[0], data: stored?.data });

    await thread.close();
    expect(await stream.ended()).toBe('end');
    expect(failed).toBe(false);
  });

  it('rejects the start with the reason when the thread cannot open its price log', async () => {
    const { dir } = await setUp();
    const blocker = path.join(dir, 'not-a-directory');
    fs.writeFileSync(blocker, '');
    await expect(startStreamThread(configFor(dir, `sqlite:${path.join(blocker, 'prices.db')}`), silentLogger)).rejects.toThrow(/not-a-directory/);
  });
});

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

describe('readiness', () => {
  it('answers /readyz 200 only while the stream listener accepts too, and 503 once shutdown has begun', async () => {
    const { dir } = await setUp();
    const [port, ssePort] = [await freePort(), await freePort()];
    const config = loadConfig(['--db', `sqlite:${path.join(dir, 'catalog.db')}`, '--host', '127.0.0.1', '--port', String(port), '--sse-port', String(ssePort), '--log-level', 'error'], {});
    let starting = true;
    const observed: { ready: number; streamAccepts: boolean }[] = [];
    // Probe /readyz from before the API listens until the service has started.
    const probing = (async () => {
      while (starting) {
        const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => 0);
        if (ready === 200) observed.push({ ready, streamAccepts: await accepts(ssePort) });
        else observed.push({ ready, streamAccepts: false });
      }
    })();
    const service = await startService(config, silentLogger);
    starting = false;
    await probing;
    expect(observed.filter((o) => o.ready === 200 && !o.streamAccepts)).toEqual([]);
    expect((await fetch(`${service.apiUrl}/readyz`)).status).toBe(200);
    expect(await accepts(ssePort)).toBe(true);

    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const readyz = () => new Promise<number>((resolve) => http.get(`${service.apiUrl}/readyz`, { agent }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)); }).on('error', () => resolve(0)));
    expect(await readyz()).toBe(200);
    // A request already on its way when shutdown begins is answered, and not with "ready".
    const during = readyz();
    const closing = service.close();
    expect(await during).not.toBe(200);
    await closing;
    agent.destroy();
  });
});

describe('the shutdown delay', () => {
  it('answers /readyz 503 "shutting down" and asks to close connections while both listeners still serve for --shutdown-delay-ms, then closes them', async () => {
    const { dir, proKey } = await setUp();
    const config = loadConfig(['--db', `sqlite:${path.join(dir, 'catalog.db')}`, '--host', '127.0.0.1', '--port', '0', '--sse-port', '0', '--log-level', 'error', '--shutdown-delay-ms', '600'], {});
    const service = await startService(config, silentLogger);
    const ssePort = Number(new URL(service.streamUrl).port);
    expect((await fetch(`${service.apiUrl}/readyz`)).status).toBe(200);
    const before = await openStream(`${service.streamUrl}/v1/stream`, { Authorization: `Bearer ${proKey}`, Topics: PRICE_TOPICS[0] });
    cleanups.push(async () => before.close());
    expect(before.headers.connection).toBe('keep-alive');
    const closing = service.close();
    // The stream port asks to close too: a stream opened during the delay, and any other answer.
    const during = await openStream(`${service.streamUrl}/v1/stream`, { Authorization: `Bearer ${proKey}`, Topics: PRICE_TOPICS[0] });
    cleanups.push(async () => during.close());
    expect(during.status).toBe(200);
    expect(during.headers.connection).toBe('close');
    const elsewhere = await fetch(`${service.streamUrl}/nothing-here`);
    expect(elsewhere.headers.get('connection')).toBe('close');
    const draining = await fetch(`${service.apiUrl}/readyz`);
    expect(draining.status).toBe(503);
    expect(draining.headers.get('retry-after')).not.toBeNull();
    expect(((await draining.json()) as { message: string }).message).toMatch(/shutting down/u);
    const served = await fetch(`${service.apiUrl}/healthz`);
    expect(served.status).toBe(200);
    // Kept-alive connections are closed after their answer, so none outlives the listener.
    expect(served.headers.get('connection')).toBe('close');
    expect(await accepts(ssePort)).toBe(true);
    await closing;
    // Streams open at the close, from before the delay or during it, end cleanly.
    expect(await before.ended()).toBe('end');
    expect(await during.ended()).toBe('end');
    await expect(fetch(`${service.apiUrl}/healthz`)).rejects.toThrow();
    expect(await accepts(ssePort)).toBe(false);
  });
});
