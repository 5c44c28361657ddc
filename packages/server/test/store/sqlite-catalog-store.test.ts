import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.ts';
import { openCatalogStores } from '../../src/store/open-store.ts';
import { LATEST_SCHEMA_VERSION, migrateSqlite } from '../../src/store/sqlite/migrations.ts';
import { buildCatalogProduct } from '../support/builders.ts';
import { describeCatalogStoreConformance } from './catalog-store.suite.ts';

const root = mkdtempSync(join(tmpdir(), 'sqlite-catalog-store-'));
let counter = 0;
afterAll(() => rmSync(root, { recursive: true, force: true }));

function freshUrl(): string {
  counter += 1;
  return `sqlite:${join(root, `nested-${counter}`, 'catalog.db')}`;
}

describeCatalogStoreConformance('SqliteCatalogStore', async () => {
  const stores = await openCatalogStores(freshUrl(), silentLogger);
  return { catalog: stores.catalog, keys: stores.keys, cleanup: () => stores.close() };
});

describe('SqliteCatalogStore', () => {
  it('records each migration once in schema_migrations', () => {
    const db = new DatabaseSync(':memory:');
    expect(migrateSqlite(db).applied).toStrictEqual([1, 2]);
    expect(migrateSqlite(db).applied).toStrictEqual([]);
    const rows = db.prepare('SELECT version FROM schema_migrations').all();
    expect(rows.map((row) => row.version)).toStrictEqual([1, LATEST_SCHEMA_VERSION]);
    db.close();
  });

  it('shows a product re-imported by another process at once, despite the document cache', async () => {
    const url = freshUrl();
    const server = await openCatalogStores(url, silentLogger);
    const importer = await openCatalogStores(url, silentLogger);
    try {
      const product = buildCatalogProduct({ title: 'Before' });
      await importer.catalog.upsertCatalogProducts([product]);
      expect(JSON.parse((await server.catalog.getProductDocument(product.slug))!)).toMatchObject({ title: 'Before' });
      await importer.catalog.upsertCatalogProducts([{ ...product, title: 'After' }]);
      expect(JSON.parse((await server.catalog.getProductDocument(product.slug))!)).toMatchObject({ title: 'After' });
      expect(await server.catalog.getProductDocument('imported-later')).toBeNull();
      await importer.catalog.upsertCatalogProducts([buildCatalogProduct({ slug: 'imported-later' })]);
      expect(await server.catalog.getProductDocument('imported-later')).not.toBeNull();
    } finally {
      await Promise.all([server.close(), importer.close()]);
    }
  });

  it('answers GTIN substrings from the trigram index, never a full scan', async () => {
    const url = freshUrl();
    const stores = await openCatalogStores(url, silentLogger);
    await stores.catalog.upsertCatalogProducts([buildCatalogProduct()]);
    await stores.close();
    const db = new DatabaseSync(url.slice('sqlite:'.length));
    const plan = db
      .prepare(
        'EXPLAIN QUERY PLAN SELECT v.product_pk, v.position FROM catalog_variants v WHERE v.pk IN (SELECT rowid FROM catalog_variants_gtin WHERE catalog_variants_gtin MATCH ?1) AND instr(v.gtin, ?2) > 0 ORDER BY v.pk LIMIT ?3 OFFSET ?4',
      )
      .all('"66123"', '5866123', 10, 0)
      .map((row) => String(row.detail));
    db.close();
    expect(plan.some((detail) => /VIRTUAL TABLE INDEX/u.test(detail))).toBe(true);
    expect(plan.some((detail) => /^SCAN v\b/u.test(detail))).toBe(false);
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
