// `catalog import --kind storefront` ends by writing the storefront index snapshot where serve
// looks for it, so the first start after an import loads the snapshot instead of every row.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { generateStorefrontProducts } from '../../src/catalog/seed/generate-catalog.ts';
import { run } from '../../src/cli/import.ts';
import { IndexedCatalogStore, snapshotsIn } from '../../src/store/indexed-catalog-store.ts';
import { SqliteCatalogStore } from '../../src/store/sqlite/sqlite-catalog-store.ts';
import { SqliteDatabase } from '../../src/store/sqlite/sqlite-database.ts';
import { SqliteKeyStore } from '../../src/store/sqlite/sqlite-key-store.ts';
import { SqliteMonitorStore } from '../../src/store/sqlite/sqlite-monitor-store.ts';

describe('catalog import', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'cli-import-snapshot-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** The store serve would open on `file`, with the snapshot threshold lowered to one product. */
  function storeOn(file: string): { catalog: IndexedCatalogStore; close(): Promise<void> } {
    const database = new SqliteDatabase(file);
    const catalog = new IndexedCatalogStore(new SqliteCatalogStore(database), { snapshots: snapshotsIn(join(dir, 'snapshots')), snapshotMinProducts: 1 });
    return { catalog, close: () => catalog.close() };
  }

  it('writes the storefront index snapshot at its end, which the next start loads', async () => {
    const file = join(dir, 'storefront.ndjson');
    writeFileSync(file, [...generateStorefrontProducts({ products: 400, seed: 'import' })].map((product) => JSON.stringify(product)).join('\n'));
    const database = join(dir, 'catalog.db');
    const code = await run(['--db', `sqlite:${database}`, '--kind', 'storefront', file], {
      openStores: async () => {
        const { catalog, close } = storeOn(database);
        const keysDatabase = new SqliteDatabase(database);
        return { catalog, keys: new SqliteKeyStore(keysDatabase), monitors: new SqliteMonitorStore(keysDatabase), close };
      },
    });
    expect(code).toBe(0);
    expect(readdirSync(join(dir, 'snapshots'))).toHaveLength(1);
    const served = storeOn(database);
    try {
      await served.catalog.warm();
      expect(served.catalog.snapshot).toMatchObject({ loaded: true });
      expect(served.catalog.snapshot.written).toBeUndefined();
      expect((await served.catalog.listStorefrontDocuments({ sort: 'cursor:asc', offset: 0, limit: 1 })).total).toBeGreaterThan(0);
    } finally {
      await served.close();
    }
  });
});
