// Two service instances on one Redis stream, each with its own RedisPriceLog and PriceHub, as two
// `serve` processes would run: their subscribers see the same ids in the same order, and a client
// that loses one instance resumes on the other with its last id and misses nothing.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.ts';
import type { PriceLog } from '../../src/prices/price-log.ts';
import { openRedisPriceLog } from '../../src/prices/redis/redis-price-log.ts';
import { PriceHub } from '../../src/stream/hub.ts';
import type { StreamItem } from '../../src/stream/subscription.ts';
import { itemsOf } from './stream-items.ts';
import { buildPriceEventOnTopic, PRICE_TOPICS } from '@catalog/contract/testing';

const REDIS_URL = 'redis://127.0.0.1:6379';
const prefix = `test:hubs:${randomBytes(6).toString('hex')}:`;
const logs: PriceLog[] = [];
const hubs: PriceHub[] = [];

async function instance(): Promise<{ log: PriceLog; hub: PriceHub }> {
  const log = await openRedisPriceLog(REDIS_URL, silentLogger, { keyPrefix: prefix });
  const hub = new PriceHub(log, silentLogger);
  logs.push(log);
  hubs.push(hub);
  return { log, hub };
}

async function take(iterator: AsyncIterator<StreamItem>, count: number): Promise<number[]> {
  const ids: number[] = [];
  while (ids.length < count) {
    const result = await iterator.next();
    if (result.done === true) throw new Error(`the subscription ended after ${ids.length} events`);
    if (result.value.kind === 'event') ids.push(result.value.event.id);
  }
  return ids;
}

afterAll(async () => {
  for (const hub of hubs) await hub.stop();
  for (const log of logs) await log.close();
  const admin = new Redis(REDIS_URL);
  await admin.del(`${prefix}stream`, `${prefix}floor`);
  await admin.quit();
});

describe('PriceHub on RedisPriceLog, two instances', () => {
  it('delivers the same ids in the same order on both, and resumes on the other after one is lost', async () => {
    const a = await instance();
    const b = await instance();
    const topics = new Set<string>([PRICE_TOPICS[0], PRICE_TOPICS[2]]);
    const onA = itemsOf(await a.hub.subscribe({ topics, lastEventId: null }));
    const onB = itemsOf(await b.hub.subscribe({ topics, lastEventId: null }));

    // Both instances publish at once, on every topic.
    const publish = async (log: PriceLog, rounds: number): Promise<number[]> => {
      const ids: number[] = [];
      for (let i = 0; i < rounds; i += 1) {
        const stored = await log.append(PRICE_TOPICS.map((topic) => buildPriceEventOnTopic(topic)));
        ids.push(...stored.filter((event) => topics.has(event.topic)).map((event) => event.id));
      }
      return ids;
    };
    const [fromA, fromB] = await Promise.all([publish(a.log, 25), publish(b.log, 25)]);
    const expected = [...fromA, ...fromB].sort((x, y) => x - y);

    const seenOnA = await take(onA, expected.length);
    expect(seenOnA).toEqual(expected);
    // Instance A disappears after its client processed the first 30 events; B keeps publishing.
    const lastProcessed = seenOnA[29]!;
    await onA.return?.();
    await a.hub.stop();
    const more = await publish(b.log, 5);

    expect(await take(onB, expected.length + more.length)).toEqual([...expected, ...more]);
    const resumed = itemsOf(await b.hub.subscribe({ topics, lastEventId: lastProcessed }));
    expect(await take(resumed, expected.length - 30 + more.length)).toEqual([...expected.slice(30), ...more]);
    await resumed.return?.();
    await onB.return?.();
  });
});

describe('PriceHub on RedisPriceLog, after Redis lost the stream', () => {
  it('ends live subscriptions, and a resume from before the loss gets a reset, then every new event', async () => {
    const lossPrefix = `test:hubs:${randomBytes(6).toString('hex')}:`;
    const log = await openRedisPriceLog(REDIS_URL, silentLogger, { keyPrefix: lossPrefix });
    const hub = new PriceHub(log, silentLogger);
    logs.push(log);
    hubs.push(hub);
    const admin = new Redis(REDIS_URL);
    try {
      const topics = new Set<string>([PRICE_TOPICS[0]]);
      const before = await log.append([buildPriceEventOnTopic(PRICE_TOPICS[0]), buildPriceEventOnTopic(PRICE_TOPICS[0])]);
      const following = itemsOf(await hub.subscribe({ topics, lastEventId: before[0]?.id ?? 0 }));
      expect(await take(following, 1)).toEqual([before[1]?.id]);

      // The data is gone (FLUSHDB on this prefix); the next publisher starts a new log.
      await admin.del(`${lossPrefix}stream`, `${lossPrefix}floor`);
      // A new log counts from its creation time in ms × 1000: 20 ms later its ids are more than the
      // 5,000 retained events above the old ones, which is how the hub tells a loss from a gap.
      await new Promise((resolve) => setTimeout(resolve, 20));
      const after = await log.append([buildPriceEventOnTopic(PRICE_TOPICS[0]), buildPriceEventOnTopic(PRICE_TOPICS[0])]);
      expect(after[0]?.id).toBeGreaterThan(before[1]?.id ?? Infinity);
      await expect(following.next()).rejects.toThrow(/unavailable/);

      const resumed = itemsOf(await hub.subscribe({ topics, lastEventId: before[1]?.id ?? 0 }));
      const first = await resumed.next();
      expect(first.value).toEqual({ kind: 'reset', requestedId: before[1]?.id, oldestId: after[0]?.id });
      expect(await take(resumed, 2)).toEqual(after.map((event) => event.id));
    } finally {
      await admin.del(`${lossPrefix}stream`, `${lossPrefix}floor`);
      await admin.quit();
    }
  });
});
