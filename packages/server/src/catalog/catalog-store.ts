// The port the catalog service reads through: CatalogStore and the queries and pages it speaks
// in. The domain owns it; the store layer implements it (store/catalog-store.ts: what each engine
// implements, and IndexedCatalogStore, the decorator in front of every engine). One conformance
// suite (test/store/catalog-store.suite.ts) runs against each engine behind that decorator.
import type { BrandCount, CatalogProductPro, CatalogVariant, Page, StorefrontProduct, StorefrontProductInput } from './model.ts';
import type { RawJson, RawJsonBytes } from './raw-json.ts';
import type { StorefrontSearch } from './storefront-index.ts';

/** A storefront listing, as the storefront index answers it. */
export type StorefrontQuery = StorefrontSearch;

export interface VariantQuery {
  /** Exact SKU, case-insensitive. */
  sku?: string;
  /**
   * Matched as a substring of the stored GTIN through an index. A fragment by isGtinFragment
   * (catalog/gtin-fragments.ts), checked by the caller: engines answer other text unreliably.
   */
  gtin?: string;
  offset: number;
  limit: number;
}

/**
 * A page of storefront products: their stored documents as the text of one JSON array, joined by
 * the engine, which the hot path splices into a response with no parse and no re-serialisation.
 */
export interface StorefrontPage {
  items: RawJson<StorefrontProduct[]> | RawJsonBytes<StorefrontProduct[]>;
  total: number;
}

export interface ImportReport {
  inserted: number;
  updated: number;
}

export interface CatalogStore {
  /** Storefront products as their stored JSON documents (with `cursor`, `created_at` and `updated_at`). */
  listStorefrontDocuments(query: StorefrontQuery): Promise<StorefrontPage>;
  /**
   * Catalog variants in import order, each as its JSON text (fields and order as imported), so
   * the hot path can splice them into a response unparsed.
   */
  searchVariantDocuments(query: VariantQuery): Promise<Page<RawJson<CatalogVariant>>>;
  /** Brands by number of catalog products, descending; ties by brand name ascending. */
  topBrands(limit: number): Promise<BrandCount[]>;
  /**
   * By UUID or slug: the full (Pro) product as the JSON text it was imported as (field order
   * included), or null. Text, not an object, so the hot path can splice it into a response unparsed.
   */
  getProductDocument(idOrSlug: string): Promise<RawJson<CatalogProductPro> | null>;
  /** By UUID or slug, as getProductDocument: the product's `id`, or null. */
  productIdOf(idOrSlug: string): Promise<string | null>;
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
  /**
   * Optional: loads into memory what answers rely on (the storefront index), so the first
   * requests after start do not wait for it. Resolves once loaded; rejects with the engine's error.
   * `untilSnapshotWritten`: also waits for the snapshot the load may write (import and seed end so,
   * so the next start loads the snapshot).
   */
  warm?(options?: { untilSnapshotWritten?: boolean }): Promise<void>;
  close(): Promise<void>;
  /** Optional: the engine's bulk-load capability, for `catalog import` and `catalog seed`. */
  readonly bulkLoading?: BulkLoading;
}

/** Index upkeep an engine can skip while a large load runs into an empty catalog. */
export interface BulkLoading {
  /**
   * Before a load into an EMPTY catalog: stops upkeep of the variant search indexes (searches scan
   * meanwhile, with the same answers). Returns false, deferring nothing, when the catalog has
   * variants. `optimize` must follow.
   */
  deferIndexes(): Promise<boolean>;
  /** After a bulk load (and by `catalog migrate`): rebuilds what was deferred, refreshes statistics. */
  optimize(): Promise<void>;
}
