// PostgresCatalogStore and PostgresKeyStore against the PostgreSQL on 127.0.0.1:5432: the shared
// CatalogStore conformance suite (a fresh database per test), then what only PostgreSQL has:
// migrations, index use, exact int8 parsing and outages. Every database is dropped afterwards.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServiceUnavailable } from '../../src/catalog/errors.ts';
import { parseFilter } from '../../src/catalog/filter/parse-filter.ts';
import { silentLogger } from '../../src/logger.ts';
import { migratePostgres } from '../../src/store/postgres/migrate-postgres.ts';
import { POSTGRES_MIGRATIONS, recountGtinFragments } from '../../src/store/postgres/migrations.ts';
import { IndexedCatalogStore } from '../../src/store/indexed-catalog-store.ts';
import { openPostgresStores, type PostgresStores } from '../../src/store/postgres/open-postgres-stores.ts';
import { parseExactInt8 } from '../../src/store/postgres/pg-pool.ts';
import { PostgresCatalogStore, STOREFRONT_BY_CURSOR_WHERE, STOREFRONT_CHANGES_WHERE, storefrontRowsSql } from '../../src/store/postgres/postgres-catalog-store.ts';
import { buildCatalogProduct, buildCatalogVariant, buildStorefrontProductInput } from '@catalog/contract/testing';
import { createTestDatabase, type TestDatabase } from '../support/postgres-test-database.ts';
import { startTcpProxy } from '../support/tcp-proxy.ts';
import { describeCatalogStoreConformance } from './catalog-store.suite.ts';
import { readVariantPage } from '../support/read-product.ts';

// One database for the whole suite, emptied before each test (faster than a database per test).
let suiteDatabase: TestDatabase | undefined;
afterAll(async () => {
  await suiteDatabase?.drop();
});

describeCatalogStoreConformance('PostgresCatalogStore', async () => {
  suiteDatabase ??= await createTestDatabase();
  const opened = await openPostgresStores(suiteDatabase.url(), silentLogger);
  const pool = new pg.Pool({ connectionString: suiteDatabase.url(), max: 1 });
  try {
    await pool.query('TRUNCATE catalog_products, catalog_variants, catalog_gtin_fragments, storefront_products, api_keys, monitors, monitor_baselines, monitor_baseline_log, monitor_changes, monitor_deliveries RESTART IDENTITY');
    await pool.query('ALTER SEQUENCE storefront_cursor_seq RESTART');
  } finally {
    await pool.end();
  }
  return { catalog: opened.catalog, keys: opened.keys, cleanup: () => opened.close() };
});

let database: TestDatabase;
let stores: PostgresStores;

beforeAll(async () => {
  database = await createTestDatabase();
  stores = await openPostgresStores(database.url(), silentLogger);
  await stores.catalog.upsertCatalogProducts(
    Array.from({ length: 40 }, (_, i) => buildCatalogProduct({ variants: [buildCatalogVariant({ gtin: `0019586${String(i).padStart(7, '0')}` })] })),
  );
  await stores.catalog.upsertStorefrontProducts(Array.from({ length: 30 }, () => buildStorefrontProductInput()));
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
      expect(rows.map((row) => row.version)).toEqual(POSTGRES_MIGRATIONS.map((migration) => migration.version));
    } finally {
      await pool.end();
    }
  });

  it('moves a catalog from the GTIN suffix table to the 4-gram index with the same answers', async () => {
    const upgraded = await createTestDatabase();
    const pool = new pg.Pool({ connectionString: upgraded.url() });
    try {
      await migratePostgres(pool, silentLogger, POSTGRES_MIGRATIONS.filter((migration) => migration.version <= 7));
      const gtins = ['00195866123458', '4006381333931', '12121212', '0012120', '195866123458'];
      // Variants written as a store of schema 7 left them: rows, suffixes and stored counts.
      await pool.query("INSERT INTO catalog_products (id, slug, brand, document) VALUES ('p', 'p', 'b', '{}')");
      await pool.query(
        `INSERT INTO catalog_variants (id, product_id, position, sku_lower, gtin, gtin14, document)
         SELECT 'v' || i, 'p', i, 'sku' || i, g, lpad(g, 14, '0'), json_build_object('id', 'v' || i, 'gtin', g)::text
         FROM unnest($1::text[]) WITH ORDINALITY AS u(g, i)`,
        [gtins],
      );
      await pool.query('INSERT INTO catalog_gtin_suffixes (suffix, variant_seq) SELECT substr(gtin, s.i), seq FROM catalog_variants CROSS JOIN LATERAL generate_series(1, length(gtin) - 3) AS s(i)');
      const client = await pool.connect();
      try {
        await recountGtinFragments(client);
      } finally {
        client.release();
      }
      expect(await migratePostgres(pool, silentLogger, POSTGRES_MIGRATIONS.filter((migration) => migration.version <= 8))).toEqual([8]);
      const { rows } = await pool.query<{ suffixes: string | null; grams: string | null }>(
        "SELECT to_regclass('catalog_gtin_suffixes')::text AS suffixes, to_regclass('catalog_variants_gtin_grams')::text AS grams",
      );
      expect(rows[0]).toEqual({ suffixes: null, grams: 'catalog_variants_gtin_grams' });
      const store = new PostgresCatalogStore(pool);
      for (const fragment of ['1958', '1212', '121212', '5866123458', '2120', '9999', '00195866123458']) {
        const page = await store.searchVariantDocuments({ gtin: fragment, offset: 0, limit: 10 });
        const expected = gtins.map((gtin, i) => ({ gtin, id: `v${i + 1}` })).filter(({ gtin }) => gtin.includes(fragment));
        expect(page.total, fragment).toBe(expected.length);
        expect(page.items.map((item) => (JSON.parse(item) as { id: string }).id), fragment).toEqual(expected.map(({ id }) => id));
      }
    } finally {
      await pool.end();
      await upgraded.drop();
    }
  });
});

