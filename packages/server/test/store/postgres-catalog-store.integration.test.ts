// PostgresCatalogStore and PostgresKeyStore against the PostgreSQL on 127.0.0.1:5432, each run in
// its own throw-away database.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceUnavailable } from '../../src/catalog/errors.ts';
import type { CatalogProductPro, CatalogVariant, StorefrontProductInput } from '../../src/catalog/model.ts';
import { silentLogger } from '../../src/logger.ts';
import { migratePostgres } from '../../src/store/postgres/migrate-postgres.ts';
import { openPostgresStores, type PostgresStores } from '../../src/store/postgres/open-postgres-stores.ts';
import { parseExactInt8 } from '../../src/store/postgres/pg-pool.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres-test-database.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';

function variant(n: number, overrides: Partial<CatalogVariant> = {}): CatalogVariant {
  return {
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    product_id: 'p',
    sku: 'DD1391-100',
    title: 'Dunk Low',
    description: 'Retro <br> basketball',
    brand: 'Nike',
    category: 'Shoes > Sneakers',
    color: 'White/Black',
    gender: 'male',
    gtin: `00195866${String(n).padStart(6, '0')}`,
    size: '10',
    link: 'https://example.com/v',
    image: 'https://example.com/v.jpg',
    price: 110.5,
    currency: 'USD',
    tags: ['COLOR_white'],
    metadata: { category: 'sneakers', model: 'Dunk' },
    source: 'marketplacea',
    ...overrides,
  };
}

function catalogProduct(n: number, brand: string, variants: CatalogVariant[] = []): CatalogProductPro {
  const id = `10000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  return {
    id,
    slug: `product-${n}`,
    sku: `SKU-${n}`,
    title: `Product ${n}`,
    brand,
    category: 'Shoes > Sneakers',
    color: 'White/Black',
    gender: 'male',
    description: 'Line one<br>Line two',
    image: 'https://example.com/p.jpg',
    images: null,
    currency: 'USD',
    avg_price: 120,
    min_price: 100,
    max_price: 140,
    trending: false,
    release_dates: [{ sku: `SKU-${n}`, release_date: '2021', source: 'marketplacea_2021' }],
    retail_prices: [{ sku: `SKU-${n}`, price: 110, currency: 'USD', source: 'srp' }],
    links: [{ link: 'https://example.com/l', target: 'marketplacea', min_price: 100 }],
    weekly_orders: 3,
    variants: variants.map((v) => ({ ...v, product_id: id })),
  } as CatalogProductPro;
}

function storefrontProduct(n: number, overrides: Partial<StorefrontProductInput> = {}): StorefrontProductInput {
  return {
    id: `sf-${n}`,
    product_id: `shop-${n}`,
    title: `Air Runner ${n}`,
    description: '',
    brand: n % 2 === 0 ? 'Nike' : 'Adidas',
    product_type: 'Sneakers',
    tags: ['195866000001', `COLOR_${n % 3 === 0 ? 'Red' : 'Blue'}`],
    slug: `air-runner-${n}`,
    link: `https://shop.example.com/p/${n}`,
    price_min: 100 + n,
    price_max: 150 + n,
    price_display: 120 + n,
    available: n % 2 === 0,
    images: [],
    shop_name: n % 4 === 0 ? 'Sneaker Hub' : 'Kicks Co',
    shop_url: 'https://shop.example.com',
    product_created_at: '2024-01-01T00:00:00Z',
    product_published_at: `2024-02-${String((n % 28) + 1).padStart(2, '0')}T00:00:00Z`,
    variants: [],
    ...overrides,
  };
}

let database: TestDatabase;
let stores: PostgresStores;

beforeAll(async () => {
  database = await createTestDatabase();
  stores = await openPostgresStores(database.url(), silentLogger);
});

afterAll(async () => {
  await stores?.close();
  await database?.drop();
});

describe('migratePostgres', () => {
  it('records every migration once and applies nothing the second time', async () => {
    const pool = new pg.Pool({ connectionString: database.url() });
    try {
      expect(await migratePostgres(pool, silentLogger)).toEqual([]);
      const { rows } = await pool.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
      expect(rows.map((row) => row.version)).toEqual([1]);
    } finally {
      await pool.end();
    }
  });
});

