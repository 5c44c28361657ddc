// What the API listener is made of, in one place: the dependencies createApp takes, and the one
// function that turns them into what the handlers use. Giving a handler a new dependency means a
// field here (required, so every caller that builds the object fails to compile until it gives it:
// main.ts, and test/support/app-deps.ts for every test) and a line in apiServices.
import type { RequestHandler } from 'express';
import { CatalogService } from './catalog/catalog-service.ts';
import type { ApiServices } from './http/handlers/index.ts';
import type { RateLimiter } from './http/rate-limit.ts';
import type { Logger } from './logger.ts';
import type { PriceLog } from './prices/price-log.ts';
import { ProductPrices } from './prices/product-prices.ts';
import type { CatalogStore } from './catalog/catalog-store.ts';
import type { KeyStore } from './store/key-store.ts';
import type { MonitorStore } from './monitors/monitor-store.ts';

export interface ReadinessCheck {
  name: string;
  /** Resolves when the dependency answers; rejects (ideally with ServiceUnavailable) otherwise. */
  ping(): Promise<void>;
}

export interface AppDeps {
  catalog: CatalogStore;
  /** The latest-price store behind getProductPrices (the price log). */
  priceLog: Pick<PriceLog, 'latestPrices'>;
  keys: KeyStore;
  /** The price monitors, as listMonitors reads them. */
  monitors: Pick<MonitorStore, 'listMonitors'>;
  logger: Logger;
  /** Quotas per key and failed-authentication allowances; absent means no limits. */
  rateLimiter?: RateLimiter;
  /** A request unanswered after this long gets 503; DEFAULT_REQUEST_TIMEOUT_MS when absent. */
  requestTimeoutMs?: number;
  /** Checked by /readyz; defaults to the catalog store's ping. */
  readiness?: ReadinessCheck[];
  /**
   * Express middleware run for every request of the listener, in order, before the operations
   * (which authenticate and validate whatever it does): compression, headers, tracing, logging.
   */
  middleware?: readonly RequestHandler[];
}

/** What the API handlers receive (`services` in the operation pipeline), built once per app. */
export function apiServices(deps: AppDeps): ApiServices {
  return { catalog: new CatalogService(deps.catalog), prices: new ProductPrices(deps.priceLog), monitors: deps.monitors };
}
