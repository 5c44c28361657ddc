// PostgresMonitorStore against the PostgreSQL on 127.0.0.1:5432: the shared conformance suite on
// one throw-away database, emptied before each test.
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { buildPriceChange } from '@catalog/contract/testing';
import { priceChangedBody } from '../../src/monitors/monitor.ts';
import type { ComposeDelivery } from '../../src/monitors/monitor-store.ts';
import { silentLogger } from '../../src/logger.ts';
import { migratePostgres } from '../../src/store/postgres/migrate-postgres.ts';
import { POSTGRES_MIGRATIONS } from '../../src/store/postgres/migrations.ts';
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
    await pool.query('TRUNCATE api_keys, monitors, monitor_baselines, monitor_baseline_log, monitor_changes, monitor_deliveries RESTART IDENTITY');
  } catch (error) {
    await pool.end();
    throw error;
  }
  return {
    monitors: opened.monitors,
    keys: opened.keys,
    baselineLogRows: async () => Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM monitor_baseline_log')).rows[0]!.n),
    outboxRows: async () =>
      Number(
        (
          await pool.query<{ n: string }>(
            'SELECT (SELECT count(*) FROM monitor_changes) + (SELECT count(*) FROM monitor_deliveries) + (SELECT count(*) FROM monitor_baselines) + (SELECT count(*) FROM monitor_baseline_log) AS n',
          )
        ).rows[0]!.n,
      ),
    cleanup: async () => {
      await pool.end();
      await opened.close();
    },
  };
});

describe('migratePostgres', () => {
  it("moves each monitor's baselines from its row's JSON to a row each in monitor_baselines", async () => {
    const upgraded = await createTestDatabase();
    const pool = new pg.Pool({ connectionString: upgraded.url() });
    try {
      await migratePostgres(pool, silentLogger, POSTGRES_MIGRATIONS.filter((migration) => migration.version <= 10));
      await pool.query("INSERT INTO api_keys (digest, plan, label, created_at) VALUES ('\\x01', 'pro', 'k', now())");
      await pool.query(
        `INSERT INTO monitors (id, key_digest, url, filter, min_change_percent, min_interval_ms, secret, created_at, baselines)
         VALUES ('mon_a', '\\x01', 'https://h.example/', 'market = "US"', 5, 0, 'whsec_x', 0, '{"v1|marketplacea|US": 12.5, "v2|marketplaceb|UK": 3}'),
                ('mon_b', '\\x01', 'https://h.example/', 'market = "US"', 5, 0, 'whsec_x', 0, '{}')`,
      );
      expect(await migratePostgres(pool, silentLogger)).toEqual([11, 12, 13]);
      const { rows } = await pool.query('SELECT monitor_id, key, price FROM monitor_baselines ORDER BY monitor_id, key');
      expect(rows).toEqual([
        { monitor_id: 'mon_a', key: 'v1|marketplacea|US', price: 12.5 },
        { monitor_id: 'mon_a', key: 'v2|marketplaceb|UK', price: 3 },
      ]);
    } finally {
      await pool.end();
      await upgraded.drop();
    }
  });
});

describe('PostgresMonitorStore.advance beside another transaction', () => {
  it('leaves out a monitor another transaction holds, says so, writes nothing of it and does not wait; writes it once free', async () => {
    const own = await createTestDatabase();
    const opened = await openPostgresStores(own.url(), silentLogger);
    const holder = new pg.Client({ connectionString: own.url() });
    await holder.connect();
    try {
      const key = await opened.keys.createKey('pro', 'monitors');
      const settings = { url: 'https://hooks.example.com/a', filter: 'market = "US"', minChangePercent: 0, minIntervalMs: 0 };
      const [a, b] = [(await opened.monitors.addMonitor(key, settings, 0)).monitor.id, (await opened.monitors.addMonitor(key, settings, 0)).monitor.id];
      const compose: ComposeDelivery = (id, changes, reset, now) => ({ messageId: `msg_${id}_${now}`, body: priceChangedBody(id, changes, reset, now) });
      const update = (id: string) => ({ id, from: 0, to: 1, baselines: { 'v1|marketplacea|US': 110 }, changes: [buildPriceChange({ stream_id: 1 })], reset: false });
      // The holder: a transaction that holds a's row, as the sender does while it records a's delivery.
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM monitors WHERE id = $1 FOR UPDATE', [a]);
      const started = performance.now();
      const advanced = await opened.monitors.advance([update(a), update(b)], 1_000, compose);
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(advanced.stored).toEqual([false, true]);
      expect(advanced.held).toEqual([true, false]);
      const positions = async () => (await opened.monitors.readerStates()).map((state) => [state.id, state.position]).sort();
      expect(await positions()).toEqual([[a, 0], [b, 1]].sort());
      expect(Object.keys((await opened.monitors.baselinesOf([a])).get(a)!)).toEqual([]);
      await holder.query('COMMIT');
      // Given again, as it was: written now.
      const again = await opened.monitors.advance([update(a)], 2_000, compose);
      expect(again.stored).toEqual([true]);
      expect(again.held).toEqual([false]);
      expect(await positions()).toEqual([[a, 1], [b, 1]].sort());
      expect((await opened.monitors.listMonitors()).map((view) => view.delivery.backlog)).toEqual([1, 1]);
    } finally {
      await holder.end();
      await opened.close();
      await own.drop();
    }
  });
});
