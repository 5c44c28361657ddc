import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDatabase } from '../../src/store/sqlite/sqlite-database.ts';
import { SqliteKeyStore } from '../../src/store/sqlite/sqlite-key-store.ts';
import { SqliteMonitorStore } from '../../src/store/sqlite/sqlite-monitor-store.ts';
import { describeMonitorStoreConformance } from './monitor-store.suite.ts';

describeMonitorStoreConformance('SqliteMonitorStore', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'monitor-store-'));
  const database = new SqliteDatabase(join(dir, 'catalog.db'));
  return {
    monitors: new SqliteMonitorStore(database),
    keys: new SqliteKeyStore(database),
    cleanup: async () => {
      database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
