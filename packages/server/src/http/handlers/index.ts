// One handler per API operation; the type proves none is missing. The stream listener's one
// operation, streamPrices, is in stream-prices.ts.
import type { ApiOperationId } from '@catalog/contract';
import type { CatalogService } from '../../catalog/catalog-service.ts';
import type { ProductPrices } from '../../prices/product-prices.ts';
import type { Handlers } from '../handler-types.ts';
import { countGtins } from './count-gtins.ts';
import { getProduct } from './get-product.ts';
import { getProductPrices } from './get-product-prices.ts';
import { listStorefrontProducts } from './list-storefront-products.ts';
import { listTopBrands } from './list-top-brands.ts';
import { searchVariants } from './search-variants.ts';

/** What the API listener's handlers use. */
export interface ApiServices {
  catalog: CatalogService;
  prices: ProductPrices;
}

export type ApiHandler<Id extends ApiOperationId> = Handlers<Id, ApiServices>[Id];

export const handlers: Handlers<ApiOperationId, ApiServices> = {
  countGtins,
  getProduct,
  getProductPrices,
  listStorefrontProducts,
  listTopBrands,
  searchVariants,
};
