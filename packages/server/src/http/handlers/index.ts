// One handler per API operation; the type proves none is missing.
import type { Handlers } from '../handler-types.ts';
import type { RequestContext } from '../context.ts';
import { countGtins } from './count-gtins.ts';
import { getProduct } from './get-product.ts';
import { listStorefrontProducts } from './list-storefront-products.ts';
import { listTopBrands } from './list-top-brands.ts';
import { searchVariants } from './search-variants.ts';

export const handlers: Handlers<RequestContext> = {
  countGtins,
  getProduct,
  listStorefrontProducts,
  listTopBrands,
  searchVariants,
};
