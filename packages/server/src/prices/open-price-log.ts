// Opens the price log a URL names: `sqlite:<path>` (the embedded default; parent folders are
// created) or `redis://…` (RedisPriceLog, for several instances). The caller owns the log and closes it.
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
    // Loaded on demand so that embedded (SQLite) users never load the Redis driver. Live streams
    // end (after a retry hint) when Redis stays unreachable for a few seconds, so clients back
    // off and resume with Last-Event-ID instead of waiting on a silent stream.
    // `?prefix=` names the keys' prefix, so several deployments (or test runs) can share a Redis.
    const parsed = new URL(url);
    const keyPrefix = parsed.searchParams.get('prefix');
    parsed.searchParams.delete('prefix');
    const { openRedisPriceLog } = await import('./redis/redis-price-log.ts');
    return openRedisPriceLog(parsed.toString(), logger, {
      followGiveUpAfterMs: 3000,
      ...(keyPrefix === null ? {} : { keyPrefix }),
    });
  }
  throw new Error(`--price-log must start with sqlite: or redis:, got "${url}"`);
}
