// RedisPriceLog against the Redis on 127.0.0.1:6379: the shared PriceLog conformance suite, then
// what only Redis has (several instances on one stream, trimming, outages through a proxy). Every
// test uses its own key prefix, deleted afterwards.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ServiceUnavailable } from '../../src/catalog/errors.ts';
import type { PriceEvent } from '../../src/catalog/model.ts';
import { silentLogger } from '../../src/logger.ts';
import { RETAINED_EVENTS, type PriceLog, type StoredPriceEvent } from '../../src/prices/price-log.ts';
import { openRedisPriceLog } from '../../src/prices/redis/redis-price-log.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { describePriceLogConformance } from './price-log.suite.ts';

const REDIS_URL = 'redis://127.0.0.1:6379';
const admin = new Redis(REDIS_URL, { lazyConnect: true });
const opened: PriceLog[] = [];
const prefixes: string[] = [];
const proxies: TcpProxy[] = [];

function newPrefix(): string {
  const prefix = `test:prices:${randomBytes(6).toString('hex')}:`;
  prefixes.push(prefix);
  return prefix;
}

/** A log whose new-log counter is pinned at 0 (ids 1, 2, …) unless given; null: from Redis TIME. */
async function open(prefix: string, url = REDIS_URL, options: { followGiveUpAfterMs?: number; newLogCounter?: number | null } = {}): Promise<PriceLog> {
  const { newLogCounter = 0, ...rest } = options;
  const log = await openRedisPriceLog(url, silentLogger, { keyPrefix: prefix, ...rest, ...(newLogCounter === null ? {} : { newLogCounter }) });
  opened.push(log);
  return log;
}

function priceEvent(n: number, overrides: Partial<PriceEvent> = {}): PriceEvent {
  return {
    source: 'marketplacea',
    product_id: `p-${n}`,
    variant_id: `v-${n}`,
    size: '10',
    price: 100 + n,
    currency: 'USD',
    market: 'US',
    sku: `SKU-${n}`,
    timestamp: `2026-11-23T05:00:00.${String(n).padStart(9, '0')}Z`,
    ...overrides,
  };
}

async function collect(log: PriceLog, afterId: number, count: number, signal: AbortSignal): Promise<StoredPriceEvent[]> {
  const received: StoredPriceEvent[] = [];
  for await (const event of log.follow(afterId, signal)) {
    received.push(event);
    if (received.length === count) break;
  }
  return received;
}

/** Retries `check` until it resolves, for at most 5 s (the client reconnects at least every 500 ms). */
async function eventually(check: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((log) => log.close()));
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
});

afterAll(async () => {
  if (admin.status === 'wait') await admin.connect();
  for (const prefix of prefixes) {
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
  }
  await admin.quit();
});

describePriceLogConformance('RedisPriceLog', async () => {
  const prefix = newPrefix();
  const options = { keyPrefix: prefix };
  return {
    log: await openRedisPriceLog(REDIS_URL, silentLogger, options),
    reopen: () => openRedisPriceLog(REDIS_URL, silentLogger, options),
    cleanup: async () => {
      if (admin.status === 'wait') await admin.connect();
      await admin.del(`${prefix}stream`, `${prefix}floor`);
    },
  };
});

