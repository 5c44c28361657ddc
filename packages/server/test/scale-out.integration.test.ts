// Two `catalog serve` processes on one PostgreSQL database and one Redis stream, as operators run
// them: subscribers on both see the same ids in the same order, and when one instance is killed
// with SIGKILL a client resuming on the other with its Last-Event-ID loses nothing; rate limits
// are one count across instances.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStream, type SseFrame } from './http/sse-client.ts';
import { runCli } from './cli/run-cli.ts';
import { buildPriceEventOnTopic, PRICE_TOPICS } from '@catalog/contract/testing';
import { createTestDatabase, type TestDatabase } from './support/postgres-test-database.ts';
import { startRoundRobinProxy, startTcpProxy } from './support/tcp-proxy.ts';

const MAIN = fileURLToPath(new URL('../src/cli/main.ts', import.meta.url));
const REDIS = 'redis://127.0.0.1:6379';

interface Instance {
  process: ChildProcess;
  apiUrl: string;
  streamUrl: string;
  metricsUrl?: string;
}

function serve(db: string, priceLog: string, extra: readonly string[] = []): Promise<Instance> {
  const child = spawn(process.execPath, [MAIN, 'serve', '--db', db, '--price-log', priceLog, '--port', '0', '--sse-port', '0', ...extra], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${output}`)), 30_000);
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      output += chunk;
      for (const line of output.split('\n')) {
        if (!line.includes('"listening"')) continue;
        clearTimeout(timer);
        const { apiUrl, streamUrl, metricsUrl } = JSON.parse(line) as { apiUrl: string; streamUrl: string; metricsUrl?: string };
        resolve({ process: child, apiUrl, streamUrl, ...(metricsUrl === undefined ? {} : { metricsUrl }) });
      }
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}:\n${output}`)));
  });
}

function killed(instance: Instance): Promise<void> {
  return new Promise((resolve) => {
    if (instance.process.exitCode !== null || instance.process.signalCode !== null) return resolve();
    instance.process.once('exit', () => resolve());
    instance.process.kill('SIGKILL');
  });
}

