// The API listener's handler type, apart from the handler map: handler files import it, and the
// generated map (generated/handlers.gen.ts) imports them, so the types must not live in the map's module.
import type { ApiOperationId } from '@catalog/contract';
import type { CatalogService } from '../../catalog/catalog-service.ts';
import type { ProductPrices } from '../../prices/product-prices.ts';
import type { MonitorStore } from '../../monitors/monitor-store.ts';
import type { Handlers } from '../handler-types.ts';

/** What the API listener's handlers use. */
export interface ApiServices {
  catalog: CatalogService;
  prices: ProductPrices;
  monitors: Pick<MonitorStore, 'listMonitors'>;
}

export type ApiHandler<Id extends ApiOperationId> = Handlers<Id, ApiServices>[Id];
