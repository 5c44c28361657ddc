// The price log loses its data while a client follows the real stream server (issue 15 item 2):
// Redis flushed (its keys deleted, on this test's own prefix) and the SQLite log file replaced.
// Either way the new log's ids start above every earlier one, and the client, resuming with an id
// from before, gets a `reset` and then every new event: nothing is dropped as a duplicate.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { createCatalogClient, type PriceStreamItem } from '@catalog/client';
import { silentLogger } from '../../server/src/logger.ts';
import type { PriceLog } from '../../server/src/prices/price-log.ts';
import { openRedisPriceLog } from '../../server/src/prices/redis/redis-price-log.ts';
import { SqlitePriceLog } from '../../server/src/prices/sqlite/sqlite-price-log.ts';
import { buildPriceEvent } from '@catalog/contract/testing';
import { createKey, freePorts, type RunningServer, serve, type Workspace, workspace } from './support/server.ts';

const REDIS_URL = process.env['TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const TOPIC = 'price:marketplacea:us';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const event = () => buildPriceEvent();

/** Follows TOPIC with the client from `lastEventId` until `count` items arrived, calling `onItem` after each. */
async function follow(server: RunningServer, key: string, lastEventId: number, count: number, onItem: (items: PriceStreamItem[]) => Promise<void>): Promise<PriceStreamItem[]> {
  const client = createCatalogClient({ baseUrl: server.apiUrl, sseUrl: server.streamUrl, apiKey: key });
  const items: PriceStreamItem[] = [];
  const timeout = AbortSignal.timeout(40_000);
  for await (const item of client.priceStream({ topics: [TOPIC], lastEventId, random: () => 0, maxRetryDelayMs: 200, signal: timeout })) {
    items.push(item);
    await onItem(items);
    if (items.length >= count) break;
  }
  return items;
}

const shape = (items: PriceStreamItem[]) => items.map((item) => (item.type === 'reset' ? 'reset' : item.id));

describe('streamPrices after the price log lost its data', () => {
  async function setUp(ws: Workspace, priceLog: string): Promise<{ server: RunningServer; key: string; db: string }> {
    const db = `sqlite:${join(ws.dir, 'catalog.db')}`;
    const key = await createKey(db, 'pro');
    const server = await serve(db, ['--price-log', priceLog], {}, await freePorts());
    cleanups.push(() => server.stop());
    return { server, key, db };
  }

  it('on Redis, flushed while a client follows: a reset, then every new event', async () => {
    const ws = workspace('loss-redis');
    cleanups.push(() => ws.dispose());
    const prefix = `test:loss:${randomBytes(6).toString('hex')}:`;
    const admin = new Redis(REDIS_URL);
    cleanups.push(async () => {
      await admin.del(`${prefix}stream`, `${prefix}floor`);
      await admin.quit();
    });
    const log: PriceLog = await openRedisPriceLog(REDIS_URL, silentLogger, { keyPrefix: prefix });
    cleanups.push(() => log.close());
    const before = await log.append([event(), event()]);
    const { server, key } = await setUp(ws, `${REDIS_URL}?prefix=${encodeURIComponent(prefix)}`);
    let after: number[] = [];

    const items = await follow(server, key, (before[0]?.id ?? 1) - 1, 5, async (seen) => {
      if (seen.length !== 2) return;
      await admin.del(`${prefix}stream`, `${prefix}floor`);
      after = (await log.append([event(), event()])).map((stored) => stored.id);
    });

    expect(shape(items)).toEqual([before[0]?.id, before[1]?.id, 'reset', ...after]);
    expect(items[2]).toMatchObject({ type: 'reset', requestedId: before[1]?.id, oldestId: after[0] });
    expect(after[0]).toBeGreaterThan(before[1]?.id ?? Infinity);
  }, 60_000);

  it('on SQLite, the log file replaced while the server restarts: a reset, then every new event', async () => {
    const ws = workspace('loss-sqlite');
    cleanups.push(() => ws.dispose());
    const file = join(ws.dir, 'prices.db');
    const first = new SqlitePriceLog(file);
    const before = await first.append([event(), event()]);
    await first.close();
    const ports = await freePorts();
    const db = `sqlite:${join(ws.dir, 'catalog.db')}`;
    const key = await createKey(db, 'pro');
    let server = await serve(db, ['--price-log', `sqlite:${file}`], {}, ports);
    cleanups.push(() => server.stop());
    let after: number[] = [];

    const items = await follow(server, key, (before[0]?.id ?? 1) - 1, 4, async (seen) => {
      if (seen.length === 2) {
        await server.kill();
        for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
        server = await serve(db, ['--price-log', `sqlite:${file}`], {}, ports);
        const replaced = new SqlitePriceLog(file);
        after = (await replaced.append([event()])).map((stored) => stored.id);
        await replaced.close();
      }
    });

    expect(shape(items)).toEqual([before[0]?.id, before[1]?.id, 'reset', ...after]);
    expect(after[0]).toBeGreaterThan(before[1]?.id ?? Infinity);
  }, 60_000);
});
