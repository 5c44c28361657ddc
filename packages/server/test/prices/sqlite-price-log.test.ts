import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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
