// PostgresMonitorStore against the PostgreSQL on 127.0.0.1:5432: the shared conformance suite on
// one throw-away database, emptied before each test.
import pg from 'pg';
import { afterAll } from 'vitest';
import { silentLogger } from '../../src/logger.ts';
import { openPostgresStores } from '../../src/store/postgres/open-postgres-stores.ts';
import { createTestDatabase, type TestDatabase } from '../support/postgres-test-database.ts';
import { describeMonitorStoreConformance } from './monitor-store.suite.ts';

let database: TestDatabase | undefined;
afterAll(async () => {
  await database?.drop();
});

describeMonitorStoreConformance('PostgresMonitorStore', async () => {
  database ??= await createTestDatabase();
  const opened = await openPostgresStores(database.url(), silentLogger);
  const pool = new pg.Pool({ connectionString: database.url(), max: 1 });
  try {
    await pool.query('TRUNCATE api_keys, monitors, monitor_changes, monitor_deliveries RESTART IDENTITY');
  } finally {
    await pool.end();
  }
  return { monitors: opened.monitors, keys: opened.keys, cleanup: () => opened.close() };
});
