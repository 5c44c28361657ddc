// Opens the catalog and key stores on one PostgreSQL pool for a `postgres://` URL, applying any
// pending migration first. Rejects with ServiceUnavailable when the database cannot be reached.
import { gaugeReading } from '../../metrics.ts';
import type { Logger } from '../../logger.ts';
import type { CatalogStore } from '../../catalog/catalog-store.ts';
import type { KeyAdministration } from '../key-store.ts';
import type { MonitorStore } from '../../monitors/monitor-store.ts';
import { migratePostgres } from './migrate-postgres.ts';
import { createPgPool, unavailableOnOutage } from './pg-pool.ts';
import { IndexedCatalogStore, snapshotPlaces } from '../indexed-catalog-store.ts';
import { PostgresCatalogStore } from './postgres-catalog-store.ts';
import { PostgresKeyStore } from './postgres-key-store.ts';
import { PostgresMonitorStore } from './postgres-monitor-store.ts';

export interface PostgresStores {
  catalog: CatalogStore;
  keys: KeyAdministration;
  monitors: MonitorStore;
  close(): Promise<void>;
}

export function isPostgresUrl(url: string): boolean {
  return url.startsWith('postgres://') || url.startsWith('postgresql://');
}

/** `indexSnapshotDir` as openCatalogStores takes it (`default`: the snapshot lives in the database). */
export async function openPostgresStores(url: string, logger: Logger, indexSnapshotDir?: string): Promise<PostgresStores> {
  const log = logger.child({ component: 'postgres' });
  const pool = createPgPool(url, log);
  try {
    const applied = await unavailableOnOutage('catalog database', () => migratePostgres(pool, log));
    log.debug('PostgreSQL stores opened', { migrationsApplied: applied });
  } catch (error) {
    await pool.end().catch(() => {});
    throw error;
  }
  gaugeReading('catalog_db_pool_connections', 'PostgreSQL pool connections: open, idle, and requests waiting for one.', ['state'], () => ({
    total: pool.totalCount,
    idle: pool.idleCount,
    waiting: pool.waitingCount,
  }));
  // The catalog store owns the pool: closing either it or the pair ends every connection.
  const catalog = new PostgresCatalogStore(pool, { ownsPool: true });
  const indexOptions = snapshotPlaces(indexSnapshotDir, undefined, (identity) => catalog.storefrontSnapshotPlace(identity));
  return { catalog: new IndexedCatalogStore(catalog, indexOptions), keys: new PostgresKeyStore(pool), monitors: new PostgresMonitorStore(pool), close: () => catalog.close() };
}
