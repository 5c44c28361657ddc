import type { Handlers } from '../../generated/handlers.gen.ts';
import type { VariantSearch } from '../../catalog/catalog-service.ts';
import type { RequestContext } from '../context.ts';

export const searchVariants: Handlers<RequestContext>['searchVariants'] = async ({ query }, { catalog }) => {
  const search: VariantSearch = { page: query.page, limit: query.limit };
  if (query.sku !== undefined) search.sku = query.sku;
  if (query.gtin !== undefined) search.gtin = query.gtin;
  const result = await catalog.searchVariants(search);
  return {
    status: 200,
    body: {
      status: 'success',
      error: '',
      message: '',
      query: {},
      data: result.items,
      meta: { total: result.total, total_pages: result.totalPages },
    },
  };
};
