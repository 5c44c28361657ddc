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
        DROP TABLE monitor_filters; DROP TABLE monitor_baseline_log; ALTER TABLE monitors DROP COLUMN changes_taken; DELETE FROM schema_migrations WHERE version >= 9;`);
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

  it('keeps a taken change until a sweep deletes it, never one still waiting, and delivers each change once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'monitor-store-sweep-'));
    const database = new SqliteDatabase(join(dir, 'catalog.db'));
    try {
      const monitors = new SqliteMonitorStore(database);
      const key = await new SqliteKeyStore(database).createKey('pro');
      const settings = { url: 'https://hooks.example.com/a', filter: 'market = "US"', minChangePercent: 0, minIntervalMs: 0 };
      const [a, b] = [(await monitors.addMonitor(key, settings, 0)).monitor.id, (await monitors.addMonitor(key, settings, 0)).monitor.id];
      const rows = (): number => (database.connection().prepare('SELECT count(*) AS n FROM monitor_changes').get() as { n: number }).n;
      const change = (streamId: number) => buildPriceChange({ stream_id: streamId });
      const streamIds = (body: string): number[] => (JSON.parse(body) as { data: { changes: { stream_id: number }[] } }).data.changes.map((c) => c.stream_id);
      let now = 1_000_000;
      // a's first delivery is formed from the changes given; its next three, and b's two, wait as rows (b's behind a delivery of its own).
      await monitors.advance([{ id: a, from: 0, to: 1, baselines: {}, changes: [change(1)], reset: false }, { id: b, from: 0, to: 1, baselines: {}, changes: [change(1)], reset: false }], now, compose);
      const first = await monitors.claimDue(now, 10, 30_000, compose);
      expect(first).toHaveLength(2);
      await monitors.advance(
        [
          { id: a, from: 1, to: 4, baselines: {}, changes: [change(2), change(3), change(4)], reset: false },
          { id: b, from: 1, to: 3, baselines: {}, changes: [change(2), change(3)], reset: false },
        ],
        now,
        compose,
      );
      expect(rows()).toBe(5);
      // a's first delivered: its next delivery takes its three changes, which stay until a sweep.
      const [next] = await monitors.recordAttempts([{ delivery: first.find((d) => d.monitorId === a)!, outcome: { result: 'delivered', at: now } }], now, compose, { limit: 10, leaseMs: 30_000 });
      expect(streamIds(next!.body)).toEqual([2, 3, 4]);
      expect(rows()).toBe(5);
      expect((await monitors.deliveryTotals()).backlog).toBe(3 + 1 + 2);
      // A later round sweeps: a's taken rows go, b's waiting rows and a's new one stay.
      now += 1_000;
      await monitors.advance([{ id: a, from: 4, to: 5, baselines: {}, changes: [change(5)], reset: false }], now, compose);
      expect(rows()).toBe(3);
      // Each later delivery carries what waited, once.
      const [afterA] = await monitors.recordAttempts([{ delivery: next!, outcome: { result: 'delivered', at: now } }], now, compose, { limit: 10, leaseMs: 30_000 });
      expect(streamIds(afterA!.body)).toEqual([5]);
      const [afterB] = await monitors.recordAttempts([{ delivery: first.find((d) => d.monitorId === b)!, outcome: { result: 'delivered', at: now } }], now, compose, { limit: 10, leaseMs: 30_000 });
      expect(streamIds(afterB!.body)).toEqual([2, 3]);
      expect((await monitors.deliveryTotals()).backlog).toBe(1 + 2);
      now += 1_000;
      await monitors.advance([{ id: b, from: 3, to: 4, baselines: {}, changes: [], reset: false }], now, compose);
      expect(rows()).toBe(0);
    } finally {
      database.close();
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
