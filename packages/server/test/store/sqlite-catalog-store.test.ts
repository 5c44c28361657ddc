import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../src/logger.ts';
import { IndexedCatalogStore } from '../../src/store/indexed-catalog-store.ts';
import { openCatalogStores } from '../../src/store/open-store.ts';
import { LATEST_SCHEMA_VERSION, migrateSqlite } from '../../src/store/sqlite/migrations.ts';
import { DATA_VERSION_RECHECK_MS } from '../../src/store/sqlite/sqlite-database.ts';
import { VARIANT_TEXT, VARIANTS_WITH_PRODUCTS } from '../../src/store/sqlite/sqlite-gtin-index.ts';
import type { SqliteCatalogStore } from '../../src/store/sqlite/sqlite-catalog-store.ts';
import { buildCatalogProduct, buildCatalogVariant, buildStorefrontProductInput } from '@catalog/contract/testing';
import { describeCatalogStoreConformance } from './catalog-store.suite.ts';
import { readVariantPage } from '../support/read-product.ts';

const root = mkdtempSync(join(tmpdir(), 'sqlite-catalog-store-'));
let counter = 0;
afterAll(() => rmSync(root, { recursive: true, force: true }));

function freshUrl(): string {
  counter += 1;
  return `sqlite:${join(root, `nested-${counter}`, 'catalog.db')}`;
}

// With a document reader thread, as `catalog serve` opens it: storefront pages come from that thread.
describeCatalogStoreConformance('SqliteCatalogStore', async () => {
  const stores = await openCatalogStores(freshUrl(), silentLogger, { documentReaders: 1 });
  return { catalog: stores.catalog, keys: stores.keys, cleanup: () => stores.close() };
});

