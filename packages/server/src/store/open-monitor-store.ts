// Opens only the monitor store a database URL names, for the monitors' delivery thread
// (monitor-thread.ts): on SQLite without loading the catalog's modules (open-store.ts), which that
// thread never uses; PostgreSQL through openCatalogStores, loaded only then.
import type { Logger } from '../logger.ts';
import type { MonitorStore } from '../monitors/monitor-store.ts';
import { sqlitePath } from '../storage-url.ts';
import { SqliteDatabase } from './sqlite/sqlite-database.ts';
import { SqliteMonitorStore } from './sqlite/sqlite-monitor-store.ts';

/** `oneWriter`: the engine takes one write at a time over all its connections (SQLite). */
export async function openMonitorStore(url: string, logger: Logger): Promise<{ monitors: MonitorStore; oneWriter: boolean; close(): Promise<void> }> {
  if (url.startsWith('sqlite:')) {
    const database = new SqliteDatabase(sqlitePath(url));
    return { monitors: new SqliteMonitorStore(database), oneWriter: true, close: async () => database.close() };
  }
  const { openCatalogStores } = await import('./open-store.ts');
  const { monitors, close } = await openCatalogStores(url, logger);
  return { monitors, oneWriter: false, close };
}
