// Measures the scale-out adapters on this machine (not a test): RedisPriceLog append throughput and
// follow() latency, and PostgreSQL GTIN substring search over a seeded catalog.
//   node bench/scale-adapters.ts [--variants N]
// Uses its own Redis key prefix and its own database, both removed afterwards.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Redis } from 'ioredis';
import type { CatalogProductPro, PriceEvent } from '../src/catalog/model.ts';
import { silentLogger } from '../src/logger.ts';
import { openRedisPriceLog } from '../src/prices/redis/redis-price-log.ts';
import { openPostgresStores } from '../src/store/postgres/open-postgres-stores.ts';
import { createTestDatabase } from '../test/support/postgres-test-database.ts';

const { values } = parseArgs({ options: { variants: { type: 'string', default: '200000' } } });
const variantCount = Number(values.variants);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function event(n: number): PriceEvent {
  return {
    source: n % 2 === 0 ? 'marketplacea' : 'marketplaceb',
    product_id: `p-${n}`,
    variant_id: `v-${n}`,
    size: '10',
    price: 100 + (n % 50),
    currency: 'USD',
    market: 'US',
    sku: `SKU-${n}`,
    timestamp: new Date().toISOString(),
  };
}

async function benchRedis(): Promise<void> {
  const prefix = `bench:prices:${randomBytes(4).toString('hex')}:`;
  const writer = await openRedisPriceLog('redis://127.0.0.1:6379', silentLogger, { keyPrefix: prefix });
  const reader = await openRedisPriceLog('redis://127.0.0.1:6379', silentLogger, { keyPrefix: prefix });
  try {
    let started = performance.now();
    for (let i = 0; i < 5000; i += 1) await writer.append([event(i)]);
    const single = 5000 / ((performance.now() - started) / 1000);
    started = performance.now();
    for (let i = 0; i < 50_000; i += 100) await writer.append(Array.from({ length: 100 }, (_, k) => event(i + k)));
    const batched = 50_000 / ((performance.now() - started) / 1000);
    process.stderr.write(`redis append: ${single.toFixed(0)} events/s one per call, ${batched.toFixed(0)} events/s in batches of 100\n`);

    const bounds = await reader.bounds();
    const controller = new AbortController();
    const sentAt = new Map<string, number>();
    const latencies: number[] = [];
    const total = 2000;
    const received = (async () => {
      for await (const stored of reader.follow(bounds?.newestId ?? 0, controller.signal)) {
        const sent = sentAt.get((JSON.parse(stored.data) as PriceEvent).product_id);
        if (sent !== undefined) latencies.push(performance.now() - sent);
        if (latencies.length === total) break;
      }
    })();
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (let i = 0; i < total; i += 1) {
      sentAt.set(`p-${i}`, performance.now());
      await writer.append([event(i)]);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    await received;
    controller.abort();
    latencies.sort((a, b) => a - b);
    process.stderr.write(
      `redis follow latency (append call → yielded, ${total} events at ~400/s): p50 ${percentile(latencies, 50).toFixed(2)} ms, p99 ${percentile(latencies, 99).toFixed(2)} ms\n`,
    );
  } finally {
    await writer.close();
    await reader.close();
    const admin = new Redis('redis://127.0.0.1:6379');
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    await admin.quit();
  }
}

async function benchPostgres(): Promise<void> {
  const database = await createTestDatabase();
  const stores = await openPostgresStores(database.url(), silentLogger);
  try {
    const perProduct = 10;
    let started = performance.now();
    for (let p = 0; p < variantCount / perProduct; p += 1000) {
      const batch = Array.from({ length: 1000 }, (_, k) => {
        const n = p + k;
        const id = `10000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
        return {
          id,
          slug: `product-${n}`,
          sku: `SKU-${n}`,
          title: `Product ${n}`,
          brand: `Brand ${n % 40}`,
          variants: Array.from({ length: perProduct }, (_, v) => ({
            id: `20000000-0000-4000-8000-${String(n * perProduct + v).padStart(12, '0')}`,
            product_id: id,
            sku: `SKU-${n}`,
            gtin: String(195866000000 + (n * perProduct + v) * 7919).padStart(v % 2 === 0 ? 14 : 12, '0'),
          })),
        } as unknown as CatalogProductPro;
      });
      await stores.catalog.upsertCatalogProducts(batch);
      process.stderr.write(`\rseeded ${Math.min(variantCount, (p + 1000) * perProduct)} variants`);
    }
    const seedSeconds = (performance.now() - started) / 1000;
    process.stderr.write(`\npostgres import: ${variantCount} variants in ${seedSeconds.toFixed(1)} s\n`);
    for (const fragment of ['5866', '19586612', '0195866791900', '99999999']) {
      const times: number[] = [];
      let total = 0;
      for (let i = 0; i < 20; i += 1) {
        started = performance.now();
        total = (await stores.catalog.searchVariantDocuments({ gtin: fragment, offset: 0, limit: 20 })).total;
        times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      process.stderr.write(`postgres gtin "${fragment}": total ${total}, p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms\n`);
    }
    started = performance.now();
    const count = await stores.catalog.countGtins();
    process.stderr.write(`postgres countGtins: ${count} in ${(performance.now() - started).toFixed(0)} ms\n`);
  } finally {
    await stores.close();
    await database.drop();
  }
}

await benchRedis();
await benchPostgres();
