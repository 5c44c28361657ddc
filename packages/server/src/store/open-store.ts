// Opens the catalog and key stores named by a database URL: `sqlite:<path>` (parent directories
// are created, migrations applied) or `postgres://` / `postgresql://` (the PostgreSQL adapter,
// loaded only when asked for so SQLite users never load the driver).
import type { Logger } from '../logger.ts';
import type { CatalogStore } from '../catalog/catalog-store.ts';
import type { KeyAdministration, KeyStore } from './key-store.ts';
import type { MonitorStore } from '../monitors/monitor-store.ts';
import { IndexedCatalogStore, snapshotPlaces } from './indexed-catalog-store.ts';
import { SqliteCatalogStore } from './sqlite/sqlite-catalog-store.ts';
import { SqliteDatabase } from './sqlite/sqlite-database.ts';
import { SqliteKeyStore } from './sqlite/sqlite-key-store.ts';
import { SqliteMonitorStore } from './sqlite/sqlite-monitor-store.ts';
import { sqlitePath } from '../storage-url.ts';

export interface CatalogStores {
  catalog: CatalogStore;
  keys: KeyAdministration;
  /** The price monitors and their outbox, in the same database as the keys they belong to. */
  monitors: MonitorStore;
  close(): Promise<void>;
}

export interface OpenOptions {
  /**
   * Where the storefront index snapshot lives: a directory, `default` (beside a SQLite catalog;
   * in the database for PostgreSQL, so every instance shares it), or `none` (the default: only
   * serve, import and seed warm the index).
   */
  indexSnapshotDir?: string;
  /**
   * Threads that read storefront pages' documents from a SQLite catalog file (document-readers.ts);
   * 0 (the default), or a `:memory:` database: the calling thread reads them. PostgreSQL ignores it.
   */
  documentReaders?: number;
}

export async function openCatalogStores(url: string, logger: Logger, options: OpenOptions = {}): Promise<CatalogStores> {
  if (url.startsWith('sqlite:')) {
    const path = sqlitePath(url);
    const database = new SqliteDatabase(path);
    logger.debug('opened SQLite catalog', { path });
    const catalog = new SqliteCatalogStore(database, { count: options.documentReaders ?? 0, logger });
    if (!catalog.indexesLive()) {
      logger.warn('the GTIN index is deferred: a bulk load is running or did not finish; GTIN searches scan every variant until it ends or `catalog migrate` rebuilds the index', { path });
    }
    return {
      catalog: new IndexedCatalogStore(catalog, snapshotPlaces(options.indexSnapshotDir, path)),
      keys: new SqliteKeyStore(database),
      monitors: new SqliteMonitorStore(database),
      close: () => catalog.close(),
    };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    // Loaded on demand so that embedded (SQLite) users never load the pg driver.
    const { openPostgresStores } = await import('./postgres/open-postgres-stores.ts');
    return openPostgresStores(url, logger, options.indexSnapshotDir);
  }
  throw new Error(`unsupported database URL "${url}"; use sqlite:<path> or postgres://…`);
}

/** Only the key store a database URL names, for a process or thread that serves no catalog. */
export async function openKeyStore(url: string, logger: Logger): Promise<{ keys: KeyStore; close(): Promise<void> }> {
  if (url.startsWith('sqlite:')) {
    const database = new SqliteDatabase(sqlitePath(url));
    return { keys: new SqliteKeyStore(database), close: async () => database.close() };
  }
  const { keys, close } = await openCatalogStores(url, logger);
  return { keys, close };
}
