// watchProducts against the real server, in process on port 0: the API and the stream listener
// over one SQLite price log, while events are published at about 1,000 per second.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildCatalogProduct, buildPriceEvent } from '@catalog/contract/testing';
import { createApp } from '../../server/src/app.ts';
import { createStreamServer } from '../../server/src/http/stream-server.ts';
import { silentLogger } from '../../server/src/logger.ts';
import type { StoredPriceEvent } from '../../server/src/prices/price-log.ts';
import { SqlitePriceLog } from '../../server/src/prices/sqlite/sqlite-price-log.ts';
import { FakeCatalogStore, FakeKeyStore } from '../../server/test/support/fake-catalog-store.ts';
import { PriceStreamError, createCatalogClient, type WatchedItem } from '../src/index.ts';

const PRO = 'ck_watch_pro';
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const watched = [buildCatalogProduct({ slug: 'watched-by-slug' }), buildCatalogProduct({ slug: 'watched-by-id' })];
const other = buildCatalogProduct({ slug: 'not-watched' });

async function listen(server: http.Server, port = 0): Promise<number> {
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function startServers() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'watch-products-'));
  const log = new SqlitePriceLog(path.join(dir, 'prices.db'));
  const keys = new FakeKeyStore({ [PRO]: 'pro' });
  const api = http.createServer(createApp({ catalog: new FakeCatalogStore({ catalog: [...watched, other] }), keys, monitors: { listMonitors: async () => [] }, logger: silentLogger, priceLog: log }));
  const apiPort = await listen(api);
  const startStream = async (port = 0) => {
    const stream = createStreamServer({ priceLog: log, keys, logger: silentLogger, heartbeatMs: 15_000, maxBufferBytes: 1024 * 1024 });
    return { stream, port: await listen(stream.server, port) };
  };
  let current = await startStream();
  const servers = {
    log,
    baseUrl: `http://127.0.0.1:${apiPort}`,
    sseUrl: `http://127.0.0.1:${current.port}`,
    /** Stops the stream listener and starts another on the same port, as a restart would. */
    restartStream: async () => {
      await current.stream.close();
      current = await startStream(current.port);
    },
  };
  cleanups.push(async () => {
    await current.stream.close();
    api.closeAllConnections();
    await new Promise((resolve) => api.close(resolve));
    await log.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return servers;
}

/** Appends about `perSecond` events a second over the three products, until stopped. */
function publishContinuously(log: SqlitePriceLog, perSecond: number) {
  const published: StoredPriceEvent[] = [];
  let n = 0;
  const next = () => {
    n += 1;
    const product = [...watched, other][n % 3]!;
    return buildPriceEvent({
      product_id: product.id,
      variant_id: `v${n % 4}`,
      source: n % 5 === 0 ? 'marketplaceb' : 'marketplacea',
      market: n % 7 === 0 ? 'UK' : 'US',
      price: 100 + (n % 50),
    });
  };
  const timer = setInterval(() => {
    void log.append(Array.from({ length: perSecond / 100 }, next)).then((stored) => published.push(...stored));
  }, 10);
  return { published, stop: () => clearInterval(timer), publishNow: async (count: number) => published.push(...(await log.append(Array.from({ length: count }, next)))) };
}

const productOf = (event: StoredPriceEvent): string => (JSON.parse(event.data) as { product_id: string }).product_id;

describe('watchProducts', () => {
  it('yields each snapshot, then every later change exactly once and in order, while 1,000 events/s are published and the stream server restarts', async () => {
    const servers = await startServers();
    const publisher = publishContinuously(servers.log, 1000);
    cleanups.push(publisher.stop);
    await publisher.publishNow(300);
    const client = createCatalogClient({ baseUrl: servers.baseUrl, sseUrl: servers.sseUrl, apiKey: PRO });
    const controller = new AbortController();
    const items: WatchedItem[] = [];
    let restarted = false;
    let stopAt = Number.POSITIVE_INFINITY;
    for await (const item of client.watchProducts({ products: [watched[0]!.slug, watched[1]!.id], signal: controller.signal })) {
      items.push(item);
      const changes = items.filter((seen) => seen.type === 'price').length;
      if (changes === 200 && !restarted) {
        restarted = true;
        await servers.restartStream();
      }
      if (changes === 600 && stopAt === Number.POSITIVE_INFINITY) {
        publisher.stop();
        await new Promise((resolve) => setTimeout(resolve, 50));
        stopAt = Math.max(...publisher.published.filter((event) => productOf(event) !== other.id).map((event) => event.id));
      }
      if (item.type === 'price' && item.id >= stopAt) controller.abort();
    }
    const snapshots = items.filter((item) => item.type === 'snapshot');
    expect(snapshots.map((snapshot) => snapshot.productId)).toEqual(watched.map((product) => product.id));
    for (const snapshot of snapshots) {
      const mine = publisher.published.filter((event) => productOf(event) === snapshot.productId);
      const changes = items.filter((item) => item.type === 'price' && item.data.product_id === snapshot.productId).map((item) => (item as { id: number }).id);
      expect(changes).toEqual(mine.filter((event) => event.id > snapshot.position).map((event) => event.id));
      // The snapshot is exactly the latest of each variant, source and market at its position.
      const latest = new Map<string, string>();
      for (const event of mine.filter((stored) => stored.id <= snapshot.position)) {
        const { variant_id, source, market } = JSON.parse(event.data) as Record<string, string>;
        latest.set(`${variant_id}|${source}|${market}`, event.data);
      }
      expect(snapshot.prices.map((price) => JSON.stringify(price)).sort()).toEqual([...latest.values()].sort());
    }
  }, 60_000);

  it('surfaces a 400 for a bad filter at once, without retrying', async () => {
    const servers = await startServers();
    let requests = 0;
    const client = createCatalogClient({
      baseUrl: servers.baseUrl,
      sseUrl: servers.sseUrl,
      apiKey: PRO,
      fetch: (input, init) => {
        requests += 1;
        return fetch(input, init);
      },
    });
    const error = await client.priceStream({ topics: ['price:marketplacea:us'], filter: 'price <' }).next().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PriceStreamError);
    expect(error).toMatchObject({ status: 400, code: 'invalid_filter' });
    expect(requests).toBe(1);
  });

  it('throws the 404 of an unknown product', async () => {
    const servers = await startServers();
    const client = createCatalogClient({ baseUrl: servers.baseUrl, sseUrl: servers.sseUrl, apiKey: PRO });
    await expect(client.watchProducts({ products: ['no-such-product'] }).next()).rejects.toMatchObject({ status: 404 });
  });
});
