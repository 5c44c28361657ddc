// The typed client (`@catalog/client`, as built to dist) against the REAL server (issue 5): the
// storefront walk past the 50-page cap, every HTTP method's typed body and typed refusal, the price
// stream across SIGKILL and SIGTERM restarts on the same ports and database, and the packed tarball
// installed outside the workspace and run against the live server (packages/client/test/package.test.ts
// typechecks a consumer of the same calls against it). The client's own tests use fakes; these run the
// server's CLI exactly as an operator would. Prices are appended to the server's SQLite price log from
// this process, as a publisher would (`catalog prices publish` has its own tests in the server).
import { execFile, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogApiError, createCatalogClient, isCatalogProductPro, PriceStreamError } from '@catalog/client';
import { SqlitePriceLog } from '../../server/src/prices/sqlite/sqlite-price-log.ts';
import type { CatalogClient, PriceEvent, PriceStreamItem, StorefrontProduct, WatchedItem } from '@catalog/client';
import { projections, type StorefrontProductInput } from '@catalog/contract';
import { buildPriceEvent, buildStorefrontProductInput, buildStorefrontVariant } from '@catalog/contract/testing';
import { CATALOG, IMPORTED_AT, toNdjson, UNIQUE_GTINS } from './support/fixtures.ts';
import { createKey, freePorts, importProducts, publishPrices, type RunningServer, serve, type Workspace, workspace } from './support/server.ts';
import { installPackedClient } from '../../client/test/support/packed-client.ts';

/** More than 2,500, and with limit 20 more than the 50 pages one listing serves. */
const STOREFRONT_COUNT = 2600;
const WALK_LIMIT = 20;
const OTHER_SHOP = 'Kicks Corner';
const TOPIC = 'price:marketplacea:us';
/** Events per burst in the SIGKILL test; everything published stays under the 5,000 the log retains. */
const BURST = 1000;

function storefrontProducts(): StorefrontProductInput[] {
  return Array.from({ length: STOREFRONT_COUNT }, (_, i) => {
    const id = `sp_walk_${String(i).padStart(5, '0')}`;
    // Every other product is in the other shop: 1,300 of them, still more than 50 pages of 20.
    const other = i % 2 === 1;
    return buildStorefrontProductInput({
      ...IMPORTED_AT,
      id,
      product_id: String(9_000_000 + i),
      title: `Walk Sneaker ${i}`,
      slug: `walk-sneaker-${i}`,
      ...(other ? { shop_name: OTHER_SHOP, shop_url: 'https://kickscorner.example.com' } : {}),
      variants: [buildStorefrontVariant({ id: `sv_walk_${i}`, parent_id: id, sku: `WALK-${i}` })],
    });
  });
}

/**
 * Polls `condition` (no fixed sleeps); fails with `report()` when it does not hold within
 * `timeoutMs`, or at once when `failed()` reports an error that makes waiting pointless.
 */
