// Opens the price log a URL names: `sqlite:<path>` (the embedded default; parent folders are
// created) or `redis://…` (not available yet). The caller owns the log and closes it.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../logger.ts';
import type { PriceLog } from './price-log.ts';
import { SqlitePriceLog } from './sqlite/sqlite-price-log.ts';
import { sqlitePath } from '../storage-url.ts';

export async function openPriceLog(url: string, logger: Logger): Promise<PriceLog> {
  if (url.startsWith('sqlite:')) {
    const file = sqlitePath(url);
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    logger.debug('price log opened', { engine: 'sqlite', file });
    return new SqlitePriceLog(file);
  }
  if (url.startsWith('redis:') || url.startsWith('rediss:')) {
    throw new Error(`the Redis price log is not available in this build yet ("${url}"); use sqlite:<path>`);
  }
  throw new Error(`--price-log must start with sqlite: or redis:, got "${url}"`);
}