describe('PostgresCatalogStore', () => {
  it('reads a catalog product back exactly as imported, by id and by slug', async () => {
    const product = catalogProduct(1, 'Nike', [variant(1), variant(2)]);
    expect(await stores.catalog.upsertCatalogProducts([product])).toEqual({ inserted: 1, updated: 0 });
    expect(JSON.stringify(await stores.catalog.getProduct(product.id))).toBe(JSON.stringify(product));
    expect(await stores.catalog.getProduct('product-1')).toEqual(product);
    expect(await stores.catalog.getProduct('missing')).toBeNull();
    expect(await stores.catalog.upsertCatalogProducts([{ ...product, title: 'Renamed', variants: [product.variants[0]!] }])).toEqual({
      inserted: 0,
      updated: 1,
    });
    expect((await stores.catalog.getProduct(product.id))?.title).toBe('Renamed');
    expect((await stores.catalog.searchVariants({ sku: 'dd1391-100', offset: 0, limit: 10 })).total).toBe(1);
  });

  it('finds variants by GTIN fragment and counts GTINs once after normalising to 14 digits', async () => {
    await stores.catalog.upsertCatalogProducts([
      catalogProduct(2, 'Adidas', [variant(10, { gtin: '00195866123458' }), variant(11, { gtin: '195866123458' }), variant(12, { gtin: '4006381333931' })]),
    ]);
    const found = await stores.catalog.searchVariants({ gtin: '5866123', offset: 0, limit: 10 });
    expect(found.total).toBe(2);
    expect(found.items.map((v) => v.gtin)).toEqual(['00195866123458', '195866123458']);
    expect((await stores.catalog.searchVariants({ gtin: '4006381333931', offset: 0, limit: 10 })).items.map((v) => v.id)).toEqual([variant(12).id]);
    // variant(1) from the previous test plus the 2 distinct GTINs here.
    expect(await stores.catalog.countGtins()).toBe(3);
  });

  it('lists top brands by product count, ties by name', async () => {
    await stores.catalog.upsertCatalogProducts([catalogProduct(3, 'Adidas'), catalogProduct(4, 'Puma'), catalogProduct(5, 'Asics')]);
    expect(await stores.catalog.topBrands(3)).toEqual([
      { brand: 'Adidas', count: 2 },
      { brand: 'Asics', count: 1 },
      { brand: 'Nike', count: 1 },
    ]);
  });

  it('assigns exact 17-digit cursors, keeps them on re-import and pages past any offset with cursor filters', async () => {
    const inputs = Array.from({ length: 30 }, (_, i) => storefrontProduct(i + 1));
    expect(await stores.catalog.upsertStorefrontProducts(inputs)).toEqual({ inserted: 30, updated: 0 });
    const first = await stores.catalog.listStorefrontProducts({ sort: 'cursor:asc', offset: 0, limit: 100 });
    expect(first.total).toBe(30);
    const cursors = first.items.map((p) => p.cursor);
    for (const cursor of cursors) {
      expect(String(cursor)).toMatch(/^\d{17}$/);
      expect(JSON.parse(JSON.stringify(cursor))).toBe(cursor);
      expect(BigInt(cursor) % 1024n).toBe(0n);
    }
    expect(cursors).toEqual([...cursors].sort((a, b) => a - b));
    expect(await stores.catalog.upsertStorefrontProducts([{ ...inputs[0]!, title: 'Renamed' }])).toEqual({ inserted: 0, updated: 1 });
    const again = await stores.catalog.listStorefrontProducts({ sort: 'cursor:asc', offset: 0, limit: 1 });
    expect(again.items[0]).toMatchObject({ title: 'Renamed', cursor: cursors[0], created_at: first.items[0]?.created_at });

    const seen: string[] = [];
    let after = 0;
    for (;;) {
      const page = await stores.catalog.listStorefrontProducts({
        sort: 'cursor:asc',
        filter: { type: 'compare', field: 'cursor', operator: '>', value: after },
        offset: 0,
        limit: 7,
      });
      if (page.items.length === 0) break;
      seen.push(...page.items.map((p) => p.id));
      after = page.items.at(-1)!.cursor;
    }
    expect(seen).toEqual(first.items.map((p) => p.id));
  });

  it('filters by shop, text, tags and booleans, case-insensitively, and sorts with cursor ties', async () => {
    const byShop = await stores.catalog.listStorefrontProducts({ shopName: 'sneaker hub', sort: 'cursor:asc', offset: 0, limit: 100 });
    expect(byShop.total).toBe(7);
    const text = await stores.catalog.listStorefrontProducts({ text: 'RUNNER 2 adidas', sort: 'cursor:asc', offset: 0, limit: 100 });
    expect(text.items.map((p) => p.title).sort()).toEqual(['Air Runner 21', 'Air Runner 23', 'Air Runner 25', 'Air Runner 27', 'Air Runner 29']);
    const tagged = await stores.catalog.listStorefrontProducts({
      filter: {
        type: 'and',
        operands: [
          { type: 'compare', field: 'tags', operator: '=', value: 'color_red' },
          { type: 'compare', field: 'available', operator: '=', value: true },
        ],
      },
      sort: 'published_at:desc',
      offset: 0,
      limit: 100,
    });
    expect(tagged.items.map((p) => p.id)).toEqual(['sf-24', 'sf-18', 'sf-12', 'sf-6', 'sf-30']);
    const injection = await stores.catalog.listStorefrontProducts({
      filter: { type: 'compare', field: 'brand', operator: '=', value: "x' OR '1'='1" },
      sort: 'cursor:asc',
      offset: 0,
      limit: 10,
    });
    expect(injection.total).toBe(0);
  });

  it('samples variants spread over the catalog', async () => {
    const sample = await stores.catalog.sampleVariants(2);
    expect(sample).toHaveLength(2);
    expect(new Set(sample.map((v) => v.id)).size).toBe(2);
  });
});

