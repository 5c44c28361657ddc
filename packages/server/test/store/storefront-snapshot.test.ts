// The storefront index snapshot through IndexedCatalogStore.warm on SQLite: a sound snapshot is
// loaded and caught up with the writes made after it; a corrupt, foreign or stale one is detected
// and the index is built from the engine instead. Every answer is compared with a store that
// never saw a snapshot.
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { IndexedCatalogStore, snapshotsIn } from '../../src/store/indexed-catalog-store.ts';
import { SqliteCatalogStore } from '../../src/store/sqlite/sqlite-catalog-store.ts';
import { SqliteDatabase } from '../../src/store/sqlite/sqlite-database.ts';
import { SNAPSHOT_QUERIES, snapshotProducts } from '../support/storefront-snapshot-cases.ts';

describe('IndexedCatalogStore snapshot', () => {
  let dir: string;
  const open: IndexedCatalogStore[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'storefront-snapshot-'));
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((store) => store.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  function store(file: string, snapshots = true): IndexedCatalogStore {
    const opened = new IndexedCatalogStore(new SqliteCatalogStore(new SqliteDatabase(join(dir, file))), snapshots ? { snapshots: snapshotsIn(join(dir, 'snapshots')), snapshotMinProducts: 1 } : {});
    open.push(opened);
    return opened;
  }

  async function close(closing: IndexedCatalogStore): Promise<void> {
    open.splice(open.indexOf(closing), 1);
    await closing.close();
  }

  /** The answers of a store that never read a snapshot, on the same database. */
  async function answersOf(file: string): Promise<unknown[]> {
    const reference = store(file, false);
    await reference.warm();
    const answers = await Promise.all(SNAPSHOT_QUERIES.map((query) => reference.listStorefrontDocuments(query)));
    await close(reference);
    return answers;
  }

  async function warmedWithSnapshot(file: string): Promise<IndexedCatalogStore> {
    const writer = store(file);
    await writer.warm();
    expect(writer.snapshot.written).toBeDefined();
    await writer.snapshot.written;
    return writer;
  }

  function snapshotFile(): string {
    const [name, ...others] = readdirSync(join(dir, 'snapshots'));
    expect(others).toStrictEqual([]);
    return join(dir, 'snapshots', name!);
  }

  it('loads a snapshot and catches up with the writes made after it', async () => {
    const writer = store('a.db');
    await writer.upsertStorefrontProducts(snapshotProducts(300, 'first'));
    await warmedWithSnapshot('a.db').then(close);
    // After the snapshot: new products and rewrites of old ones (new prices, tags and titles).
    const later = snapshotProducts(40, 'later').map((product, i) => (i < 20 ? { ...snapshotProducts(300, 'first')[i * 7]!, price_min: 1_000 + i, tags: ['COLOR_BLACK'], title: `Black ${i}` } : product));
    await writer.upsertStorefrontProducts(later);
    await close(writer);
    const reader = store('a.db');
    await reader.warm();
    expect(reader.snapshot).toMatchObject({ loaded: true });
    const answers = await Promise.all(SNAPSHOT_QUERIES.map((query) => reader.listStorefrontDocuments(query)));
    expect(answers).toStrictEqual(await answersOf('a.db'));
  });

  it('rebuilds from the engine when the snapshot is corrupt', async () => {
    await store('a.db').upsertStorefrontProducts(snapshotProducts(300, 'first'));
    await warmedWithSnapshot('a.db').then(close);
    const file = snapshotFile();
    const bytes = readFileSync(file);
    bytes[bytes.length - 100]! ^= 0x40;
    writeFileSync(file, bytes);
    const reader = store('a.db');
    await reader.warm();
    expect(reader.snapshot).toMatchObject({ loaded: false, rejected: 'corrupt' });
    expect(await Promise.all(SNAPSHOT_QUERIES.map((query) => reader.listStorefrontDocuments(query)))).toStrictEqual(await answersOf('a.db'));
  });

  it('rebuilds from the engine when the snapshot was taken of another catalog', async () => {
    await store('a.db').upsertStorefrontProducts(snapshotProducts(300, 'first'));
    await warmedWithSnapshot('a.db').then(close);
    const foreign = readFileSync(snapshotFile());
    rmSync(join(dir, 'snapshots'), { recursive: true });
    await store('b.db').upsertStorefrontProducts(snapshotProducts(200, 'second'));
    await warmedWithSnapshot('b.db').then(close);
    // b's own snapshot file now holds a's index.
    writeFileSync(snapshotFile(), foreign);
    const reader = store('b.db');
    await reader.warm();
    expect(reader.snapshot).toMatchObject({ loaded: false, rejected: 'foreign' });
    expect(await Promise.all(SNAPSHOT_QUERIES.map((query) => reader.listStorefrontDocuments(query)))).toStrictEqual(await answersOf('b.db'));
  });

  it('rebuilds from the engine when the catalog is behind the snapshot (restored from a backup)', async () => {
    const writer = store('a.db');
    await writer.upsertStorefrontProducts(snapshotProducts(300, 'first'));
    await close(writer);
    copyFileSync(join(dir, 'a.db'), join(dir, 'backup.db'));
    await store('a.db').upsertStorefrontProducts(snapshotProducts(50, 'later'));
    await warmedWithSnapshot('a.db').then(close);
    for (const file of readdirSync(dir)) if (file.startsWith('a.db')) rmSync(join(dir, file));
    copyFileSync(join(dir, 'backup.db'), join(dir, 'a.db'));
    const reader = store('a.db');
    await reader.warm();
    expect(reader.snapshot).toMatchObject({ loaded: false, rejected: 'stale' });
    const answers = await Promise.all(SNAPSHOT_QUERIES.map((query) => reader.listStorefrontDocuments(query)));
    expect(answers[0]).toMatchObject({ total: 300 });
    expect(answers).toStrictEqual(await answersOf('a.db'));
  });
});
