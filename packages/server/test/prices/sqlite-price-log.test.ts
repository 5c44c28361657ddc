import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { buildPriceEvent } from '@catalog/contract/testing';
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

describe('SqlitePriceLog', () => {
  it('fills the latest-price store from the stored events when it opens a log written before the store existed', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'price-log-'));
    try {
      const file = path.join(dir, 'catalog.db');
      const before = new SqlitePriceLog(file);
      const stored = await before.append([
        buildPriceEvent({ product_id: 'p', variant_id: 'v', price: 1 }),
        buildPriceEvent({ product_id: 'p', variant_id: 'v', price: 2 }),
        buildPriceEvent({ product_id: 'p', variant_id: 'w', price: 3 }),
      ]);
      await before.close();
      const db = new DatabaseSync(file);
      db.exec('DROP TABLE price_latest');
      db.close();
      const after = new SqlitePriceLog(file);
      expect(await after.latestPrices('p')).toEqual({ data: `[${stored[1]?.data},${stored[2]?.data}]`, position: stored[2]?.id });
      await after.close();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