describe('PostgresKeyStore', () => {
  it('finds the plan of a created key and nothing for an unknown key', async () => {
    const pro = await stores.keys.createKey('pro', 'test');
    const free = await stores.keys.createKey('free');
    expect(await stores.keys.findPlan(pro)).toBe('pro');
    expect(await stores.keys.findPlan(free)).toBe('free');
    expect(await stores.keys.findPlan(`${pro}x`)).toBeNull();
  });
});

describe('parseExactInt8', () => {
  it('refuses int8 values that are not exact doubles', () => {
    expect(parseExactInt8('17000000000001024')).toBe(17000000000001024);
    expect(() => parseExactInt8('17000000000000001')).toThrow(RangeError);
  });
});

describe('PostgreSQL outage', () => {
  it('answers ServiceUnavailable while the database is unreachable and recovers when it returns', async () => {
    const proxy = await startTcpProxy('127.0.0.1', 5432);
    const viaProxy = await openPostgresStores(database.url(proxy.port), silentLogger);
    try {
      await viaProxy.catalog.ping();
      proxy.cut();
      const started = Date.now();
      await expect(viaProxy.catalog.ping()).rejects.toBeInstanceOf(ServiceUnavailable);
      await expect(viaProxy.catalog.listStorefrontProducts({ sort: 'cursor:asc', offset: 0, limit: 5 })).rejects.toBeInstanceOf(ServiceUnavailable);
      await expect(viaProxy.keys.findPlan('ck_anything')).rejects.toBeInstanceOf(ServiceUnavailable);
      expect(Date.now() - started).toBeLessThan(5000);
      proxy.restore();
      await expect(viaProxy.catalog.ping()).resolves.toBeUndefined();
      expect((await viaProxy.catalog.listStorefrontProducts({ sort: 'cursor:asc', offset: 0, limit: 5 })).total).toBe(30);
    } finally {
      await viaProxy.close();
      await proxy.close();
    }
  });

  it('refuses to open with ServiceUnavailable when nothing listens', async () => {
    const proxy = await startTcpProxy('127.0.0.1', 5432);
    proxy.cut();
    try {
      await expect(openPostgresStores(database.url(proxy.port), silentLogger)).rejects.toBeInstanceOf(ServiceUnavailable);
    } finally {
      await proxy.close();
    }
  });
});