async function waitFor(condition: () => boolean, report: () => string, timeoutMs = 30_000, failed: () => unknown = () => undefined): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (failed() !== undefined) throw new Error(`gave up waiting: ${report()}`, { cause: failed() });
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${report()}`);
    await new Promise((resolveTick) => setTimeout(resolveTick, 20));
  }
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

async function refusal(promise: Promise<unknown>): Promise<CatalogApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CatalogApiError);
  return error as CatalogApiError;
}

let ws: Workspace;
let db: string;
let proKey: string;
let freeKey: string;
let main: RunningServer;
let imported: StorefrontProductInput[];
const stopLater: RunningServer[] = [];
const openLogs: SqlitePriceLog[] = [];

beforeAll(async () => {
  ws = workspace('client-vs-server');
  db = `sqlite:${join(ws.dir, 'catalog.db')}`;
  imported = storefrontProducts();
  await importProducts(db, 'catalog', ws.file('catalog.ndjson', toNdjson(Object.values(CATALOG))));
  await importProducts(db, 'storefront', ws.file('storefront.ndjson', toNdjson(imported)));
  proKey = await createKey(db, 'pro');
  freeKey = await createKey(db, 'free');
  main = await serve(db);
}, 120_000);

afterAll(async () => {
  await Promise.all([main, ...stopLater].filter((s) => s !== undefined).map((s) => s.kill()));
  await Promise.all(openLogs.map((log) => log.close()));
  ws?.dispose();
});

const clientFor = (apiKey: string, server: RunningServer = main): CatalogClient =>
  createCatalogClient({ baseUrl: server.apiUrl, sseUrl: server.streamUrl, apiKey });

describe('allStorefrontProducts', () => {
  it('yields every one of 2,600 products exactly once, in cursor order, past the 50-page cap', async () => {
    const walked = await collect(clientFor(freeKey).allStorefrontProducts({ limit: WALK_LIMIT }));
    expect(walked.length).toBe(STOREFRONT_COUNT);
    expect(new Set(walked.map((p) => p.id)).size).toBe(STOREFRONT_COUNT);
    expect(walked.map((p) => p.id).sort()).toEqual(imported.map((p) => p.id).sort());
    const cursors = walked.map((p) => p.cursor);
    expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
    expect(new Set(cursors).size).toBe(STOREFRONT_COUNT);
    // The products come back as imported (plus the cursor the service assigned).
    const byId = new Map(imported.map((p) => [p.id, p]));
    const sample = walked[1234] as StorefrontProduct;
    const { cursor, ...rest } = sample;
    expect(cursor).toBeGreaterThan(0);
    expect(rest).toEqual(byId.get(sample.id));
  }, 60_000);

  it('combines a caller filter with the cursor continuation: 1,300 products of one shop, each once', async () => {
    const catalog = clientFor(freeKey);
    const filters = `shop_name = "${OTHER_SHOP}"`;
    const first = await catalog.listStorefrontProducts({ filters, limit: WALK_LIMIT, sort: 'cursor:asc' });
    expect(first.meta.total).toBe(STOREFRONT_COUNT / 2);
    expect(first.meta.total_pages).toBe(50);

    const walked = await collect(catalog.allStorefrontProducts({ filters, limit: WALK_LIMIT }));
    const expected = imported.filter((p) => p.shop_name === OTHER_SHOP).map((p) => p.id);
    expect(walked.length).toBe(expected.length);
    expect(walked.every((p) => p.shop_name === OTHER_SHOP)).toBe(true);
    expect(new Set(walked.map((p) => p.id)).size).toBe(expected.length);
    expect(walked.map((p) => p.id).sort()).toEqual(expected.sort());
    const cursors = walked.map((p) => p.cursor);
    expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
    expect(walked.slice(0, WALK_LIMIT).map((p) => p.id)).toEqual(first.data.map((p) => p.id));
  }, 60_000);
});

describe('createCatalogClient HTTP methods', () => {
  it('getProduct returns the Pro detail by slug to a Pro key', async () => {
    const { data } = await clientFor(proKey).getProduct(CATALOG.dunk.slug);
    expect(isCatalogProductPro(data)).toBe(true);
    if (!isCatalogProductPro(data)) return;
    expect(data.id).toBe(CATALOG.dunk.id);
    expect(data.weekly_orders).toBe(CATALOG.dunk.weekly_orders);
    expect(data.retail_prices).toEqual(CATALOG.dunk.retail_prices);
    expect(data.release_dates).toEqual(CATALOG.dunk.release_dates);
    expect(data.variants.map((v) => v.gtin).sort()).toEqual(['00195866123458', '00195866123465', '195866123458']);
  });

  it('getProduct returns the free detail by id to a free key, without Pro fields', async () => {
    const { data } = await clientFor(freeKey).getProduct(CATALOG.jordan.id);
    expect(isCatalogProductPro(data)).toBe(false);
    expect(data.slug).toBe(CATALOG.jordan.slug);
    expect(data.images).toBeNull();
    for (const proField of projections.CatalogProductFree.withheld) expect(data).not.toHaveProperty(proField);
  });

  it('searchVariants finds by SKU and by GTIN without its leading zeros', async () => {
    const catalog = clientFor(proKey);
    const bySku = await catalog.searchVariants({ sku: CATALOG.dunk.sku });
    expect(bySku.meta.total).toBe(3);
    expect(bySku.data.every((v) => v.sku === CATALOG.dunk.sku)).toBe(true);
    const byGtin = await catalog.searchVariants({ gtin: '195866123458' });
    expect(byGtin.data.map((v) => v.gtin).sort()).toEqual(['00195866123458', '195866123458']);
    expect(byGtin.data.map((v) => v.source).sort()).toEqual(['marketplacea', 'marketplaceb']);
  });

  it('listTopBrands counts catalog products per brand, most first', async () => {
    const { data } = await clientFor(proKey).listTopBrands();
    expect(data[0]).toEqual({ brand: 'Nike', count: 2 });
    expect(data.map((b) => b.brand).sort()).toEqual(['Jordan', 'Nike', 'adidas']);
  });

  it('countGtins counts each GTIN once after padding', async () => {
    expect(await clientFor(freeKey).countGtins()).toEqual({ count: UNIQUE_GTINS });
    expect(await clientFor(proKey).countGtins()).toEqual({ count: UNIQUE_GTINS });
  });

  it('throws CatalogApiError 401 unauthorized for an unknown key, with the request id', async () => {
    const unknown = clientFor('unknown-key-0000000000000000');
    for (const call of [() => unknown.getProduct(CATALOG.dunk.slug), () => unknown.countGtins(), () => unknown.listTopBrands()]) {
      const error = await refusal(call());
      expect({ code: error.code, status: error.status }).toEqual({ code: 'unauthorized', status: 401 });
      expect(error.requestId).toMatch(/\S/);
      expect(error.body?.status).toBe('error');
    }
  });

  it('throws CatalogApiError 403 forbidden for a free key on Pro operations', async () => {
    const free = clientFor(freeKey);
    for (const call of [() => free.searchVariants({ sku: CATALOG.dunk.sku }), () => free.listTopBrands()]) {
      const error = await refusal(call());
      expect({ code: error.code, status: error.status }).toEqual({ code: 'forbidden', status: 403 });
      expect(error.requestId).toMatch(/\S/);
    }
  });

  it('throws CatalogApiError 404 not_found naming the unknown slug', async () => {
    const error = await refusal(clientFor(proKey).getProduct('air-jordan-0'));
    expect({ code: error.code, status: error.status }).toEqual({ code: 'not_found', status: 404 });
    expect(error.message).toContain('air-jordan-0');
    expect(error.requestId).toMatch(/\S/);
  });

  it('throws CatalogApiError 400 for a bad filter, a bad GTIN and an id longer than any slug', async () => {
    const catalog = clientFor(proKey);
    const badFilter = await refusal(catalog.listStorefrontProducts({ filters: 'shop_name =' }));
    expect({ code: badFilter.code, status: badFilter.status }).toEqual({ code: 'invalid_filter', status: 400 });
    expect(badFilter.requestId).toMatch(/\S/);
    const walk = await refusal(collect(catalog.allStorefrontProducts({ filters: 'shop_name =' })));
    expect({ code: walk.code, status: walk.status }).toEqual({ code: 'invalid_filter', status: 400 });
    const badGtin = await refusal(catalog.searchVariants({ gtin: '12a' }));
    expect({ code: badGtin.code, status: badGtin.status }).toEqual({ code: 'invalid_request', status: 400 });
    const badId = await refusal(catalog.getProduct('a'.repeat(1001)));
    expect({ code: badId.code, status: badId.status }).toEqual({ code: 'invalid_request', status: 400 });
  });
});

function priceEvent(n: number): PriceEvent {
  return buildPriceEvent({
    price: 100 + n + 0.25,
    variant_id: `v${n}`,
    size: String(4 + (n % 10)),
    timestamp: `2026-11-23T16:${String(Math.floor(n / 60) % 60).padStart(2, '0')}:${String(n % 60).padStart(2, '0')}.${String(n).padStart(9, '0')}Z`,
  });
}

/** A database of its own (keys and price log only) served on two fixed ports, restartable. */
async function streamServer(name: string) {
  const streamFile = join(ws.dir, `${name}.db`);
  const streamDb = `sqlite:${streamFile}`;
  // Ids 1, 2, … (event n carries price n): a log whose counter starts at 0, not at its creation time.
  const log = new SqlitePriceLog(streamFile, { newLogCounter: 0 });
  openLogs.push(log);
  const key = await createKey(streamDb, 'pro');
  const ports = await freePorts();
  const start = async () => {
    const server = await serve(streamDb, [], {}, ports);
    stopLater.push(server);
    return server;
  };
  let published = 0;
  const publish = async (count: number) => {
    const events = Array.from({ length: count }, (_, i) => priceEvent(published + i + 1));
    published += count;
    await log.append(events);
  };
  return { key, ports, start, publish, published: () => published };
}

/**
 * A price stream read in the background into `items`, as a consumer loop would. `hold()` makes the
 * loop stop after its next item until `release()`: the server is then killed while the rest of a
 * burst is still unread, on the wire or unsent.
 */
function consume(catalog: CatalogClient) {
  const controller = new AbortController();
  const items: PriceStreamItem[] = [];
  const acked: number[] = [];
  const reconnects: unknown[] = [];
  let failure: unknown;
  let gate: Promise<void> | undefined;
  let open: (() => void) | undefined;
  const done = (async () => {
    try {
      for await (const item of catalog.priceStream({
        topics: [TOPIC],
        lastEventId: 0,
        signal: controller.signal,
        // Capped so an outage of a second or two is followed promptly; the production default is 30 s.
        maxRetryDelayMs: 500,
        onLastEventId: (id) => acked.push(id),
        onReconnect: ({ error }) => reconnects.push(error),
      })) {
        items.push(item);
        if (gate !== undefined) await gate;
      }
    } catch (error) {
      failure = error;
    }
  })();
  return {
    items,
    acked,
    reconnects,
    failure: () => failure,
    ids: () => items.map((item) => item.id),
    hold: () => {
      gate = new Promise((resolveGate) => (open = resolveGate));
    },
    release: () => {
      gate = undefined;
      open?.();
    },
    stop: async () => {
      open?.();
      controller.abort();
      await done;
    },
  };
}

describe('priceStream against the real stream server', () => {
  function expectExactlyOnceInOrder(stream: ReturnType<typeof consume>, total: number): void {
    expect(stream.failure()).toBeUndefined();
    expect(stream.items.filter((item) => item.type === 'reset')).toEqual([]);
    expect(stream.ids()).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    for (const item of stream.items) {
      expect(item.topic).toBe(TOPIC);
      expect(item.data).toEqual(priceEvent(item.id));
    }
  }

  it('delivers every event exactly once, in order, across two SIGKILLs and restarts on the same ports', async () => {
    const feed = await streamServer('sigkill');
    let server = await feed.start();
    expect(new URL(server.streamUrl).port).toBe(String(feed.ports.sse));
    const stream = consume(clientFor(feed.key, server));
    const received = (n: number) => () => stream.items.length >= n;
    const progress = () => `received ids ${JSON.stringify(stream.ids().slice(-5))} of ${feed.published()}; failure ${String(stream.failure())}`;

    await feed.publish(5);
    await waitFor(received(5), progress, 30_000, stream.failure);

    for (let restart = 1; restart <= 2; restart++) {
      // The consumer holds the first event of a burst while the server is killed: the cut lands with
      // the rest of the burst unread (in socket and client buffers), and a last batch published just
      // before the kill may or may not have left the dying server. Either way each arrives once.
      const before = feed.published();
      stream.hold();
      await feed.publish(BURST);
      await waitFor(received(before + 1), progress, 30_000, stream.failure);
      await feed.publish(50);
      await server.kill();
      expect(stream.items.length).toBe(before + 1);
      // The price log is durable and publishing needs no server: these wait for the restart.
      await feed.publish(7);
      stream.release();
      server = await feed.start();
      expect(new URL(server.streamUrl).port).toBe(String(feed.ports.sse));
      await feed.publish(3);
      await waitFor(received(feed.published()), progress, 30_000, stream.failure);
    }

    // A last event after everything: a late duplicate would arrive before it and break the id list.
    await feed.publish(1);
    const total = feed.published();
    await waitFor(() => stream.items.length >= total && stream.acked.at(-1) === total, progress, 30_000, stream.failure);
    await stream.stop();
    expectExactlyOnceInOrder(stream, total);
    expect(stream.acked.at(-1)).toBe(total);
    expect(stream.acked).toEqual(stream.ids());
    expect(stream.reconnects.length).toBeGreaterThanOrEqual(2);
    await server.stop();
  }, 90_000);

  it('resumes without loss or duplicate after the server closes the stream cleanly (SIGTERM) and restarts', async () => {
    const feed = await streamServer('sigterm');
    let server = await feed.start();
    const stream = consume(clientFor(feed.key, server));
    const progress = () => `received ids ${JSON.stringify(stream.ids().slice(-5))} of ${feed.published()}; failure ${String(stream.failure())}`;

    await feed.publish(4);
    await waitFor(() => stream.items.length >= 4, progress, 30_000, stream.failure);
    await server.stop();
    await feed.publish(4);
    server = await feed.start();
    await feed.publish(4);
    const total = feed.published();
    await waitFor(() => stream.items.length >= total && stream.acked.at(-1) === total, progress, 30_000, stream.failure);
    await stream.stop();
    expectExactlyOnceInOrder(stream, total);
    expect(stream.reconnects.length).toBeGreaterThanOrEqual(1);
    await server.stop();
  }, 60_000);

  it('reports 429 too_many_streams with its Retry-After to a key over its stream cap, and keeps trying', async () => {
    const feed = await streamServer('cap');
    const server = await serve(`sqlite:${join(ws.dir, 'cap.db')}`, ['--max-streams-per-key', '1'], {}, await freePorts());
    stopLater.push(server);
    const first = consume(clientFor(feed.key, server));
    await feed.publish(1);
    await waitFor(() => first.items.length >= 1, () => `first stream: ${first.items.length} items`, 10_000, first.failure);
    const refusals: unknown[] = [];
    const controller = new AbortController();
    const second = collect(
      clientFor(feed.key, server).priceStream({ topics: [TOPIC], signal: controller.signal, onReconnect: ({ error }) => refusals.push(error) }),
    ).catch(() => undefined);
    await waitFor(() => refusals.length > 0, () => `refusals ${JSON.stringify(refusals)}`, 10_000);
    expect(refusals[0]).toBeInstanceOf(PriceStreamError);
    expect(refusals[0]).toMatchObject({ status: 429, code: 'too_many_streams', retryAfterMs: 10_000 });
    controller.abort();
    await second;
    await first.stop();
    expect(first.failure()).toBeUndefined();
    await server.stop();
  }, 30_000);

  it('stops at once with PriceStreamError 403 for a free key, without reconnecting', async () => {
    const reconnects: unknown[] = [];
    const started = Date.now();
    const error = await collect(clientFor(freeKey).priceStream({ topics: [TOPIC], onReconnect: (info) => reconnects.push(info) })).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PriceStreamError);
    const refused = error as PriceStreamError;
    expect({ code: refused.code, status: refused.status }).toEqual({ code: 'forbidden', status: 403 });
    expect(refused.body?.error).toBe('forbidden');
    expect(reconnects).toEqual([]);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

describe('watchProducts against the real server', () => {
  it('hands over from each snapshot to the stream: every later change exactly once, in order, while `prices publish` runs', async () => {
    const watched = [CATALOG.dunk, CATALOG.jordan];
    const dbFile = db.slice('sqlite:'.length);
    let n = 0;
    const batch = (count: number) =>
      Array.from({ length: count }, () => {
        n += 1;
        const product = [CATALOG.dunk, CATALOG.jordan, CATALOG.samba][n % 3]!;
        return buildPriceEvent({ product_id: product.id, variant_id: `w${n % 5}`, market: n % 4 === 0 ? 'UK' : 'US', price: 100 + n });
      });
    await publishPrices(db, ws.file('watch-0.ndjson', toNdjson(batch(300))));
    // Publishing runs on, in other processes, while the snapshots are read and the stream opens.
    const publishing = (async () => {
      for (let round = 1; round <= 6; round++) await publishPrices(db, ws.file(`watch-${round}.ndjson`, toNdjson(batch(200))));
    })();
    const controller = new AbortController();
    const items: WatchedItem[] = [];
    const watching = (async () => {
      for await (const item of clientFor(proKey).watchProducts({ products: [watched[0]!.slug, watched[1]!.id], signal: controller.signal })) items.push(item);
    })();
    await publishing;
    const log = new SqlitePriceLog(dbFile);
    const history = await log.readAfter(0, 5000);
    await log.close();
    const productOf = (data: string): string => (JSON.parse(data) as PriceEvent).product_id;
    const last = Math.max(...history.filter((event) => watched.some((p) => p.id === productOf(event.data))).map((event) => event.id));
    await waitFor(() => items.some((item) => item.type === 'price' && item.id >= last), () => `${items.length} items`, 30_000);
    controller.abort();
    await watching;
    for (const product of watched) {
      const snapshot = items.find((item) => item.type === 'snapshot' && item.productId === product.id);
      if (snapshot?.type !== 'snapshot') throw new Error(`no snapshot of ${product.slug}`);
      const changes = items.flatMap((item) => (item.type === 'price' && item.data.product_id === product.id ? [item.id] : []));
      expect(changes).toEqual(history.filter((event) => productOf(event.data) === product.id && event.id > snapshot.position).map((event) => event.id));
    }
  }, 90_000);
});

describe('the packed client installed outside the workspace', () => {
  // Asynchronous child processes only: a blocked event loop would stop draining the servers' log pipes.
  const exec = promisify(execFile);
  let project: string;
  let feed: Awaited<ReturnType<typeof streamServer>>;
  /** Published in five batches around two restarts by the stream test. */
  const WATCH_TOTAL = 25;

  const walkSource = () => `import { createCatalogClient } from '@catalog/client';
