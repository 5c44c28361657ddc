// A bulk load into an empty PostgreSQL catalog: the variant search indexes are dropped for it and
// created again afterwards (or by `catalog migrate` when the load died); a catalog that has
// variants keeps its indexes live. Searches answer the same throughout.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.ts';
import { VARIANT_SEARCH_INDEXES } from '../../src/store/postgres/migrations.ts';
import { migratePostgres } from '../../src/store/postgres/migrate-postgres.ts';
import { PostgresCatalogStore } from '../../src/store/postgres/postgres-catalog-store.ts';
import { runCli } from '../cli/run-cli.ts';
import { buildCatalogProduct } from '@catalog/contract/testing';
import { createTestDatabase, type TestDatabase } from '../support/postgres-test-database.ts';

let database: TestDatabase;
let pool: pg.Pool;
let store: PostgresCatalogStore;

beforeAll(async () => {
  database = await createTestDatabase();
  pool = new pg.Pool({ connectionString: database.url() });
  await migratePostgres(pool, silentLogger);
  store = new PostgresCatalogStore(pool);
});

afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

async function indexes(): Promise<string[]> {
  const { rows } = await pool.query<{ indexname: string }>("SELECT indexname FROM pg_indexes WHERE tablename = 'catalog_variants'");
  return rows.map((row) => row.indexname);
}

describe('bulk loading into PostgreSQL', () => {
  it('drops the variant search indexes for a load into an empty catalog, and creates them again after it', async () => {
    const names = VARIANT_SEARCH_INDEXES.map((index) => index.name);
    expect(await indexes()).toEqual(expect.arrayContaining(names));
    expect(await store.deferIndexes()).toBe(true);
    expect((await indexes()).filter((name) => names.includes(name))).toEqual([]);
    const product = buildCatalogProduct();
    await store.upsertCatalogProducts([product]);
    const variant = product.variants[0]!;
    // Deferred: answered by scanning, the same answer.
    const before = await store.searchVariantDocuments({ gtin: variant.gtin.slice(-6), offset: 0, limit: 10 });
    await store.optimize();
    expect(await indexes()).toEqual(expect.arrayContaining(names));
    const after = await store.searchVariantDocuments({ gtin: variant.gtin.slice(-6), offset: 0, limit: 10 });
    expect(after).toEqual(before);
    expect(after.items.length).toBeGreaterThan(0);
    // A catalog with variants keeps its indexes live.
    expect(await store.deferIndexes()).toBe(false);
    expect(await indexes()).toEqual(expect.arrayContaining(names));
  });

  it('lets catalog migrate create indexes a dead bulk load left dropped', async () => {
    await pool.query('DROP INDEX catalog_variants_gtin_grams');
    const result = await runCli(['migrate', '--db', database.url()]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('created the deferred variant indexes catalog_variants_gtin_grams');
    expect(await indexes()).toContain('catalog_variants_gtin_grams');
  });
});