describe('RedisPriceLog', () => {
  it('assigns strictly increasing, never shared ids to two instances appending at once', async () => {
    const prefix = newPrefix();
    const [a, b] = [await open(prefix), await open(prefix)];
    const appendMany = async (log: PriceLog, offset: number): Promise<number[]> => {
      const ids: number[] = [];
      for (let i = 0; i < 50; i += 1) {
        const stored = await log.append([priceEvent(offset + i), priceEvent(offset + i + 1000)]);
        ids.push(...stored.map((event) => event.id));
      }
      return ids;
    };
    const [idsA, idsB] = await Promise.all([appendMany(a, 0), appendMany(b, 5000)]);
    for (const ids of [idsA, idsB]) expect(ids).toEqual([...ids].sort((x, y) => x - y));
    const all = [...idsA, ...idsB].sort((x, y) => x - y);
    expect(new Set(all).size).toBe(200);
    expect(all).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    const replayed = await a.readAfter(0, 1000);
    expect(replayed.map((event) => event.id)).toEqual(all);
  });

  it('backfills the latest prices from events stored before them on open, never over a later event, and only once', async () => {
    const prefix = newPrefix();
    if (admin.status === 'wait') await admin.connect();
    const topic = 'price:marketplacea:us';
    const data = (n: number, overrides: Partial<PriceEvent>): string => JSON.stringify(priceEvent(n, overrides));
    // As a version without the latest-price store wrote them: stream entries only.
    const old = [
      [1, data(1, { product_id: 'p-1', variant_id: 'v-1' })],
      [2, data(2, { product_id: 'p-1', variant_id: 'v-1' })],
      [3, data(3, { product_id: 'p-1', variant_id: 'v-2' })],
      [4, data(4, { product_id: 'p-2', variant_id: 'v-9' })],
      [5, JSON.stringify({ source: 'marketplacea', market: 'US', price: 1 })],
    ] as const;
    for (const [id, text] of old) await admin.xadd(`${prefix}stream`, `${id}-0`, 't', topic, 'd', text);
    // A later event of p-1/v-2 already stored with its latest price (by a newer instance).
    const later = data(6, { product_id: 'p-1', variant_id: 'v-2' });
    await admin.xadd(`${prefix}stream`, '6-0', 't', topic, 'd', later);
    await admin.hset(`${prefix}latest:p-1`, 'v-2|marketplacea|US', `6 ${topic} ${later}`);

    const log = await open(prefix);
    const expected = { data: `[${old[1][1]},${later}]`, position: 6 };
    expect(await log.latestPrices('p-1')).toEqual(expected);
    expect(await log.latestPrices('p-2')).toEqual({ data: `[${old[3][1]}]`, position: 6 });

    // Appends after the backfill win, and a second open changes nothing.
    const [appended] = await log.append([priceEvent(7, { product_id: 'p-2', variant_id: 'v-9' })]);
    await open(prefix);
    expect(await log.latestPrices('p-1')).toEqual({ ...expected, position: 7 });
    expect((await log.latestPrices('p-2')).data).toBe(`[${appended?.data}]`);
    expect(await admin.get(`${prefix}latest-through`)).toBe('7');
  });

  it('stores the payload text exactly and derives the topic with a lowercase market', async () => {
    const log = await open(newPrefix());
    const text = '{"source":"marketplaceb","market":"NL","price":1.50,"timestamp":"2026-11-23T05:00:00.123456789Z","note":"ünï\\ncode"}';
    const [stored] = await log.append([text]);
    expect(stored).toEqual({ id: 1, topic: 'price:marketplaceb:nl', data: text });
    expect(await log.readAfter(0, 10)).toEqual([{ id: 1, topic: 'price:marketplaceb:nl', data: text }]);
  });

  it('keeps at least the newest 5,000 events and replays exactly those', async () => {
    const prefix = newPrefix();
    const log = await open(prefix);
    const total = RETAINED_EVENTS + 1200;
    for (let i = 0; i < total; i += 400) {
      await log.append(Array.from({ length: Math.min(400, total - i) }, (_, k) => priceEvent(i + k)));
    }
    if (admin.status === 'wait') await admin.connect();
    expect(await admin.xlen(`${prefix}stream`)).toBeGreaterThanOrEqual(RETAINED_EVENTS);
    expect(await log.bounds()).toEqual({ oldestId: total - RETAINED_EVENTS + 1, newestId: total });
    const replay = await log.readAfter(0, 10_000);
    expect(replay).toHaveLength(RETAINED_EVENTS);
    expect(replay[0]?.id).toBe(total - RETAINED_EVENTS + 1);
    expect(replay.at(-1)?.id).toBe(total);
    expect((await log.readAfter(total - 3, 10)).map((event) => event.id)).toEqual([total - 2, total - 1, total]);
  });

  it('delivers events appended by another instance to follow(), in id order', async () => {
    const prefix = newPrefix();
    const [reader, writer] = [await open(prefix), await open(prefix)];
    await writer.append([priceEvent(0)]);
    const controller = new AbortController();
    const received = collect(reader, 1, 30, controller.signal);
    for (let i = 1; i <= 30; i += 3) {
      await writer.append([priceEvent(i), priceEvent(i + 1), priceEvent(i + 2)]);
    }
    const events = await received;
    controller.abort();
    expect(events.map((event) => event.id)).toEqual(Array.from({ length: 30 }, (_, i) => i + 2));
    expect(JSON.parse(events[0]?.data ?? '')).toEqual(priceEvent(1));
  });

  it('ends follow() promptly when the signal aborts', async () => {
    const log = await open(newPrefix());
    const controller = new AbortController();
    const started = Date.now();
    const done = collect(log, 0, 1, controller.signal);
    setTimeout(() => controller.abort(), 50);
    expect(await done).toEqual([]);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('keeps ids increasing after a restart, and starts a lost stream above every earlier id, from Redis TIME', async () => {
    const prefix = newPrefix();
    const first = await open(prefix);
    await first.append([priceEvent(1), priceEvent(2), priceEvent(3)]);
    await first.close();
    const second = await open(prefix, REDIS_URL, { newLogCounter: null });
    expect((await second.append([priceEvent(4)]))[0]?.id).toBe(4);
    if (admin.status === 'wait') await admin.connect();
    await admin.del(`${prefix}stream`, `${prefix}floor`);
    const [seconds] = await admin.time();
    const [next] = await second.append([priceEvent(5)]);
    expect(next?.id).toBeGreaterThan(Number(seconds) * 1_000_000);
    expect(next?.id).toBeLessThan((Number(seconds) + 60) * 1_000_000);
    expect(String(next?.id)).toHaveLength(16);
    expect(Number.isSafeInteger(next?.id)).toBe(true);
  });

  it('rejects with ServiceUnavailable while Redis is unreachable and follow() resumes without loss', async () => {
    const prefix = newPrefix();
    const proxy = await startTcpProxy('127.0.0.1', 6379);
    proxies.push(proxy);
    const viaProxy = await open(prefix, `redis://127.0.0.1:${proxy.port}`);
    const direct = await open(prefix);
    await direct.append([priceEvent(0)]);
    const controller = new AbortController();
    const received = collect(viaProxy, 0, 21, controller.signal);
    await direct.append([priceEvent(1)]);
    await new Promise((resolve) => setTimeout(resolve, 100));

    proxy.cut();
    const started = Date.now();
    await expect(viaProxy.ping()).rejects.toBeInstanceOf(ServiceUnavailable);
    await expect(viaProxy.append([priceEvent(99)])).rejects.toBeInstanceOf(ServiceUnavailable);
    await expect(viaProxy.readAfter(0, 10)).rejects.toBeInstanceOf(ServiceUnavailable);
    expect(Date.now() - started).toBeLessThan(3000);
    for (let i = 2; i <= 20; i += 1) await direct.append([priceEvent(i)]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    proxy.restore();

    const events = await received;
    controller.abort();
    expect(events.map((event) => event.id)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    await eventually(() => viaProxy.ping());
  });

  it('opens while Redis is down and serves once it comes back, without operator action', async () => {
    const proxy = await startTcpProxy('127.0.0.1', 6379);
    proxies.push(proxy);
    proxy.cut();
    const log = await open(newPrefix(), `redis://127.0.0.1:${proxy.port}`);
    await expect(log.ping()).rejects.toBeInstanceOf(ServiceUnavailable);
    proxy.restore();
    await eventually(() => log.ping());
    expect((await log.append([priceEvent(1)]))[0]?.id).toBe(1);
  });

  it('ends follow() with ServiceUnavailable after followGiveUpAfterMs without Redis, when asked to', async () => {
    const proxy = await startTcpProxy('127.0.0.1', 6379);
    proxies.push(proxy);
    const log = await open(newPrefix(), `redis://127.0.0.1:${proxy.port}`, { followGiveUpAfterMs: 300 });
    const controller = new AbortController();
    const following = collect(log, 0, 1, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 100));
    proxy.cut();
    await expect(following).rejects.toBeInstanceOf(ServiceUnavailable);
    controller.abort();
  });

  it('starts above everything a live follower saw when Redis comes back empty, so the follower sees the jump', async () => {
    const prefix = newPrefix();
    const proxy = await startTcpProxy('127.0.0.1', 6379);
    proxies.push(proxy);
    const server = await open(prefix, `redis://127.0.0.1:${proxy.port}`);
    await server.append([priceEvent(1), priceEvent(2), priceEvent(3)]);
    const controller = new AbortController();
    const received = collect(server, 0, 4, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 100));

    // Redis restarts without persistence: the connection drops and the data is gone.
    proxy.cut();
    if (admin.status === 'wait') await admin.connect();
    await admin.del(`${prefix}stream`, `${prefix}floor`);
    proxy.restore();
    await eventually(() => server.ping());
    await new Promise((resolve) => setTimeout(resolve, 300));

    // A publisher process that has never seen an id appends next: the new log counts from the clock.
    const publisher = await open(prefix, REDIS_URL, { newLogCounter: 1_000_000 });
    const [next] = await publisher.append([priceEvent(4)]);
    expect(next?.id).toBe(1_000_001);
    const events = await received;
    controller.abort();
    expect(events.map((event) => event.id)).toEqual([1, 2, 3, 1_000_001]);
  });
});