describe('SqliteCatalogStore', () => {
  it('records each migration once in schema_migrations', () => {
    const db = new DatabaseSync(':memory:');
    expect(migrateSqlite(db).applied).toStrictEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(migrateSqlite(db).applied).toStrictEqual([]);
    const rows = db.prepare('SELECT version FROM schema_migrations').all();
    expect(rows.map((row) => row.version)).toStrictEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, LATEST_SCHEMA_VERSION]);
    db.close();
  });

  it('shows a product re-imported by another connection within the recheck window, despite the document cache', async () => {
    const url = freshUrl();
    const server = await openCatalogStores(url, silentLogger);
    const importer = await openCatalogStores(url, silentLogger);
    const afterRecheck = () => new Promise((resolve) => setTimeout(resolve, DATA_VERSION_RECHECK_MS + 1));
    try {
      const product = buildCatalogProduct({ title: 'Before' });
      await importer.catalog.upsertCatalogProducts([product]);
      expect(JSON.parse((await server.catalog.getProductDocument(product.slug))!)).toMatchObject({ title: 'Before' });
      await importer.catalog.upsertCatalogProducts([{ ...product, title: 'After' }]);
      await afterRecheck();
      expect(JSON.parse((await server.catalog.getProductDocument(product.slug))!)).toMatchObject({ title: 'After' });
      expect(await server.catalog.getProductDocument('imported-later')).toBeNull();
      await importer.catalog.upsertCatalogProducts([buildCatalogProduct({ slug: 'imported-later' })]);
      await afterRecheck();
      expect(await server.catalog.getProductDocument('imported-later')).not.toBeNull();
    } finally {
      await Promise.all([server.close(), importer.close()]);
    }
  });

  it('answers listings while a large import by another connection is applied page by page, and shows all of it once applied', async () => {
    const url = freshUrl();
    const server = await openCatalogStores(url, silentLogger);
    const importer = await openCatalogStores(url, silentLogger);
    const total = async () => (await server.catalog.listStorefrontDocuments({ sort: 'cursor:asc', offset: 0, limit: 1 })).total;
    try {
      await importer.catalog.upsertStorefrontProducts(Array.from({ length: 10 }, () => buildStorefrontProductInput()));
      expect(await total()).toBe(10);
      await importer.catalog.upsertStorefrontProducts(Array.from({ length: 5_000 }, () => buildStorefrontProductInput()));
      await new Promise((resolve) => setTimeout(resolve, DATA_VERSION_RECHECK_MS + 1));
      // The first read after the import waits for one page of it, not for all of it.
      const first = await total();
      expect(first).toBeGreaterThan(10);
      expect(first).toBeLessThan(5_010);
      await vi.waitFor(async () => expect(await total()).toBe(5_010));
    } finally {
      await Promise.all([server.close(), importer.close()]);
    }
  });

  it('serves repeated result pages from memory until another connection imports', async () => {
    const url = freshUrl();
    const server = await openCatalogStores(url, silentLogger);
    const importer = await openCatalogStores(url, silentLogger);
    try {
      const product = buildCatalogProduct({ sku: 'CACHE-1' });
      await importer.catalog.upsertCatalogProducts([product]);
      await importer.catalog.upsertStorefrontProducts([buildStorefrontProductInput({ shop_name: 'cached-shop' })]);
      const variants = { sku: 'CACHE-1', offset: 0, limit: 10 };
      const listing = { shopName: 'cached-shop', sort: 'cursor:asc', offset: 0, limit: 10 } as const;
      // Kept from its second read on: a one-off query does not take a place in memory.
      const first = await server.catalog.searchVariantDocuments(variants);
      const second = await server.catalog.searchVariantDocuments(variants);
      expect(second).not.toBe(first);
      expect(await server.catalog.searchVariantDocuments(variants)).toBe(second);
      expect((await server.catalog.listStorefrontDocuments(listing)).total).toBe(1);

      await importer.catalog.upsertCatalogProducts([{ ...product, variants: product.variants.slice(1) }]);
      await importer.catalog.upsertStorefrontProducts([buildStorefrontProductInput({ shop_name: 'cached-shop' })]);
      await new Promise((resolve) => setTimeout(resolve, DATA_VERSION_RECHECK_MS + 1));
      expect((await server.catalog.searchVariantDocuments(variants)).total).toBe(product.variants.length - 1);
      expect((await server.catalog.listStorefrontDocuments(listing)).total).toBe(2);
    } finally {
      await Promise.all([server.close(), importer.close()]);
    }
  });

  it('answers a rare GTIN fragment from the suffix index, never a full scan', async () => {
    const url = freshUrl();
    const stores = await openCatalogStores(url, silentLogger);
    await stores.catalog.upsertCatalogProducts([buildCatalogProduct()]);
    await stores.close();
    const db = new DatabaseSync(url.slice('sqlite:'.length));
    const explain = (sql: string, ...params: (string | number)[]): string[] =>
      db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params).map((row) => String(row.detail));
    const page = explain(
      `SELECT ${VARIANT_TEXT} AS variant FROM ${VARIANTS_WITH_PRODUCTS}
       WHERE v.pk IN (SELECT variant_pk FROM catalog_gtin_suffixes WHERE suffix >= ?1 AND suffix < ?2)
       ORDER BY v.pk LIMIT ?3 OFFSET ?4`,
      '5866123',
      '5866124',
      10,
      0,
    );
    const count = explain('SELECT count(DISTINCT variant_pk) AS n FROM catalog_gtin_suffixes WHERE suffix >= ? AND suffix < ?', '5866123', '5866124');
    db.close();
    expect(page).toContainEqual(expect.stringMatching(/SEARCH catalog_gtin_suffixes USING PRIMARY KEY \(suffix>\? AND suffix<\?\)/u));
    expect(page).toContainEqual(expect.stringMatching(/^SEARCH v USING INTEGER PRIMARY KEY/u));
    expect(page).toContainEqual(expect.stringMatching(/^SEARCH p USING INTEGER PRIMARY KEY/u));
    expect(count).toContainEqual(expect.stringMatching(/SEARCH catalog_gtin_suffixes USING PRIMARY KEY \(suffix>\? AND suffix<\?\)/u));
    for (const lines of [page, count]) expect(lines).not.toContainEqual(expect.stringMatching(/^SCAN/u));
  });

  it('keeps fragment counts exact through deferral, rebuild and re-imports', async () => {
    const url = freshUrl();
    const stores = await openCatalogStores(url, silentLogger);
    const catalog = stores.catalog;
    const engine = (stores.catalog as IndexedCatalogStore).engine as SqliteCatalogStore;
    const gtins = ['00195866123456', '0195866120001', '4012345678901', '12121212'];
    const product = buildCatalogProduct({ variants: gtins.map((gtin, i) => buildCatalogVariant({ gtin, sku: `DEFER-${i}` })) });
    const totals = async (): Promise<number[]> =>
      Promise.all(['1958', '58661', '195866', '1212', '121212', '12121212', '0000'].map(async (gtin) => (await readVariantPage(catalog, { gtin, offset: 0, limit: 1 })).total));
    const bySku = async (): Promise<number> => (await readVariantPage(catalog, { sku: 'defer-1', offset: 0, limit: 10 })).total;

    // An empty catalog defers; searches scan meanwhile, still exact.
    expect(await engine.deferIndexes()).toBe(true);
    expect(engine.indexesLive()).toBe(false);
    await catalog.upsertCatalogProducts([product]);
    expect(await totals()).toStrictEqual([2, 2, 2, 1, 1, 1, 0]);
    expect(await bySku()).toBe(1);
    expect(await catalog.countGtins()).toBe(4);
    await engine.optimize();
    expect(engine.indexesLive()).toBe(true);
    expect(await totals()).toStrictEqual([2, 2, 2, 1, 1, 1, 0]);
    expect(await bySku()).toBe(1);

    // A catalog with variants keeps its indexes live and up to date row by row.
    expect(await engine.deferIndexes()).toBe(false);
    expect(engine.indexesLive()).toBe(true);
    await catalog.upsertCatalogProducts([{ ...product, variants: product.variants.slice(1) }]);
    expect(await totals()).toStrictEqual([1, 1, 1, 1, 1, 1, 0]);
    await catalog.upsertCatalogProducts([buildCatalogProduct({ variants: [buildCatalogVariant({ gtin: '0019580000000' })] })]);
    expect(await totals()).toStrictEqual([2, 1, 1, 1, 1, 1, 1]);
    await engine.optimize();
    expect(await totals()).toStrictEqual([2, 1, 1, 1, 1, 1, 1]);
    expect(await bySku()).toBe(1);
    expect(await catalog.countGtins()).toBe(4);
    await stores.close();
  });

  it('pages a common fragment in variant order whichever plan it takes', async () => {
    const stores = await openCatalogStores(freshUrl(), silentLogger);
    const catalog = stores.catalog;
    // 60 variants; "0042" is in all of them, "7777" in every third one (both dense: scanned in
    // variant order), "5555" in three (sparse: read from the suffix range).
    const products = Array.from({ length: 6 }, (_, p) =>
      buildCatalogProduct({
        variants: Array.from({ length: 10 }, (_, v) => {
          const n = p * 10 + v;
          const middle = n % 20 === 7 ? '5555' : n % 3 === 0 ? '7777' : '1000';
          return buildCatalogVariant({ gtin: `0042${middle}${String(n).padStart(5, '0')}` });
        }),
      }),
    );
    await catalog.upsertCatalogProducts(products);
    for (const [fragment, expected] of [['0042', 60], ['7777', 19], ['00427777', 19], ['5555', 3]] as const) {
      const seen: string[] = [];
      for (let offset = 0; offset < expected + 7; offset += 7) {
        const page = await readVariantPage(catalog, { gtin: fragment, offset, limit: 7 });
        expect(page.total).toBe(expected);
        seen.push(...page.items.map((variant) => variant.gtin));
      }
      const all = products.flatMap((product) => product.variants.map((variant) => variant.gtin)).filter((gtin) => gtin.includes(fragment));
      expect(seen).toStrictEqual(all);
    }
    await stores.close();
  });

  it('pages and counts after a deep cursor through an index range, without sorting', async () => {
    const url = freshUrl();
    const stores = await openCatalogStores(url, silentLogger);
    await stores.close();
    const db = new DatabaseSync(url.slice('sqlite:'.length));
    const plan = db
      .prepare(
        `EXPLAIN QUERY PLAN SELECT d.doc FROM storefront_products p JOIN storefront_documents d ON d.cursor = p.cursor
         WHERE p.cursor > ?1 ORDER BY p.cursor ASC LIMIT ?2 OFFSET ?3`,
      )
      .all(17000000000001024n, 10, 0)
      .map((row) => String(row.detail));
    const count = db
      .prepare('EXPLAIN QUERY PLAN SELECT count(*) AS n FROM storefront_products p WHERE p.cursor > ?1')
      .all(17000000000001024n)
      .map((row) => String(row.detail));
    db.close();
    for (const lines of [plan, count]) {
      expect(lines).toContainEqual(expect.stringMatching(/^SEARCH p USING .*\((rowid|cursor)>\?\)/u));
      expect(lines).not.toContainEqual(expect.stringMatching(/^SCAN p\b/u));
      expect(lines).not.toContainEqual(expect.stringMatching(/TEMP B-TREE/u));
    }
  });
});
