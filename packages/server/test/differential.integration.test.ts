// The differential suite: the same generated catalog imported into SQLite and PostgreSQL, the same
// generated requests sent to the real app on each (every operation, every filter form, every sort,
// pages, cursor continuation, unicode values in several letter cases, free and Pro keys, odd slugs
// percent-encoded). Status and body must be identical; a difference is a bug in an engine.
// Replay a failure with FC_SEED=<seed printed below>.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app.ts';
import { testAppDeps } from './support/app-deps.ts';
import type { CatalogProductPro, StorefrontProductInput } from '../src/catalog/model.ts';
import { generateCatalogProducts, generateStorefrontProducts } from '../src/catalog/seed/generate-catalog.ts';
import { createRandom, type Random } from '../src/catalog/seed/prng.ts';
import { silentLogger } from '../src/logger.ts';
import { openCatalogStores, type CatalogStores } from '../src/store/open-store.ts';
import { createTestDatabase, type TestDatabase } from './support/postgres-test-database.ts';

const SEED = process.env['FC_SEED'] ?? '20261124';
const PRODUCTS = 240;

interface Engine {
  name: string;
  stores: CatalogStores;
  server: http.Server;
  base: string;
  keys: { free: string; pro: string };
}

function pick<T>(random: Random, values: readonly T[]): T {
  return values[random.int(0, values.length - 1)]!;
}

/** The same text in another spelling the text rule must treat as equal. */
function respell(random: Random, text: string): string {
  switch (random.int(0, 3)) {
    case 0:
      return text.toUpperCase();
    case 1:
      return text.toLowerCase();
    case 2:
      return text.normalize('NFD');
    default:
      return text;
  }
}

