// The storefront index snapshot held in the PostgreSQL database (migration 9): an instance with no
// local files loads the snapshot another instance wrote and catches up with the writes made after
// it; a corrupt, foreign or stale snapshot is detected and the index is built from the rows
// instead. Every answer is compared with a store that never read a snapshot. Each test has a
// database of its own.
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.ts';
import { IndexedCatalogStore } from '../../src/store/indexed-catalog-store.ts';
import { migratePostgres } from '../../src/store/postgres/migrate-postgres.ts';
import { createPgPool } from '../../src/store/postgres/pg-pool.ts';
import { PostgresCatalogStore } from '../../src/store/postgres/postgres-catalog-store.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres-test-database.ts';
import { SNAPSHOT_QUERIES, snapshotProducts } from '../support/storefront-snapshot-cases.ts';

describe('IndexedCatalogStore snapshot in PostgreSQL', () => {
  const databases: TestDatabase[] = [];
  const open: IndexedCatalogStore[] = [];
  const clients: pg.Client[] = [];
  let database: TestDatabase;
  beforeEach(async () => {
    database = await createTestDatabase();
    databases.push(database);
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((store) => store.close()));
    await Promise.all(clients.splice(0).map((client) => client.end()));
    await Promise.all(databases.splice(0).map((each) => each.drop()));
  });

  /** An instance of the service on `on`: its own pool and index, the snapshot in the database. */
  async function instance(on: TestDatabase = database, snapshots = true): Promise<IndexedCatalogStore> {
    const pool = createPgPool(on.url(), silentLogger);
    await migratePostgres(pool, silentLogger);
    const engine = new PostgresCatalogStore(pool, { ownsPool: true });
    const opened = new IndexedCatalogStore(engine, snapshots ? { snapshots: (catalog) => engine.storefrontSnapshotPlace(catalog), snapshotMinProducts: 1 } : {});
    open.push(opened);
    return opened;
  }

  async function sql(on: TestDatabase): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: on.url() });
    await client.connect();
    clients.push(client);
    return client;
  }

  async function close(closing: IndexedCatalogStore): Promise<void> {
    open.splice(open.indexOf(closing), 1);
    await closing.close();
  }

  async function answersOf(on: TestDatabase): Promise<unknown[]> {
    const reference = await instance(on, false);
    await reference.warm();
    const answers = await Promise.all(SNAPSHOT_QUERIES.map((query) => reference.listStorefrontDocuments(query)));
    await close(reference);
    return answers;
  }

  async function writeSnapshot(on: TestDatabase = database): Promise<void> {
    const writer = await instance(on);
    await writer.warm({ untilSnapshotWritten: true });
    expect(writer.snapshot.written).toBeDefined();
    await close(writer);
  }

  it('loads the snapshot another instance wrote and catches up with the writes made after it', async () => {
    const writer = await instance();
    await writer.upsertStorefrontProducts(snapshotProducts(300, 'first'));
    await writeSnapshot();
    const later = snapshotProducts(40, 'later').map((product, i) => (i < 20 ? { ...snapshotProducts(300, 'first')[i * 7]!, price_min: 1_000 + i, tags: ['COLOR_BLACK'], title: `Black ${i}` } : product));
    await writer.upsertStorefrontProducts(later);
    const reader = await instance();
    await reader.warm();
    expect(reader.snapshot).toMatchObject({ loaded: true });
    expect(await Promise.all(SNAPSHOT_QUERIES.map((query) => reader.listStorefrontDocuments(query)))).toStrictEqual(await answersOf(database));
  });

  it('builds from the rows when the database holds no snapshot', async () => {
    await (await instance()).upsertStorefrontProducts(snapshotProducts(100, 'first'));
    const reader = await instance();
    await reader.warm();
    expect(reader.snapshot).toMatchObject({ loaded: false, rejected: 'missing' });
  });

  it('rebuilds from the rows when the snapshot is corrupt', async () => {
    await (await instance()).upsertStorefrontProducts(snapshotProducts(300, 'first'));
    await writeSnapshot();
    const client = await sql(database);
    // One bit of the last part's last bytes flipped.
    await client.query(`UPDATE storefront_index_snapshot SET bytes = set_byte(bytes, length(bytes) - 100, get_byte(bytes, length(bytes) - 100) # 64)
      WHERE part = (SELECT max(part) FROM storefront_index_snapshot)`);
    const reader = await instance();
    await reader.warm();
    expect(reader.snapshot).toMatchObject({ loaded: false, rejected: 'corrupt' });
    expect(await Promise.all(SNAPSHOT_QUERIES.map((query) => reader.listStorefrontDocuments(query)))).toStrictEqual(await answersOf(database));
  });

  it('rebuilds from the rows when the snapshot was taken of another catalog', async () => {
    await (await instance()).upsertStorefrontProducts(snapshotProducts(300, 'first'));
    await writeSnapshot();
    const other = await createTestDatabase();
    databases.push(other);
    await (await instance(other)).upsertStorefrontProducts(snapshotProducts(200, 'second'));
    await writeSnapshot(other);
    // The other database's snapshot row now holds this one's bytes.
    const { rows } = await (await sql(database)).query<{ bytes: Buffer }>('SELECT bytes FROM storefront_index_snapshot ORDER BY part');
    const target = await sql(other);
    const { rows: keys } = await target.query<{ catalog: string }>('SELECT DISTINCT catalog FROM storefront_index_snapshot');
    await target.query('DELETE FROM storefront_index_snapshot');
    for (const [part, row] of rows.entries()) await target.query('INSERT INTO storefront_index_snapshot (catalog, part, bytes) VALUES ($1, $2, $3)', [keys[0]!.catalog, part, row.bytes]);
    const reader = await instance(other);
    await reader.warm();
    expect(reader.snapshot).toMatchObject({ loaded: false, rejected: 'foreign' });
    expect(await Promise.all(SNAPSHOT_QUERIES.map((query) => reader.listStorefrontDocuments(query)))).toStrictEqual(await answersOf(other));
  });

  it('rebuilds from the rows when the catalog is behind the snapshot (restored from a backup)', async () => {
    const writer = await instance();
    await writer.upsertStorefrontProducts(snapshotProducts(300, 'first'));
    await writer.upsertStorefrontProducts(snapshotProducts(50, 'later'));
    await writeSnapshot();
    // The later write undone, as a restore of a backup taken before it would.
    await (await sql(database)).query('DELETE FROM storefront_products WHERE change_seq = (SELECT max(change_seq) FROM storefront_products)');
    const reader = await instance();
    await reader.warm();
    expect(reader.snapshot).toMatchObject({ loaded: false, rejected: 'stale' });
    const answers = await Promise.all(SNAPSHOT_QUERIES.map((query) => reader.listStorefrontDocuments(query)));
    expect(answers[0]).toMatchObject({ total: 300 });
    expect(answers).toStrictEqual(await answersOf(database));
  });
});