describe('several instances on PostgreSQL and Redis', () => {
  let database: TestDatabase;
  let priceLog: string;
  let prefix: string;
  let workDir: string;
  let proKey: string;
  const instances: Instance[] = [];

  const publish = async (count: number): Promise<void> => {
    const file = join(workDir, `events-${randomBytes(4).toString('hex')}.ndjson`);
    const lines = Array.from({ length: count }, (_, i) => JSON.stringify(buildPriceEventOnTopic(PRICE_TOPICS[i % PRICE_TOPICS.length])));
    writeFileSync(file, `${lines.join('\n')}\n`);
    const result = await runCli(['prices', 'publish', '--price-log', priceLog, file]);
    expect(result.code, result.stderr).toBe(0);
  };
  const ids = (frames: SseFrame[]): number[] => frames.filter((f) => f.id !== undefined).map((f) => Number(f.id));
  const subscribe = (instance: Instance, lastEventId?: number) =>
    openStream(`${instance.streamUrl}/v1/stream`, {
      Authorization: `Bearer ${proKey}`,
      Topics: PRICE_TOPICS.join(', '),
      ...(lastEventId === undefined ? {} : { 'Last-Event-ID': String(lastEventId) }),
    });

  beforeAll(async () => {
    database = await createTestDatabase();
    prefix = `catalog-test-${randomBytes(6).toString('hex')}:`;
    priceLog = `${REDIS}?prefix=${prefix}`;
    workDir = mkdtempSync(join(tmpdir(), 'scale-out-'));
    const created = await runCli(['keys', 'create', '--db', database.url(), '--plan', 'pro']);
    expect(created.code, created.stderr).toBe(0);
    proKey = created.stdout.trim().split('\n').at(-1)!;
    instances.push(await serve(database.url(), priceLog), await serve(database.url(), priceLog));
  }, 90_000);

  afterAll(async () => {
    await Promise.all(instances.map(killed));
    await database?.drop();
    const redis = new Redis(REDIS, { lazyConnect: true });
    await redis.connect();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    rmSync(workDir, { recursive: true, force: true });
  });

  it('delivers the same ids in the same order on both instances', async () => {
    const [first, second] = await Promise.all(instances.map((instance) => subscribe(instance)));
    expect([first!.status, second!.status]).toEqual([200, 200]);
    await publish(40);
    const [a, b] = await Promise.all([first!.frames(41, 20_000), second!.frames(41, 20_000)]);
    expect(ids(a!)).toHaveLength(40);
    expect(ids(a!)).toEqual(ids(b!));
    expect(ids(a!)).toEqual([...ids(a!)].sort((x, y) => x - y));
    first!.close();
    second!.close();
  }, 60_000);

  it('lets a client resume on the other instance after SIGKILL without losing an event', async () => {
    const [doomed, survivor] = instances as [Instance, Instance];
    const stream = await subscribe(doomed);
    await publish(10);
    const before = ids(await stream.frames(11, 20_000));
    const lastSeen = before.at(-1)!;
    await killed(doomed);
    await publish(15);
    const resumed = await subscribe(survivor, lastSeen);
    expect(resumed.status).toBe(200);
    const after = ids(await resumed.frames(16, 20_000));
    expect(after).toHaveLength(15);
    expect(after[0]).toBe(lastSeen + 1);
    expect(after).toEqual(Array.from({ length: 15 }, (_, i) => lastSeen + 1 + i));
    resumed.close();
  }, 60_000);

  it('counts one rate limit per key across instances (stream attempts included), reports metrics from each, and both refuse a revoked key within 5 s', async () => {
    const flags = ['--rate-limit', '5', '--metrics-port', '0'];
    const limited = await Promise.all([serve(database.url(), priceLog, flags), serve(database.url(), priceLog, flags)]);
    instances.push(...limited);
    const created = await runCli(['keys', 'create', '--db', database.url(), '--plan', 'pro']);
    const key = created.stdout.trim().split('\n').at(-1)!;
    // Through a round-robin proxy, one new connection per request: the instances take turns.
    const port = (url: string) => ({ host: '127.0.0.1', port: Number(new URL(url).port) });
    const proxy = await startRoundRobinProxy(limited.map((instance) => port(instance.apiUrl)));
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await fetch(`${proxy.url}/v2/brands`, { headers: { Authorization: key, Connection: 'close' } })).status);
    }
    const stream = await openStream(`${limited[1]!.streamUrl}/v1/stream`, { Authorization: `Bearer ${key}`, Topics: PRICE_TOPICS[0]! });
    statuses.push(stream.status);
    stream.close();
    const over = await fetch(`${proxy.url}/v2/brands`, { headers: { Authorization: key, Connection: 'close' } });
    statuses.push(over.status);
    await proxy.close();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect(over.headers.get('ratelimit-policy')).toBe('"pro";q=5;w=60');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    const scraped = await Promise.all(limited.map(async (instance) => (await fetch(`${instance.metricsUrl!}/metrics`)).text()));
    expect(scraped[0]).toMatch(/^catalog_http_requests_total\{operation="listTopBrands",status="200"\} 2$/m);
    expect(scraped[0]).toMatch(/^catalog_http_requests_total\{operation="listTopBrands",status="429"\} 1$/m);
    expect(scraped[1]).toMatch(/^catalog_http_requests_total\{operation="listTopBrands",status="200"\} 2$/m);
    expect(scraped[1]).toMatch(/^catalog_http_requests_total\{operation="streamPrices",status="200"\} 1$/m);

    const other = (await runCli(['keys', 'create', '--db', database.url(), '--plan', 'pro'])).stdout.trim().split('\n').at(-1)!;
    const statusOn = (instance: Instance) => fetch(`${instance.apiUrl}/gtin/count`, { headers: { Authorization: `Bearer ${other}` } }).then((r) => r.status);
    expect(await Promise.all(limited.map(statusOn))).toEqual([200, 200]);
    expect((await runCli(['keys', 'revoke', '--db', database.url(), other])).code).toBe(0);
    const revokedAt = Date.now();
    await expect.poll(() => Promise.all(limited.map(statusOn)), { timeout: 7_000, interval: 250 }).toEqual([401, 401]);
    expect(Date.now() - revokedAt).toBeLessThan(6_000);
    await Promise.all(limited.map(killed));
  }, 60_000);

  it('survives a Redis outage under a live subscriber: readyz 503, catalog serving, stream resumes without loss', async () => {
    const proxy = await startTcpProxy('127.0.0.1', 6379);
    const behindProxy = await serve(database.url(), `redis://127.0.0.1:${proxy.port}?prefix=${prefix}`);
    instances.push(behindProxy);
    try {
      const stream = await subscribe(behindProxy);
      await publish(5);
      const seen = ids(await stream.frames(6, 20_000));
      proxy.cut();
      // The stream ends cleanly with a retry hint once the price log stays unreachable.
      expect(await stream.ended()).toBe('end');
      expect(stream.raw()).toMatch(/retry: 5000\n\n$/);
      const ready = await fetch(`${behindProxy.apiUrl}/readyz`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { message: string }).message).toContain('price log');
      const brands = await fetch(`${behindProxy.apiUrl}/v2/brands`, { headers: { Authorization: proKey } });
      expect(brands.status).toBe(200);
      // Published while this instance cannot reach Redis (another feed process still can).
      await publish(7);
      const refused = await subscribe(behindProxy, seen.at(-1));
      expect(refused.status).toBe(200);
      expect(await refused.ended()).toBe('end');
      proxy.restore();
      let resumed: SseFrame[] = [];
      for (let attempt = 0; attempt < 40 && resumed.length === 0; attempt++) {
        const retry = await subscribe(behindProxy, seen.at(-1));
        const first = await retry.frames(1, 10_000);
        if (first[0]?.retry === '2000') resumed = await retry.frames(7, 20_000);
        retry.close();
        if (resumed.length === 0) await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(ids(resumed)).toEqual(Array.from({ length: 7 }, (_, i) => seen.at(-1)! + 1 + i));
      // The API thread's own Redis connection comes back on its own reconnect schedule, which may
      // be a moment after the stream thread's.
      await expect.poll(() => fetch(`${behindProxy.apiUrl}/readyz`).then((r) => r.status), { timeout: 10_000, interval: 250 }).toBe(200);
    } finally {
      proxy.restore();
      await proxy.close();
    }
  }, 90_000);
});
