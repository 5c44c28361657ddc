import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDatabase } from '../../src/store/sqlite/sqlite-database.ts';
import { SqliteKeyStore } from '../../src/store/sqlite/sqlite-key-store.ts';
import { SqliteMonitorStore } from '../../src/store/sqlite/sqlite-monitor-store.ts';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { buildPriceChange } from '@catalog/contract/testing';
import { ServiceUnavailable } from '../../src/catalog/errors.ts';
import { priceChangedBody } from '../../src/monitors/monitor.ts';
import type { ComposeDelivery } from '../../src/monitors/monitor-store.ts';
import { describeMonitorStoreConformance } from './monitor-store.suite.ts';

describeMonitorStoreConformance('SqliteMonitorStore', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'monitor-store-'));
  const database = new SqliteDatabase(join(dir, 'catalog.db'));
  return {
    monitors: new SqliteMonitorStore(database),
    keys: new SqliteKeyStore(database),
    baselineLogRows: async () => (database.connection().prepare('SELECT count(*) AS n FROM monitor_baseline_log').get() as { n: number }).n,
    outboxRows: async () =>
      (
        database
          .connection()
          .prepare('SELECT (SELECT count(*) FROM monitor_changes) + (SELECT count(*) FROM monitor_deliveries) + (SELECT count(*) FROM monitor_baselines) + (SELECT count(*) FROM monitor_baseline_log) AS n')
          .get() as { n: number }
      ).n,
    cleanup: async () => {
      database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});


const compose: ComposeDelivery = (id, changes, reset, now) => ({ messageId: `msg_${randomBytes(4).toString('hex')}`, body: priceChangedBody(id, changes, reset, now) });
describe('SqliteMonitorStore', () => {
  it("moves the filters of a file made before migration 9 into their own table, and keeps every monitor's", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'monitor-store-migrate-'));
    const path = join(dir, 'catalog.db');
    try {
      const first = new SqliteDatabase(path);
      const key = await new SqliteKeyStore(first).createKey('pro');
      const filters = ['product_id IN ["a", "b"] AND market = "US"', 'market = "GB"'];
      const ids = [];
      for (const filter of filters) ids.push((await new SqliteMonitorStore(first).addMonitor(key, { url: 'https://hooks.example.com/a', filter, minChangePercent: 5, minIntervalMs: 0 }, 7)).monitor.id);
      first.close();
      // The file as migration 8 left it: the filter in the monitor's row.
      const old = new DatabaseSync(path);
      old.exec(`ALTER TABLE monitors ADD COLUMN filter TEXT NOT NULL DEFAULT '';
        UPDATE monitors SET filter = (SELECT f.filter FROM monitor_filters f WHERE f.monitor_id = monitors.id);
        DROP TABLE monitor_filters; DROP TABLE monitor_baseline_log; DELETE FROM schema_migrations WHERE version >= 9;`);
      old.close();
      const database = new SqliteDatabase(path);
      try {
        const monitors = new SqliteMonitorStore(database);
        // Sorted: two monitors made in the same millisecond are listed in the order of their random ids.
        const expected = ids.map((id, n) => [id, filters[n]]).sort();
        expect([...(await monitors.filtersOf(ids))].sort()).toEqual(expected);
        expect((await monitors.listMonitors()).map((monitor) => [monitor.id, monitor.filter]).sort()).toEqual(expected);
        expect((await monitors.readerStates()).map((state) => state.position)).toEqual([7, 7]);
        expect(await monitors.removeMonitor(ids[0]!)).toBe(true);
        expect([...(await monitors.filtersOf(ids))]).toEqual([[ids[1], filters[1]]]);
      } finally {
        database.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("waits only briefly for another process's write in the delivery's rounds: the round is refused and tried again", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'monitor-store-busy-'));
    const database = new SqliteDatabase(join(dir, 'catalog.db'));
    try {
      const monitors = new SqliteMonitorStore(database);
      const key = await new SqliteKeyStore(database).createKey('pro');
      const { monitor } = await monitors.addMonitor(key, { url: 'https://hooks.example.com/a', filter: 'market = "US"', minChangePercent: 5, minIntervalMs: 0 }, 0);
      await monitors.advance([{ id: monitor.id, from: 0, to: 1, baselines: {}, changes: [buildPriceChange()], reset: false }], Date.now(), compose);
      const importer = new DatabaseSync(join(dir, 'catalog.db'));
      importer.exec('BEGIN IMMEDIATE');
      const started = performance.now();
      await expect(monitors.advance([{ id: monitor.id, from: 1, to: 2, baselines: {}, changes: [], reset: false }], Date.now(), compose)).rejects.toThrow(ServiceUnavailable);
      await expect(monitors.claimDue(Date.now(), 1, 30_000, compose)).rejects.toThrow(ServiceUnavailable);
      expect(performance.now() - started).toBeLessThan(1_000);
      importer.exec('ROLLBACK');
      importer.close();
      const [delivery] = await monitors.claimDue(Date.now(), 1, 30_000, compose);
      expect(delivery).toBeDefined();
      // A disabled monitor's waiting delivery does not make claimDue take the write lock.
      await monitors.recordAttempts([{ delivery: delivery!, outcome: { result: 'disabled', at: Date.now(), reason: 'the endpoint answered 410 Gone' } }], Date.now(), compose);
      const importerAgain = new DatabaseSync(join(dir, 'catalog.db'));
      importerAgain.exec('BEGIN IMMEDIATE');
      expect(await monitors.claimDue(Date.now(), 1, 30_000, (id, changes, reset, now) => ({ messageId: 'msg_b', body: priceChangedBody(id, changes, reset, now) }))).toEqual([]);
      importerAgain.exec('ROLLBACK');
      importerAgain.close();
    } finally {
      database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
