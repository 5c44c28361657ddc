// Opens the price log a URL names: `sqlite:<path>` (the embedded default; parent folders are
// created) or `redis://…` (not available yet). The caller owns the log and closes it.
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../logger.ts';
import type { PriceLog } from './price-log.ts';
import { SqlitePriceLog } from './sqlite/sqlite-price-log.ts';

/** The file path of a `sqlite:` URL: `sqlite:./data/catalog.db`, `sqlite:///abs/path.db`. */
export function sqlitePathOf(url: string): string {
  let rest = url.slice('sqlite:'.length);
  if (rest.startsWith('//')) rest = rest.slice(2);
  if (rest === '') throw new Error(`"${url}" names no file; use sqlite:<path>`);
  return rest;
}

export async function openPriceLog(url: string, logger: Logger): Promise<PriceLog> {
  if (url.startsWith('sqlite:')) {
    const file = sqlitePathOf(url);
    if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    logger.debug('price log opened', { engine: 'sqlite', file });
    return new SqlitePriceLog(file);
  }
  if (url.startsWith('redis:') || url.startsWith('rediss:')) {
    throw new Error(`the Redis price log is not available in this build yet ("${url}"); use sqlite:<path>`);
  }
  throw new Error(`--price-log must start with sqlite: or redis:, got "${url}"`);
}
