import { createClient } from '@catalog/contract/sdk/client';
import type { Client } from '@catalog/contract/sdk/client';
import * as sdk from '@catalog/contract/sdk';
import type {
  CatalogProductFree,
  CatalogProductPro,
  CountGtinsResponse,
  GetProductPricesData,
  GetProductPricesResponse,
  GetProductResponse,
  ListStorefrontProductsData,
  ListStorefrontProductsResponse,
  ListTopBrandsResponse,
  SearchVariantsData,
  SearchVariantsResponse,
  StorefrontProduct,
} from '@catalog/contract/types';
import { CatalogApiError } from './errors.js';
import { createPriceStream } from './price-stream.js';
import type { PriceStreamItem, PriceStreamOptions } from './price-stream.js';
import { watchProducts, type WatchProductsOptions, type WatchedItem } from './watch-products.js';

export interface CatalogClientOptions {
  /** The HTTP API, `{base_url}`, e.g. `http://localhost:8080`. */
  baseUrl: string;
  /** The stream server, `{sse_url}`, e.g. `http://localhost:8081`. */
  sseUrl: string;
  /** The account API key: sent as `Authorization: <key>` to catalog operations, `Bearer <key>` to `countGtins` and the stream. */
  apiKey: string;
  /** A `fetch` to use instead of `globalThis.fetch` (proxies, instrumentation, tests). */
  fetch?: typeof fetch | undefined;
}

/** The generated query type with every field optional and `undefined` accepted (absent and undefined mean the same here). */
type Loose<T> = { [K in keyof T]?: T[K] | undefined };

export type SearchVariantsQuery = Loose<NonNullable<SearchVariantsData['query']>>;
export type ProductPricesQuery = Loose<NonNullable<GetProductPricesData['query']>>;
export type ListStorefrontProductsQuery = Loose<NonNullable<ListStorefrontProductsData['query']>>;
/** The walk pages by cursor, so it takes every query option except `page`, and only the cursor order. */
export type AllStorefrontProductsQuery = Omit<ListStorefrontProductsQuery, 'page' | 'sort'> & { sort?: 'cursor:asc' | undefined };

/** The generated SDK's calls: one per operationId of the contract. */
type Sdk = typeof sdk;
/** The operations answered with one JSON body; `streamPrices` is the stream, `priceStream` below. */
type JsonOperationId = Exclude<keyof Sdk, 'streamPrices'>;
/** The SDK call's options without `client` (the client's own is used), optional where the SDK's are. */
type OperationArguments<Id extends JsonOperationId> = undefined extends Parameters<Sdk[Id]>[0]
  ? [options?: Omit<NonNullable<Parameters<Sdk[Id]>[0]>, 'client'>]
  : [options: Omit<NonNullable<Parameters<Sdk[Id]>[0]>, 'client'>];
/** The body of the operation's documented success. */
type OperationBody<Id extends JsonOperationId> = NonNullable<Awaited<ReturnType<Sdk[Id]>>['data']>;

/**
 * A method for every JSON operation of the contract, derived from the generated SDK: it takes the
 * SDK's options (`path`, `query`, `headers`) and resolves to the body of the documented success, or
 * rejects with a CatalogApiError. CatalogClient declares handier signatures for some of them.
 */
export type OperationMethods = { [Id in JsonOperationId]: (...args: OperationArguments<Id>) => Promise<OperationBody<Id>> };

/** The methods with a signature of their own; every other operation has its OperationMethods one. */
export interface CatalogClientMethods {
  /** `GET /v2/products/{id}` by UUID or slug; `data` is `CatalogProductPro` on Pro keys and `CatalogProductFree` on free keys. */
  getProduct(idOrSlug: string): Promise<GetProductResponse>;
  /** `GET /v2/products/{id}/prices` (Pro): the product's latest prices and the stream position they reflect. */
  getProductPrices(idOrSlug: string, query?: ProductPricesQuery): Promise<GetProductPricesResponse>;
  /** `GET /v2/variants` (Pro): exact `sku` or `gtin` digits anywhere in the stored GTIN. */
  searchVariants(query?: SearchVariantsQuery): Promise<SearchVariantsResponse>;
  /** `GET /v3/storefront/products`: one page (at most 50 pages; see `allStorefrontProducts`). */
  listStorefrontProducts(query?: ListStorefrontProductsQuery): Promise<ListStorefrontProductsResponse>;
  /** Every storefront product matching the query exactly once, in cursor order, past the 50-page cap. */
  allStorefrontProducts(query?: AllStorefrontProductsQuery): AsyncGenerator<StorefrontProduct, void, undefined>;
  /** `GET /v2/brands` (Pro): at most 50 brands by product count, descending. */
  listTopBrands(): Promise<ListTopBrandsResponse>;
  /** `GET /gtin/count`: distinct GTINs, each normalised to 14 digits. */
  countGtins(): Promise<CountGtinsResponse>;
  /** The live price stream (Pro); see `PriceStreamOptions` for resume, backoff and abort. */
  priceStream(options: PriceStreamOptions): AsyncGenerator<PriceStreamItem, void, undefined>;
  /** Each product's latest prices, then every change of them, with no gap and no duplicate (Pro); see `WatchProductsOptions`. */
  watchProducts(options: WatchProductsOptions): AsyncGenerator<WatchedItem, void, undefined>;
}

