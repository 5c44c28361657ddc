// Opens the catalog and key stores named by a database URL: `sqlite:<path>` (parent directories
// are created, migrations applied) or `postgres://` / `postgresql://` (the PostgreSQL adapter,
// loaded only when asked for so SQLite users never load the driver).
import { resolve } from 'node:path';
import type { Logger } from '../logger.ts';
import type { CatalogStore } from './catalog-store.ts';
import type { KeyStore } from './key-store.ts';
import { SqliteCatalogStore } from './sqlite/sqlite-catalog-store.ts';
import { SqliteDatabase } from './sqlite/sqlite-database.ts';
import { SqliteKeyStore } from './sqlite/sqlite-key-store.ts';

export interface CatalogStores {
  catalog: CatalogStore;
  keys: KeyStore;
  close(): Promise<void>;
}

interface PostgresModule {
  openPostgresStores(url: string, logger: Logger): Promise<CatalogStores>;
}

// A variable specifier keeps this module compiling before the PostgreSQL adapter exists.
const POSTGRES_MODULE = './postgres/open-postgres-stores.ts';

/** The SQLite file path of a `sqlite:` URL (`sqlite:./data/catalog.db`, `sqlite:///abs/path.db`, `sqlite::memory:`). */
export function sqlitePath(url: string): string {
  let rest = url.slice('sqlite:'.length);
  if (rest === ':memory:') return rest;
  if (rest.startsWith('//')) rest = rest.slice(2);
  if (rest === '') throw new Error(`"${url}" names no database file; use sqlite:<path>`);
  return resolve(rest);
}

export async function openCatalogStores(url: string, logger: Logger): Promise<CatalogStores> {
  if (url.startsWith('sqlite:')) {
    const path = sqlitePath(url);
    const database = new SqliteDatabase(path);
    logger.debug('opened SQLite catalog', { path });
    const catalog = new SqliteCatalogStore(database);
    return {
      catalog,
      keys: new SqliteKeyStore(database),
      close: () => catalog.close(),
    };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    let loaded: PostgresModule;
    try {
      loaded = (await import(POSTGRES_MODULE)) as PostgresModule;
    } catch (error) {
      throw new Error('PostgreSQL support is not available in this build (src/store/postgres is missing).', {
        cause: error,
      });
    }
    return loaded.openPostgresStores(url, logger);
  }
  throw new Error(`unsupported database URL "${url}"; use sqlite:<path> or postgres://…`);
}