import type { StorefrontProduct } from '@catalog/client';

const catalog = createCatalogClient({ baseUrl: ${JSON.stringify(main.apiUrl)}, sseUrl: ${JSON.stringify(main.streamUrl)}, apiKey: ${JSON.stringify(freeKey)} });
const ids = new Set<string>();
let count = 0;
let lastCursor = 0;
let ordered = true;
for await (const product of catalog.allStorefrontProducts({ limit: ${WALK_LIMIT} })) {
  const p: StorefrontProduct = product;
  ordered &&= p.cursor > lastCursor;
  lastCursor = p.cursor;
  ids.add(p.id);
  count += 1;
}
let defaultLimit = 0;
for await (const _product of catalog.allStorefrontProducts()) defaultLimit += 1;
console.log(JSON.stringify({ count, unique: ids.size, ordered, defaultLimit }));
`;

  // Default backoff settings, as a consuming team would run it; it stops itself after the last event.
  const watchSource = () => `import { createCatalogClient } from '@catalog/client';
import type { PriceStreamItem } from '@catalog/client';

const catalog = createCatalogClient({ baseUrl: ${JSON.stringify(main.apiUrl)}, sseUrl: 'http://127.0.0.1:${feed.ports.sse}', apiKey: ${JSON.stringify(feed.key)} });
const controller = new AbortController();
const onLastEventId = (id: number): void => {
  if (id >= ${WATCH_TOTAL}) controller.abort();
};
for await (const ev of catalog.priceStream({ topics: [${JSON.stringify(TOPIC)}], lastEventId: 0, signal: controller.signal, onLastEventId })) {
  const item: PriceStreamItem = ev;
  console.log(JSON.stringify({ type: item.type, id: ev.id, topic: ev.topic, data: ev.data }));
}
`;

  beforeAll(async () => {
    project = join(ws.dir, 'consumer');
    installPackedClient(project);
    feed = await streamServer('packed');
    writeFileSync(join(project, 'walk.ts'), walkSource());
    writeFileSync(join(project, 'watch.ts'), watchSource());
  }, 120_000);

  it('run with plain node, walks all 2,600 storefront products past the 50-page cap', async () => {
    const run = await exec(process.execPath, ['walk.ts'], { cwd: project, timeout: 60_000 });
    expect(JSON.parse(run.stdout.trim()), run.stderr).toEqual({ count: STOREFRONT_COUNT, unique: STOREFRONT_COUNT, ordered: true, defaultLimit: STOREFRONT_COUNT });
  }, 60_000);

  it('run with plain node, follows the price stream across two SIGKILL restarts without losing or repeating an event', async () => {
    let server = await feed.start();
    const child = spawn(process.execPath, ['watch.ts'], { cwd: project, stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    let stderr = '';
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const complete = pending.split('\n');
      pending = complete.pop() ?? '';
      lines.push(...complete);
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
    let exitCode: number | null | undefined;
    void exited.then((code) => (exitCode = code));
    const progress = () => `consumer printed ${lines.length} of ${feed.published()} events; exit ${String(exitCode)}; stderr ${stderr}`;
    const printed = (n: number) => () => lines.length >= n;
    const crashed = () => (exitCode !== undefined && lines.length < WATCH_TOTAL ? exitCode : undefined);
    try {
      await feed.publish(5);
      await waitFor(printed(5), progress, 30_000, crashed);
      for (let restart = 1; restart <= 2; restart++) {
        await server.kill();
        await feed.publish(5);
        server = await feed.start();
        if (restart === 2) break;
        await feed.publish(5);
        await waitFor(printed(feed.published()), progress, 30_000, crashed);
      }
      await feed.publish(WATCH_TOTAL - feed.published());
      expect(await exited, progress()).toBe(0);
    } finally {
      child.kill('SIGKILL');
      await server.stop();
    }
    const received = lines.map((line) => JSON.parse(line) as { type: string; id: number; topic: string; data: unknown });
    expect(received.map((item) => item.id)).toEqual(Array.from({ length: WATCH_TOTAL }, (_, i) => i + 1));
    for (const item of received) expect(item).toEqual({ type: 'price', id: item.id, topic: TOPIC, data: priceEvent(item.id) });
  }, 90_000);
});
