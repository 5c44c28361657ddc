import type { StorefrontProductList } from '@catalog/contract';
import type { StorefrontListing } from '../../catalog/catalog-service.ts';
import type { ApiHandler } from './api-services.ts';
import { pageMeta, v3Splice } from '../envelope.ts';

export const listStorefrontProducts: ApiHandler<'listStorefrontProducts'> = async ({ query }, { catalog }) => {
  const listing: StorefrontListing = { sort: query.sort, page: query.page, limit: query.limit };
  if (query.query !== undefined) listing.query = query.query;
  if (query.shop_name !== undefined) listing.shopName = query.shop_name;
  if (query.filters !== undefined) listing.filters = query.filters;
  const result = await catalog.listStorefrontProducts(listing);
  // The stored documents are spliced in as the engine joined them: not parsed, not re-serialised.
  return { status: 200, body: v3Splice<StorefrontProductList>(result.items, pageMeta(result.total, result.totalPages)) };
};
