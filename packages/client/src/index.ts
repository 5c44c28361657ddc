// The public surface of @catalog/client. Everything a consumer may import is re-exported here by name.
export { createCatalogClient, isCatalogProductPro } from './catalog-client.ts';
export type {
  AllStorefrontProductsQuery,
  CatalogClient,
  CatalogClientOptions,
  ListStorefrontProductsQuery,
  SearchVariantsQuery,
} from './catalog-client.ts';
export { CatalogApiError, PriceStreamError } from './errors.ts';
export type { ErrorCode } from './errors.ts';
export { createPriceStream } from './price-stream.ts';
export type { PriceStreamConfig, PriceStreamItem, PriceStreamOptions, PriceStreamPrice, PriceStreamReset } from './price-stream.ts';
export type {
  BrandCount,
  BrandCountList,
  CatalogProductFree,
  CatalogProductPro,
  CatalogVariant,
  CatalogVariantList,
  CountGtinsResponse,
  ErrorBody,
  GetProductResponse,
  GtinCount,
  ListStorefrontProductsResponse,
  ListTopBrandsResponse,
  PageMeta,
  PriceEvent,
  ProductDetail,
  ProductLink,
  ReleaseDate,
  RetailPrice,
  SearchVariantsResponse,
  StorefrontProduct,
  StorefrontProductList,
  StorefrontSort,
  StorefrontVariant,
  VariantMetadata,
} from './generated/types.gen.ts';
