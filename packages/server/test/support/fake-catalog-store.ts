// An in-memory CatalogStore for transport and service tests (data from `@catalog/contract/testing`). It pages
// and matches just enough (sku, gtin substring, shop name, cursor comparisons) for those tests;
// the real semantics are proven by the adapters' conformance suite.
import { ServiceUnavailable } from '../../src/catalog/errors.ts';
import type { FilterExpr } from '../../src/catalog/filter/ast.ts';
import type { BrandCount, CatalogProductPro, CatalogVariant, Page, StorefrontProduct } from '../../src/catalog/model.ts';
import { jsonOf, type RawJson } from '../../src/catalog/raw-json.ts';
import type { CatalogStore, ImportReport, StorefrontPage, StorefrontQuery, VariantQuery } from '../../src/catalog/catalog-store.ts';
import type { KeyStore } from '../../src/store/key-store.ts';
import type { Plan } from '../../src/catalog/model.ts';

export interface FakeCatalogStoreOptions {
  catalog?: CatalogProductPro[];
  storefront?: StorefrontProduct[];
  brands?: BrandCount[];
  /** When set, every query and ping throws it (a ServiceUnavailable or a plain Error). */
  failure?: Error;
}

export class FakeCatalogStore implements CatalogStore {
  catalog: CatalogProductPro[];
  storefront: StorefrontProduct[];
  brands: BrandCount[];
  failure: Error | undefined;
  /** Every storefront and variant query received, for assertions. */
  readonly storefrontQueries: StorefrontQuery[] = [];
  readonly variantQueries: VariantQuery[] = [];

  constructor(options: FakeCatalogStoreOptions = {}) {
    this.catalog = options.catalog ?? [];
    this.storefront = options.storefront ?? [];
    this.brands = options.brands ?? [];
    this.failure = options.failure;
  }

  async listStorefrontDocuments(query: StorefrontQuery): Promise<StorefrontPage> {
    this.fail();
    this.storefrontQueries.push(query);
    const matches = this.storefront
      .filter((p) => query.shopName === undefined || p.shop_name.toLowerCase() === query.shopName.toLowerCase())
      .filter((p) => query.filter === undefined || matchesFilter(p, query.filter))
      .sort((a, b) => (query.sort === 'cursor:desc' ? b.cursor - a.cursor : a.cursor - b.cursor));
    return { items: jsonOf(matches.slice(query.offset, query.offset + query.limit)), total: matches.length };
  }

  async searchVariantDocuments(query: VariantQuery): Promise<Page<RawJson<CatalogVariant>>> {
    this.fail();
    this.variantQueries.push(query);
    const matches = this.catalog
      .flatMap((p) => p.variants)
      .filter((v) => query.sku === undefined || v.sku.toLowerCase() === query.sku.toLowerCase())
      .filter((v) => query.gtin === undefined || v.gtin.includes(query.gtin));
    return { items: matches.slice(query.offset, query.offset + query.limit).map((v) => jsonOf(v)), total: matches.length };
  }

  /** `brands` when a test set any; otherwise counted from the catalog products, as the stores do. */
  async topBrands(limit: number): Promise<BrandCount[]> {
    this.fail();
    if (this.brands.length > 0) return this.brands.slice(0, limit);
    const counts = new Map<string, number>();
    for (const product of this.catalog) counts.set(product.brand, (counts.get(product.brand) ?? 0) + 1);
    const counted = [...counts].map(([brand, count]) => ({ brand, count }));
    return counted.sort((a, b) => b.count - a.count || (a.brand < b.brand ? -1 : a.brand > b.brand ? 1 : 0)).slice(0, limit);
  }

  async getProductDocument(idOrSlug: string): Promise<RawJson<CatalogProductPro> | null> {
    this.fail();
    const product = this.catalog.find((p) => p.id === idOrSlug || p.slug === idOrSlug);
    return product === undefined ? null : jsonOf(product);
  }

  async productIdOf(idOrSlug: string): Promise<string | null> {
    this.fail();
    return this.catalog.find((p) => p.id === idOrSlug || p.slug === idOrSlug)?.id ?? null;
  }

  async countGtins(): Promise<number> {
    this.fail();
    return new Set(this.catalog.flatMap((p) => p.variants.map((v) => v.gtin.padStart(14, '0')))).size;
  }

  async upsertCatalogProducts(products: readonly CatalogProductPro[]): Promise<ImportReport> {
    this.catalog.push(...products);
    return { inserted: products.length, updated: 0 };
  }

  async upsertStorefrontProducts(): Promise<ImportReport> {
    throw new Error('not supported by the fake store');
  }

  async sampleVariants(limit: number): Promise<CatalogVariant[]> {
    return this.catalog.flatMap((p) => p.variants).slice(0, limit);
  }

  async ping(): Promise<void> {
    this.fail();
  }

  async close(): Promise<void> {}

  private fail(): void {
    if (this.failure !== undefined) throw this.failure;
  }
}

/** Only `cursor` comparisons and AND are understood; anything else matches everything. */
function matchesFilter(product: StorefrontProduct, filter: FilterExpr): boolean {
  switch (filter.type) {
    case 'and':
      return filter.operands.every((operand) => matchesFilter(product, operand));
    case 'compare':
      if (filter.field === 'cursor' && typeof filter.value === 'number' && filter.operator === '>') return product.cursor > filter.value;
      return true;
    case 'or':
    case 'not':
    case 'in':
      return true;
  }
}

export function unavailableStore(): FakeCatalogStore {
  return new FakeCatalogStore({ failure: new ServiceUnavailable('catalog database') });
}

/** Keys in memory, with their plans; `lookups` counts store round trips. */
export class FakeKeyStore implements KeyStore {
  readonly plans = new Map<string, Plan>();
  lookups = 0;
  #created = 0;

  constructor(entries: Record<string, Plan> = {}) {
    for (const [key, plan] of Object.entries(entries)) this.plans.set(key, plan);
  }

  async createKey(plan: Plan): Promise<string> {
    this.#created += 1;
    const key = `ck_created_${this.#created}`;
    this.plans.set(key, plan);
    return key;
  }

  async findPlan(key: string): Promise<Plan | null> {
    this.lookups += 1;
    return this.plans.get(key) ?? null;
  }
}
