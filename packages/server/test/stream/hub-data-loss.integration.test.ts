// PriceHub on a Redis of the test's own that is restarted empty while subscribers are connected:
// each subscriber, reconnecting as a client does (with its last id), is told of the loss by
// exactly one `reset`, then gets every event published after the restart.
import { describe, expect, it, afterEach } from 'vitest';
import { silentLogger } from '../../src/logger.ts';
import type { PriceLog } from '../../src/prices/price-log.ts';
import { openRedisPriceLog } from '../../src/prices/redis/redis-price-log.ts';
import { PriceHub } from '../../src/stream/hub.ts';
import type { StreamItem } from '../../src/stream/subscription.ts';
import { itemsOf } from './stream-items.ts';
import { buildPriceEventOnTopic, PRICE_TOPICS } from '@catalog/contract/testing';
import { startRedisServer } from '../support/redis-test-server.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A client that reconnects with its last id whenever its stream ends, as the SDK does. */
function reconnectingClient(hub: PriceHub, topics: ReadonlySet<string>) {
  const seen = { events: [] as number[], resets: 0, connections: 0 };
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      let items: AsyncIterator<StreamItem>;
      try {
        items = itemsOf(await hub.subscribe({ topics, lastEventId: seen.events.at(-1) ?? null }));
      } catch {
        await sleep(50);
        continue;
      }
      seen.connections += 1;
      try {
        while (!stopped) {
          const result = await items.next();
          if (result.done === true) break;
          if (result.value.kind === 'reset') seen.resets += 1;
          else seen.events.push(result.value.event.id);
        }
      } catch {
        // Ended by the hub (log unavailable, data lost): reconnect.
      }
      await items.return?.();
    }
  })();
  return {
    seen,
    stop: async () => {
      stopped = true;
      await hub.stop();
      await done;
    },
  };
}

describe('PriceHub', () => {
  it.each([
    ['longer than the follow gives up for', 800],
    ['shorter than the follow gives up for', 0],
  ])('sends one reset per subscriber when Redis restarts empty after an outage %s', async (_case, outageMs) => {
    const server = await startRedisServer();
    cleanups.push(() => server.stop());
    const open = async (): Promise<PriceLog> => {
      const log = await openRedisPriceLog(server.url, silentLogger, { followGiveUpAfterMs: 300, commandTimeoutMs: 200 });
      cleanups.push(() => log.close());
      return log;
    };
    const [serving, publishing] = [await open(), await open()];
    const hub = new PriceHub(serving, silentLogger);
    const topics = new Set<string>([PRICE_TOPICS[0]]);
    const clients = [reconnectingClient(hub, topics), reconnectingClient(hub, topics)];
    cleanups.push(async () => {
      for (const client of clients) await client.stop();
    });
    const publish = async (count: number): Promise<number[]> => {
      const stored = await publishing.append(Array.from({ length: count }, () => buildPriceEventOnTopic(PRICE_TOPICS[0])));
      return stored.map((event) => event.id);
    };
    await expect.poll(() => clients.every((client) => client.seen.connections === 1)).toBe(true);
    const before = await publish(3);
    await expect.poll(() => clients.map((client) => client.seen.events.length)).toEqual([3, 3]);

    await server.kill();
    await sleep(outageMs);
    await server.restart();
    // Published once the restarted, empty Redis answers.
    let after: number[] = [];
    await expect
      .poll(
        async () => {
          after = await publish(5).catch(() => []);
          return after.length;
        },
        { timeout: 5_000, interval: 100 },
      )
      .toBe(5);
    for (const client of clients) {
      await expect.poll(() => client.seen.events, { timeout: 5_000 }).toEqual([...before, ...after]);
      expect(client.seen.resets).toBe(1);
    }
    // And nothing more arrives later: no stream is ended a second time.
    await sleep(300);
    expect(clients.map((client) => client.seen.resets)).toEqual([1, 1]);
  });
});