/** Every operation of the contract has a method: a new one in specs/ appears here after `pnpm generate`. */
export type CatalogClient = CatalogClientMethods & Omit<OperationMethods, keyof CatalogClientMethods>;

/** Narrows a product detail to the Pro shape (the free shape has no `retail_prices`). */
export function isCatalogProductPro(product: CatalogProductPro | CatalogProductFree): product is CatalogProductPro {
  return 'retail_prices' in product;
}

/** Pages served before the walk must continue with a cursor filter (`meta.total_pages` never exceeds it). */
const PAGE_CAP = 50;
const WALK_PAGE_SIZE = 100;

/** Returns the body of a 2xx answer; turns any other answer into a CatalogApiError and rethrows network failures. */
function unwrap<T>(result: { data: T | undefined; error: unknown; response?: Response }): T {
  const { response } = result;
  if (response === undefined) throw result.error;
  if (result.error !== undefined || !response.ok) {
    throw new CatalogApiError({ status: response.status, body: result.error, requestId: response.headers.get('X-Request-Id') ?? undefined });
  }
  return result.data as T;
}

/**
 * A client bound to one base URL and key. Each client owns its generated-SDK client instances, so
 * several clients (different keys or servers) can live in one process.
 */
export function createCatalogClient(options: CatalogClientOptions): CatalogClient {
  const { baseUrl, sseUrl, apiKey } = options;
  // `auth` answers every security scheme of the generated SDK: the ApiKey scheme sends it bare, BearerAuth as `Bearer <key>`.
  const http: Client = createClient({ baseUrl, auth: apiKey, ...(options.fetch ? { fetch: options.fetch } : {}) });
  const stream = createPriceStream({ sseUrl, apiKey, ...(options.fetch ? { fetch: options.fetch } : {}) });

  const listPage = async (query: ListStorefrontProductsQuery = {}): Promise<ListStorefrontProductsResponse> =>
    unwrap(await sdk.listStorefrontProducts({ client: http, query }));
  const operationMethods = operationMethodsFor(http);

  async function* allStorefrontProducts(query: AllStorefrontProductsQuery = {}): AsyncGenerator<StorefrontProduct, void, undefined> {
    const { filters, limit = WALK_PAGE_SIZE, ...rest } = query;
    const callerFilter = filters === undefined || filters.trim() === '' ? undefined : filters;
    let after: number | undefined;
    for (;;) {
      // Each leg restarts at page 1 after the last cursor seen; cursor order makes the legs disjoint and complete.
      const legStart = after;
      const cursorFilter = after === undefined ? undefined : `cursor > ${String(after)}`;
      const legFilter =
        cursorFilter === undefined ? callerFilter : callerFilter === undefined ? cursorFilter : `(${callerFilter}) AND ${cursorFilter}`;
      for (let page = 1; ; page++) {
        const { data, meta } = await listPage({ ...rest, filters: legFilter, sort: 'cursor:asc', page, limit });
        for (const product of data) {
          // Cursor order is strict, so a repeat can only come from a misbehaving server: never yield it twice.
          if (after !== undefined && product.cursor <= after) continue;
          after = product.cursor;
          yield product;
        }
        if (data.length < limit) return;
        if (page < meta.total_pages) continue;
        if (page < PAGE_CAP || meta.total <= page * limit) return;
        break;
      }
      // A server that ignored `cursor > N` would serve the same 50 pages forever.
      if (after === legStart) throw new Error(`the storefront did not advance past cursor ${String(after)}`);
    }
  }

  const productPrices = async (idOrSlug: string, query: ProductPricesQuery = {}): Promise<GetProductPricesResponse> =>
    unwrap(await sdk.getProductPrices({ client: http, path: { id: idOrSlug }, query }));
  const getProductById = async (idOrSlug: string): Promise<GetProductResponse> => unwrap(await sdk.getProduct({ client: http, path: { id: idOrSlug } }));

  return {
    ...operationMethods,
    getProduct: getProductById,
    getProductPrices: productPrices,
    watchProducts: (watch) => watchProducts({ getProduct: getProductById, getProductPrices: productPrices, priceStream: stream }, watch),
    searchVariants: async (query = {}) => unwrap(await sdk.searchVariants({ client: http, query })),
    listStorefrontProducts: listPage,
    allStorefrontProducts,
    listTopBrands: async () => unwrap(await sdk.listTopBrands({ client: http })),
    countGtins: async () => unwrap(await sdk.countGtins({ client: http })),
    priceStream: stream,
  };
}

/** OperationMethods for one generated-SDK client: each SDK call but the stream's, unwrapped (exported for its tests, not from index.ts). */
export function operationMethodsFor(http: Client): OperationMethods {
  type AnyCall = (options: { client: Client }) => Promise<{ data: unknown; error: unknown; response?: Response }>;
  const methods: Record<string, (options?: object) => Promise<unknown>> = {};
  for (const [operationId, call] of Object.entries(sdk as unknown as Record<string, AnyCall>)) {
    if (operationId === 'streamPrices' || typeof call !== 'function') continue;
    methods[operationId] = async (options = {}) => unwrap(await call({ ...options, client: http }));
  }
  return methods as OperationMethods;
}
