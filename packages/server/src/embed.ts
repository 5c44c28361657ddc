// The catalog API inside an Express application of your own:
//
//   import express from 'express';
//   import { catalogRouter, openCatalog } from '@catalog/server';
//   const catalog = await openCatalog({ databaseUrl: 'sqlite:./data/catalog.db' });
//   const app = express();
//   app.use('/catalog', catalogRouter(catalog));
//
// openCatalog opens the stores `catalog serve` would (the catalog and key database, the price log:
// the same SQLite file unless `priceLogUrl` names another or Redis), and resolves once the
// storefront index is loaded. The router runs the same operations as `catalog serve`'s API
// listener, with no rate limits unless a limiter is given; the price stream is `catalog serve`'s
// own listener and is not part of it. `close()` closes what openCatalog opened.
import type { AppDeps } from './dependencies.ts';
import { createServiceLogger, type Logger } from './logger.ts';
import { openPriceLog } from './prices/open-price-log.ts';
import { openCatalogStores } from './store/open-store.ts';

export interface OpenCatalogOptions {
  /** `sqlite:<path>` or `postgres://…`, as `catalog serve --db`. */
  databaseUrl: string;
  /** `sqlite:<path>` or `redis://…`; the catalog's SQLite file when absent. */
  priceLogUrl?: string;
  /** Structured JSON lines on standard error at `info` when absent. */
  logger?: Logger;
}

export type OpenCatalog = AppDeps & { close(): Promise<void> };

export async function openCatalog(options: OpenCatalogOptions): Promise<OpenCatalog> {
  const logger = options.logger ?? createServiceLogger('info');
  const priceLogUrl = options.priceLogUrl ?? (options.databaseUrl.startsWith('sqlite:') ? options.databaseUrl : undefined);
  if (priceLogUrl === undefined) throw new Error('openCatalog: priceLogUrl is required when the catalog is not SQLite');
  const stores = await openCatalogStores(options.databaseUrl, logger, { indexSnapshotDir: 'default' });
  try {
    const priceLog = await openPriceLog(priceLogUrl, logger);
    try {
      await stores.catalog.warm?.();
    } catch (error) {
      await priceLog.close();
      throw error;
    }
    return {
      catalog: stores.catalog,
      keys: stores.keys,
      monitors: stores.monitors,
      priceLog,
      logger,
      close: async () => {
        await Promise.allSettled([priceLog.close(), stores.close()]);
      },
    };
  } catch (error) {
    await stores.close();
    throw error;
  }
}
