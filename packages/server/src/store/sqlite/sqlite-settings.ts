// What every SQLite connection of the service is opened with, the catalog's (sqlite-database.ts,
// its key store, its document readers) and the price log's (prices/sqlite/sqlite-price-log.ts),
// each written once.
import type { DatabaseSync } from 'node:sqlite';

/** How long a statement waits for another connection's write lock before failing (SQLITE_BUSY). */
export const BUSY_TIMEOUT_MS = 5_000;

/** Each connection's page cache, in KiB (`PRAGMA cache_size = -PAGE_CACHE_KIB`; SQLite's own is 2 MiB). */
export const PAGE_CACHE_KIB = 64 * 1024;

/** The catalog's read settings, which its writing connection and its document readers share. */
export function applyCatalogReadSettings(db: DatabaseSync): void {
  db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.exec('PRAGMA temp_store = MEMORY');
  db.exec(`PRAGMA cache_size = -${PAGE_CACHE_KIB}`);
  db.exec('PRAGMA mmap_size = 268435456');
}