function quote(text: string): string {
  return `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
}

function buildFilter(random: Random, storefront: StorefrontProductInput[], depth = 0): string {
  const product = pick(random, storefront);
  const kind = depth >= 2 ? random.int(3, 11) : random.int(0, 11);
  switch (kind) {
    case 0:
      return `(${buildFilter(random, storefront, depth + 1)}) AND (${buildFilter(random, storefront, depth + 1)})`;
    case 1:
      return `(${buildFilter(random, storefront, depth + 1)}) OR (${buildFilter(random, storefront, depth + 1)})`;
    case 2:
      return `NOT (${buildFilter(random, storefront, depth + 1)})`;
    case 3:
      return `shop_name ${pick(random, ['=', '!='])} ${quote(respell(random, product.shop_name))}`;
    case 4:
      return `brand IN [${[product.brand, pick(random, storefront).brand].map((brand) => quote(respell(random, brand))).join(', ')}]`;
    case 5:
      return `tags ${pick(random, ['=', '!='])} ${quote(respell(random, pick(random, product.tags.length > 0 ? product.tags : ['none'])))}`;
    case 6:
      return `${pick(random, ['price_min', 'price_max', 'price_display'])} ${pick(random, ['<', '<=', '>', '>=', '=', '!='])} ${random.int(0, 40) * 10}`;
    case 7:
      return `available = ${random.chance(0.5)}`;
    case 8:
      return `${pick(random, ['product_published_at', 'product_created_at'])} ${pick(random, ['<', '>='])} ${quote(product.product_published_at)}`;
    case 9:
      return `title = ${quote(respell(random, product.title))}`;
    case 10:
      return `slug NOT IN [${quote(respell(random, product.slug))}]`;
    default:
      return `product_type = ${quote(respell(random, product.product_type))}`;
  }
}

function storefrontRequests(random: Random, storefront: StorefrontProductInput[], count: number): string[] {
  const sorts = ['cursor:asc', 'cursor:desc', 'updated_at:asc', 'updated_at:desc', 'published_at:asc', 'published_at:desc'];
  const words = [...new Set(storefront.flatMap((product) => `${product.title} ${product.brand}`.split(/\s+/u)))];
  return Array.from({ length: count }, () => {
    const params = new URLSearchParams();
    if (random.chance(0.8)) params.set('sort', pick(random, sorts));
    if (random.chance(0.8)) params.set('limit', String(random.int(1, 50)));
    if (random.chance(0.5)) params.set('page', String(random.chance(0.05) ? 51 : random.int(1, 4)));
    if (random.chance(0.3)) params.set('shop_name', respell(random, pick(random, storefront).shop_name));
    if (random.chance(0.3)) params.set('query', respell(random, `${pick(random, words)} ${random.chance(0.5) ? pick(random, words) : ''}`.trim()));
    if (random.chance(0.7)) params.set('filters', buildFilter(random, storefront));
    return `/v3/storefront/products?${params.toString()}`;
  });
}

function catalogRequests(random: Random, catalog: CatalogProductPro[], count: number): string[] {
  const requests: string[] = ['/v2/brands', '/gtin/count'];
  for (let i = 0; requests.length < count; i += 1) {
    const product = pick(random, catalog);
    const variant = pick(random, product.variants);
    switch (i % 5) {
      case 0:
        requests.push(`/v2/products/${product.id}`);
        break;
      case 1:
        requests.push(`/v2/products/${encodeURIComponent(respell(random, product.slug))}`);
        break;
      case 2:
        requests.push(`/v2/variants?sku=${encodeURIComponent(respell(random, variant.sku))}&limit=${random.int(1, 30)}`);
        break;
      case 3: {
        const start = random.int(0, Math.max(0, variant.gtin.length - 4));
        const fragment = variant.gtin.slice(start, start + random.int(4, 8));
        requests.push(`/v2/variants?gtin=${fragment}&page=${random.int(1, 3)}&limit=${random.int(1, 50)}`);
        break;
      }
      default:
        requests.push(`/v2/products/${encodeURIComponent(`no-such-${random.int(0, 1000)}`)}`);
    }
  }
  return requests;
}

async function startEngine(name: string, url: string, catalog: CatalogProductPro[], storefront: StorefrontProductInput[]): Promise<Engine> {
  const stores = await openCatalogStores(url, silentLogger);
  for (let i = 0; i < catalog.length; i += 50) await stores.catalog.upsertCatalogProducts(catalog.slice(i, i + 50));
  for (let i = 0; i < storefront.length; i += 50) await stores.catalog.upsertStorefrontProducts(storefront.slice(i, i + 50));
  const keys = { free: await stores.keys.createKey('free', 'differential'), pro: await stores.keys.createKey('pro', 'differential') };
  const server = http.createServer(createApp(testAppDeps({ catalog: stores.catalog, keys: stores.keys })));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { name, stores, server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, keys };
}

async function answer(engine: Engine, path: string, plan: 'free' | 'pro'): Promise<string> {
  const key = engine.keys[plan];
  const response = await fetch(engine.base + path, { headers: { authorization: path.startsWith('/gtin/') ? `Bearer ${key}` : key } });
  return `${response.status} ${await response.text()}`;
}

describe('both engines answer identically', () => {
  let engines: Engine[] = [];
  let directory: string;
  let database: TestDatabase;
  let catalog: CatalogProductPro[];
  let storefront: StorefrontProductInput[];

  beforeAll(async () => {
    process.stdout.write(`differential suite: FC_SEED=${SEED} (set FC_SEED to replay)\n`);
    catalog = [...generateCatalogProducts({ products: PRODUCTS, seed: SEED })];
    // The service stamps created_at/updated_at when absent; give them, so both engines store the same.
    storefront = [...generateStorefrontProducts({ products: PRODUCTS, seed: SEED })].map((product) => ({
      ...product,
      created_at: '2026-01-02T03:04:05.678Z',
      updated_at: new Date(Date.parse(product.product_published_at)).toISOString(),
    }));
    directory = mkdtempSync(join(tmpdir(), 'differential-'));
    database = await createTestDatabase();
    engines = await Promise.all([
      startEngine('sqlite', `sqlite:${join(directory, 'catalog.db')}`, catalog, storefront),
      startEngine('postgres', database.url(), catalog, storefront),
    ]);
  });

  afterAll(async () => {
    for (const engine of engines) {
      engine.server.closeAllConnections();
      await new Promise((resolve) => engine.server.close(resolve));
      await engine.stores.close();
    }
    await database?.drop();
    rmSync(directory, { recursive: true, force: true });
  });

  it(`on generated storefront, product, variant, brand and count requests with free and Pro keys (FC_SEED=${SEED})`, async () => {
    const random = createRandom(`${SEED}:requests`);
    const requests = [...storefrontRequests(random, storefront, 700), ...catalogRequests(random, catalog, 400)];
    let compared = 0;
    for (const path of requests) {
      for (const plan of ['free', 'pro'] as const) {
        const [sqlite, postgres] = await Promise.all(engines.map((engine) => answer(engine, path, plan)));
        expect(postgres, `${plan} GET ${path} (FC_SEED=${SEED})`).toBe(sqlite);
        compared += 1;
      }
    }
    expect(compared).toBeGreaterThanOrEqual(2000);
  }, 120_000);

  it(`walks every storefront product once past page limits by cursor continuation on both (FC_SEED=${SEED})`, async () => {
    for (const engine of engines) {
      const seen: string[] = [];
      let after: number | undefined;
      for (;;) {
        const filters = after === undefined ? '' : `&filters=${encodeURIComponent(`cursor > ${after}`)}`;
        const body = JSON.parse((await answer(engine, `/v3/storefront/products?limit=7${filters}`, 'free')).slice(4)) as { data: { id: string; cursor: number }[] };
        if (body.data.length === 0) break;
        seen.push(...body.data.map((product) => product.id));
        after = body.data.at(-1)!.cursor;
      }
      expect(seen, engine.name).toEqual(storefront.map((product) => product.id));
    }
  }, 60_000);
});
