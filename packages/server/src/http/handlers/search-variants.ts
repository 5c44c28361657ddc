import type { CatalogVariantList } from '@catalog/contract';
import type { VariantSearch } from '../../catalog/catalog-service.ts';
import type { ApiHandler } from './api-services.ts';
import { jsonArray, pageMeta, v2Splice } from '../envelope.ts';

export const searchVariants: ApiHandler<'searchVariants'> = async ({ query }, { catalog }) => {
  const search: VariantSearch = { page: query.page, limit: query.limit };
  if (query.sku !== undefined) search.sku = query.sku;
  if (query.gtin !== undefined) search.gtin = query.gtin;
  const result = await catalog.searchVariants(search);
  // The stored variants are spliced in as they are, like storefront products.
  return { status: 200, body: v2Splice<CatalogVariantList>(jsonArray(result.items), pageMeta(result.total, result.totalPages)) };
};
