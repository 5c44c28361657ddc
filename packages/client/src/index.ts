// The public surface of @catalog/client. Everything a consumer may import is re-exported here by name.
// src/ imports with `.js`, unlike the rest of the repository: tsc copies specifiers into the shipped
// .d.ts unchanged, and TypeScript before 5 rejects `.ts` there. src/ is never run unbuilt anyway
// (the generated code imports `.js` too). What it imports from @catalog/contract (the generated
// types and SDK) is compiled into dist/ by scripts/build.ts: the package depends on no workspace package.
export { createCatalogClient, isCatalogProductPro } from './catalog-client.js';
export type {
  AllStorefrontProductsQuery,
  CatalogClient,
  CatalogClientMethods,
  CatalogClientOptions,
  OperationMethods,
  ListStorefrontProductsQuery,
  ProductPricesQuery,
  SearchVariantsQuery,
} from './catalog-client.js';
export { CatalogApiError, PriceStreamError } from './errors.js';
export type { ErrorCode } from './errors.js';
export { createPriceStream } from './price-stream.js';
export { watchProducts } from './watch-products.js';
export { verifyWebhook, WebhookVerificationError } from './verify-webhook.js';
export type { VerifyWebhookOptions, WebhookHeaders, WebhookVerificationReason } from './verify-webhook.js';
export type { WatchedItem, WatchedSnapshot, WatchProductsDeps, WatchProductsOptions } from './watch-products.js';
export type { PriceStreamConfig, PriceStreamItem, PriceStreamOptions, PriceStreamPrice, PriceStreamReset } from './price-stream.js';
export type { PriceFrameFields, ResetFrameFields, ResetNotice, SubscriptionHeaders } from '@catalog/contract/stream-types';
export type {
  BrandCount,
  BrandCountList,
  CatalogProductFree,
  CatalogProductPro,
  CatalogVariant,
  CatalogVariantList,
  CountGtinsResponse,
  ErrorBody,
  GetProductPricesResponse,
  GetProductResponse,
  GtinCount,
  ListStorefrontProductsResponse,
  ListMonitorsResponse,
  ListTopBrandsResponse,
  Monitor,
  MonitorDeliveryState,
  MonitorList,
  PageMeta,
  PriceChange,
  PriceChangeBatch,
  PriceChangedWebhook,
  PriceEvent,
  ProductDetail,
  ProductLink,
  ProductPriceList,
  ReleaseDate,
  RetailPrice,
  SearchVariantsResponse,
  StorefrontProduct,
  StorefrontProductList,
  StorefrontSort,
  StorefrontVariant,
  StreamPositionMeta,
  VariantMetadata,
} from '@catalog/contract/types';
