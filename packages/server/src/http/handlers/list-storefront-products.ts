import type { Handlers } from '../../generated/handlers.gen.ts';
import type { StorefrontListing } from '../../catalog/catalog-service.ts';
import type { RequestContext } from '../context.ts';

export const listStorefrontProducts: Handlers<RequestContext>['listStorefrontProducts'] = async ({ query }, { catalog }) => {
  const listing: StorefrontListing = { sort: query.sort, page: query.page, limit: query.limit };
  if (query.query !== undefined) listing.query = query.query;
  if (query.shop_name !== undefined) listing.shopName = query.shop_name;
  if (query.filters !== undefined) listing.filters = query.filters;
  const result = await catalog.listStorefrontProducts(listing);
  return {
    status: 200,
    body: { status: 'success', data: result.items, meta: { total: result.total, total_pages: result.totalPages } },
  };
};
