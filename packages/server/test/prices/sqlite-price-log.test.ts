import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { buildPriceEvent } from '@catalog/contract/testing';
import type { PriceEvent } from '../../src/catalog/model.ts';
import type { StoredPriceEvent } from '../../src/prices/price-log.ts';
import { SqlitePriceLog } from '../../src/prices/sqlite/sqlite-price-log.ts';
import { describePriceLogConformance } from './price-log.suite.ts';

describePriceLogConformance('SqlitePriceLog', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'price-log-'));
  const file = path.join(dir, 'catalog.db');
  return {
    log: new SqlitePriceLog(file),
    reopen: async () => new SqlitePriceLog(file),
    cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }),
  };
});

/** A log file in a directory of its own, holding `events` once `work` starts; the directory is removed after. */
async function withStoredEvents(events: PriceEvent[], work: (file: string, stored: StoredPriceEvent[]) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'price-log-'));
  try {
    const file = path.join(dir, 'catalog.db');
    const log = new SqlitePriceLog(file);
    const stored = await log.append(events);
    await log.close();
    await work(file, stored);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

describe('SqlitePriceLog', () => {
  it('fills the latest-price store from the stored events when it opens a log written before the store existed', async () => {
    const events = [
      buildPriceEvent({ product_id: 'p', variant_id: 'v', price: 1 }),
      buildPriceEvent({ product_id: 'p', variant_id: 'v', price: 2 }),
      buildPriceEvent({ product_id: 'p', variant_id: 'w', price: 3 }),
    ];
    await withStoredEvents(events, async (file, stored) => {
      const db = new DatabaseSync(file);
      db.exec('DROP TABLE price_latest');
      db.close();
      const after = new SqlitePriceLog(file);
      expect(await after.latestPrices('p')).toEqual({ data: `[${stored[1]?.data},${stored[2]?.data}]`, position: stored[2]?.id });
      await after.close();
    });
  });

  it('moves the latest prices of a log written with the earlier layout into id order, and upserts them as before', async () => {
    const events = [
      buildPriceEvent({ product_id: 'p', variant_id: 'a', price: 1 }),
      buildPriceEvent({ product_id: 'p', variant_id: 'z', price: 2 }),
      buildPriceEvent({ product_id: 'p', variant_id: 'a', price: 3 }),
      buildPriceEvent({ product_id: 'q', variant_id: 'a', price: 4 }),
    ];
    await withStoredEvents(events, async (file, stored) => {
      // The earlier layout: keyed by (product, key), so a product's rows were stored by key (a, z), not by id (z, a).
      const db = new DatabaseSync(file);
      db.exec(`DROP INDEX price_latest_key;
        ALTER TABLE price_latest RENAME TO current;
        CREATE TABLE price_latest (product_id TEXT NOT NULL, latest_key TEXT NOT NULL, id INTEGER NOT NULL, topic TEXT NOT NULL, data TEXT NOT NULL, PRIMARY KEY (product_id, latest_key)) WITHOUT ROWID;
        INSERT INTO price_latest SELECT product_id, latest_key, id, topic, data FROM current;
        DROP TABLE current;`);
      db.close();
      const after = new SqlitePriceLog(file);
      expect(await after.latestPrices('p')).toEqual({ data: `[${stored[1]?.data},${stored[2]?.data}]`, position: stored[3]?.id });
      const [later] = await after.append([buildPriceEvent({ product_id: 'p', variant_id: 'z', price: 5 })]);
      expect(await after.latestPrices('p')).toEqual({ data: `[${stored[2]?.data},${later?.data}]`, position: later?.id });
      await after.close();
      const check = new DatabaseSync(file);
      expect(check.prepare("SELECT name, pk FROM pragma_table_info('price_latest') WHERE pk > 0 ORDER BY pk").all().map((row) => row.name)).toEqual(['product_id', 'id']);
      expect(check.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'price_latest_by_key'").get()).toEqual({ n: 0 });
      check.close();
      // A second open finds the current layout and leaves it as it is.
      const again = new SqlitePriceLog(file);
      expect((await again.latestPrices('q')).data).toBe(`[${stored[3]?.data}]`);
      await again.close();
    });
  });
});
