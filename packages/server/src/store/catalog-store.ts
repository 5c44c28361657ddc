// The port every catalog storage engine implements (SqliteCatalogStore, PostgresCatalogStore).
// One conformance suite (test/store/catalog-store.suite.ts) runs against each adapter.
import type { FilterExpr } from '../catalog/filter/ast.ts';
import type {
  BrandCount,
  CatalogProductPro,
  CatalogVariant,
  Page,
  StorefrontProductInput,
  StorefrontSort,
} from '../catalog/model.ts';

export interface StorefrontQuery {
  /** Words that must all appear in title, brand, product type or tags (case-insensitive). */
  text?: string;
  /** Case-insensitive exact shop name. */
  shopName?: string;
  filter?: FilterExpr;
  sort: StorefrontSort;
  offset: number;
  limit: number;
}

export interface VariantQuery {
  /** Exact SKU, case-insensitive. */
  sku?: string;
  /** 4 to 14 digits, matched as a substring of the stored GTIN through an index. */
  gtin?: string;
  offset: number;
  limit: number;
}

export interface ImportReport {
  inserted: number;
  updated: number;
}

export interface CatalogStore {
  /**
   * Storefront products as their stored JSON documents (with `cursor`, `created_at` and
   * `updated_at`), so the hot path can splice them into a response unparsed.
   */
  listStorefrontDocuments(query: StorefrontQuery): Promise<Page<string>>;
  /**
   * Catalog variants in import order, each as its JSON text (fields and order as imported), so
   * the hot path can splice them into a response unparsed.
   */
  searchVariantDocuments(query: VariantQuery): Promise<Page<string>>;
  /** Brands by number of catalog products, descending; ties by brand name ascending. */
  topBrands(limit: number): Promise<BrandCount[]>;
  /**
   * By UUID or slug: the full (Pro) product as the JSON text it was imported as (field order
   * included), or null. Text, not an object, so the hot path can splice it into a response unparsed.
   */
  getProductDocument(idOrSlug: string): Promise<string | null>;
  /** Distinct GTINs over all variants after normalising each to 14 digits. */
  countGtins(): Promise<number>;
  /** Upserts by `id`; what was imported reads back unchanged. */
  upsertCatalogProducts(products: readonly CatalogProductPro[]): Promise<ImportReport>;
  /** Upserts by `id`; assigns `cursor` to new products and keeps it for known ones. */
  upsertStorefrontProducts(products: readonly StorefrontProductInput[]): Promise<ImportReport>;
  /** Up to `limit` variants for the price simulator, spread over the catalog. */
  sampleVariants(limit: number): Promise<CatalogVariant[]>;
  /** Throws ServiceUnavailable when the engine cannot answer; used by /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
