// The catalog's read operations as the product specification defines them, independent of any
// transport: paging arithmetic, the storefront's page cap, filter parsing and plan projection.
// Every refusal is a CatalogError carrying a contract code; nothing here knows about HTTP. The
// bounds are the contract's, read from its document.
import { openapiDocument } from '@catalog/contract/documents';
import type { CatalogStore, StorefrontQuery, VariantQuery } from './catalog-store.ts';
import { InvalidRequest, PageOutOfRange, ProductNotFound } from './errors.ts';
import { parseFilter } from './filter/parse-filter.ts';
import { isGtinFragment } from './gtin-fragments.ts';
import type { BrandCount, CatalogProductFree, CatalogProductPro, CatalogVariant, Plan, StorefrontProduct, StorefrontSort } from './model.ts';
import type { RawJson, RawJsonBytes } from './raw-json.ts';
import { productForPlan } from './tiers.ts';

/** Items per page at most: the `maximum` of the contract's `Limit` parameter. */
export const MAX_PAGE_LIMIT = contractNumber(['parameters', 'Limit', 'schema', 'maximum']);
/**
 * Storefront listings serve at most this many pages (the `maximum` of the contract's
 * `StorefrontPage` parameter); cursor filtering reaches the rest.
 */
export const MAX_STOREFRONT_PAGES = contractNumber(['parameters', 'StorefrontPage', 'schema', 'maximum']);
/** Brands listTopBrands answers: as many as the contract's `BrandCountList` may hold. */
export const TOP_BRANDS = contractNumber(['schemas', 'BrandCountList', 'properties', 'data', 'maxItems']);

/** A number of the OpenAPI document's `components`, by its path there; throws when there is none. */
function contractNumber(path: readonly string[]): number {
  let value: unknown = openapiDocument['components'];
  for (const key of path) value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  if (typeof value !== 'number') throw new Error(`the OpenAPI document has no number at components.${path.join('.')}`);
  return value;
}

export interface PagedResult<T> {
  items: T[];
  total: number;
  totalPages: number;
}

export interface StorefrontListing {
  query?: string;
  shopName?: string;
  filters?: string;
  sort: StorefrontSort;
  page: number;
  limit: number;
}

export interface VariantSearch {
  sku?: string;
  gtin?: string;
  page: number;
  limit: number;
}

export class CatalogService {
  readonly #store: CatalogStore;

  constructor(store: CatalogStore) {
    this.#store = store;
  }

  /** Items are the stored JSON documents as one array, for the transport to splice into its response. */
  async listStorefrontProducts(listing: StorefrontListing): Promise<{ items: RawJson<StorefrontProduct[]> | RawJsonBytes<StorefrontProduct[]>; total: number; totalPages: number }> {
    checkPaging(listing.page, listing.limit);
    if (listing.page > MAX_STOREFRONT_PAGES) throw new PageOutOfRange(listing.page, MAX_STOREFRONT_PAGES);
    const query: StorefrontQuery = { sort: listing.sort, offset: (listing.page - 1) * listing.limit, limit: listing.limit };
    if (listing.query !== undefined) query.text = listing.query;
    if (listing.shopName !== undefined) query.shopName = listing.shopName;
    if (listing.filters !== undefined) query.filter = parseFilter(listing.filters);
    const page = await this.#store.listStorefrontDocuments(query);
    return {
      items: page.items,
      total: page.total,
      totalPages: Math.min(MAX_STOREFRONT_PAGES, Math.ceil(page.total / listing.limit)),
    };
  }

  /** Items are the stored variants' JSON texts, for the transport to splice into its response. */
  async searchVariants(search: VariantSearch): Promise<PagedResult<RawJson<CatalogVariant>>> {
    checkPaging(search.page, search.limit);
    const query: VariantQuery = { offset: (search.page - 1) * search.limit, limit: search.limit };
    if (search.sku !== undefined) query.sku = search.sku;
    if (search.gtin !== undefined) {
      if (!isGtinFragment(search.gtin)) {
        throw new InvalidRequest(`Query parameter "gtin" must be 4 to 14 digits, got "${search.gtin}".`);
      }
      query.gtin = search.gtin;
    }
    const page = await this.#store.searchVariantDocuments(query);
    return { items: page.items, total: page.total, totalPages: Math.ceil(page.total / search.limit) };
  }

  listTopBrands(): Promise<BrandCount[]> {
    return this.#store.topBrands(TOP_BRANDS);
  }

  /**
   * Pro gets the stored document as its JSON text, untouched (the hot path splices it into the
   * response unparsed); free gets the parsed product without the Pro fields.
   */
  async getProduct(idOrSlug: string, plan: Plan): Promise<ProductForPlan> {
    const document = await this.#store.getProductDocument(idOrSlug);
    if (document === null) throw new ProductNotFound(idOrSlug);
    if (plan === 'pro') return { plan, document };
    return { plan, product: productForPlan(JSON.parse(document) as CatalogProductPro, plan) as CatalogProductFree };
  }

  /** The `id` of the product an id or slug names (as getProduct finds it); throws ProductNotFound. */
  async productIdOf(idOrSlug: string): Promise<string> {
    const id = await this.#store.productIdOf(idOrSlug);
    if (id === null) throw new ProductNotFound(idOrSlug);
    return id;
  }

  countGtins(): Promise<number> {
    return this.#store.countGtins();
  }
}

export type ProductForPlan = { plan: 'pro'; document: RawJson<CatalogProductPro> } | { plan: 'free'; product: CatalogProductFree };

function checkPaging(page: number, limit: number): void {
  if (!Number.isInteger(page) || page < 1) throw new InvalidRequest(`Query parameter "page" must be an integer >= 1, got ${page}.`);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
    throw new InvalidRequest(`Query parameter "limit" must be an integer from 1 to ${MAX_PAGE_LIMIT}, got ${limit}.`);
  }
}