describe('PostgresCatalogStore indexes', () => {
  async function plan(sql: string, params: unknown[]): Promise<string> {
    const pool = new pg.Pool({ connectionString: database.url() });
    try {
      const client = await pool.connect();
      try {
        // The tables are tiny here; forbid sequential scans so the plan shows which index applies.
        await client.query('SET enable_seqscan = off');
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params);
        return rows.map((row) => row['QUERY PLAN']).join('\n');
      } finally {
        client.release();
      }
    } finally {
      await pool.end();
    }
  }

  it('answers GTIN substrings from the 4-gram index', async () => {
    expect(await plan('SELECT count(*) FROM catalog_variants WHERE gtin_grams(gtin) @> gtin_grams($1) AND strpos(gtin, $1) > 0', ['5860000003'])).toMatch(
      /catalog_variants_gtin_grams/u,
    );
    expect((await readVariantPage(stores.catalog, { gtin: '5860000003', offset: 0, limit: 100 })).total).toBe(1);
    expect((await readVariantPage(stores.catalog, { gtin: '1958600000', offset: 0, limit: 100 })).total).toBe(40);
  });

  it('follows storefront changes and loads rows in index order, and fetches documents through indexes', async () => {
    // The statements the store runs: each page read in its index's order, with no sort of the rows
    // past its start (an ORDER BY naming the float8 output columns sorted them all, every page).
    const changes = await plan(storefrontRowsSql(STOREFRONT_CHANGES_WHERE), [0, '17000000000001024', 10]);
    expect(changes).toMatch(/storefront_change/u);
    expect(changes).not.toMatch(/Sort/u);
    const byCursor = await plan(storefrontRowsSql(STOREFRONT_BY_CURSOR_WHERE), ['17000000000001024', 10]);
    expect(byCursor).toMatch(/storefront_products_cursor_key/u);
    expect(byCursor).not.toMatch(/Sort/u);
    expect(await plan('SELECT document FROM storefront_products WHERE cursor = ANY($1::bigint[])', [['17000000000001024']])).toMatch(
      /storefront_products_cursor_key/u,
    );
  });

  it('merges pending index entries and refreshes statistics after a bulk load', async () => {
    await ((stores.catalog as IndexedCatalogStore).engine as PostgresCatalogStore).optimize();
    const pool = new pg.Pool({ connectionString: database.url() });
    try {
      const { rows } = await pool.query<{ analyzed: Date | null }>("SELECT last_analyze AS analyzed FROM pg_stat_user_tables WHERE relname = 'catalog_variants'");
      expect(rows[0]?.analyzed).toBeInstanceOf(Date);
    } finally {
      await pool.end();
    }
  });

  it('compares cursors at the top of the 64-bit range as empty or full ranges', async () => {
    const page = (filter: string) => stores.catalog.listStorefrontDocuments({ sort: 'cursor:asc', filter: parseFilter(filter), offset: 0, limit: 1 });
    expect((await page('cursor > 9223372036854774784')).total).toBe(0);
    expect((await page('cursor < 9223372036854774784')).total).toBe(30);
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
      await expect(viaProxy.catalog.listStorefrontDocuments({ sort: 'cursor:asc', offset: 0, limit: 5 })).rejects.toBeInstanceOf(ServiceUnavailable);
      await expect(viaProxy.keys.findPlan('ck_anything')).rejects.toBeInstanceOf(ServiceUnavailable);
      expect(Date.now() - started).toBeLessThan(5000);
      proxy.restore();
      await expect(viaProxy.catalog.ping()).resolves.toBeUndefined();
      expect((await viaProxy.catalog.listStorefrontDocuments({ sort: 'cursor:asc', offset: 0, limit: 5 })).total).toBe(30);
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

describe('two instances on one PostgreSQL database', () => {
  it('see each other\'s imports in listings, GTIN counts and top brands within a second', async () => {
    const other = await openPostgresStores(database.url(), silentLogger);
    try {
      const before = { gtins: await stores.catalog.countGtins(), brands: await stores.catalog.topBrands(50), listed: (await stores.catalog.listStorefrontDocuments({ sort: 'cursor:asc', offset: 0, limit: 1 })).total };
      const product = buildCatalogProduct({ brand: 'Instance Two Brand', variants: [buildCatalogVariant(), buildCatalogVariant()] });
      await other.catalog.upsertCatalogProducts([product]);
      await other.catalog.upsertStorefrontProducts([buildStorefrontProductInput()]);
      // Answers within the poll period may still be the earlier ones; a second later they are not.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(await stores.catalog.countGtins()).toBe(before.gtins + 2);
      expect((await stores.catalog.topBrands(5000)).find((entry) => entry.brand === 'Instance Two Brand')?.count).toBe(1);
      expect((await stores.catalog.listStorefrontDocuments({ sort: 'cursor:asc', offset: 0, limit: 1 })).total).toBe(before.listed + 1);
      expect(before.brands.length).toBeGreaterThan(0);
    } finally {
      await other.close();
    }
  });
});
