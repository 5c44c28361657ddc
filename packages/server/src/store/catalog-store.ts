// What every storage engine implements (CatalogEngine: SqliteCatalogStore, PostgresCatalogStore)
// behind the catalog's port (CatalogStore, catalog/catalog-store.ts). An engine does not answer
// storefront listings itself: IndexedCatalogStore (indexed-catalog-store.ts) answers them from the
// in-memory storefront index, which follows the engine's storefront changes.
import type { BulkLoading, CatalogStore } from '../catalog/catalog-store.ts';
import type { StorefrontProduct } from '../catalog/model.ts';
import { storedJson, type RawJson, type RawJsonBytes } from '../catalog/raw-json.ts';
import type { StorefrontIndexRow } from '../catalog/storefront-index.ts';

/** The page of no products. */
export const NO_DOCUMENTS = storedJson<StorefrontProduct[]>('[]');

/** A position in an engine's storefront change feed: rows are ordered by (change, cursor). */
export interface StorefrontChange {
  change: number;
  cursor: number;
}

/** What an engine offers the storefront index. */
export interface StorefrontSource {
  /**
   * Storefront rows written after `after`, ordered by (change, cursor), at most `limit`. Every
   * upsert transaction stamps its rows with a change number above every committed one, and a
   * reader never sees a higher change committed before a lower one.
   */
  storefrontChangesSince(after: StorefrontChange, limit: number): Promise<(StorefrontIndexRow & StorefrontChange)[]>;
  /**
   * Storefront rows with a cursor above `after`, ascending by cursor, at most `limit`: how an empty
   * index loads (slots must ascend with cursors, which the change feed's order does not give once
   * older products were rewritten). Each row carries its change number.
   */
  storefrontRowsByCursor(after: number, limit: number): Promise<(StorefrontIndexRow & StorefrontChange)[]>;
  /**
   * Which catalog this is (a value fixed when the database was created, different for every
   * database) and the change number of its latest storefront write (0 when none): a storefront
   * index snapshot is served only on the catalog it was taken of, and only when the catalog has
   * reached the snapshot's position.
   */
  storefrontIdentity(): Promise<{ catalog: string; lastChange: number }>;
  /**
   * The JSON array of the stored documents of these cursors, in the order given (cursors unknown
   * to the store are skipped), read by one statement and joined by the engine, as UTF-8 bytes
   * where the driver can hand them over without making a string.
   */
  storefrontDocuments(cursors: readonly number[]): Promise<RawJson<StorefrontProduct[]> | RawJsonBytes<StorefrontProduct[]>>;
  /**
   * A value that changes with every committed catalog or storefront write, read from the engine;
   * the decorator asks at most every `changePollMs` when `changeToken` is absent.
   */
  catalogVersion(): Promise<string>;
  /**
   * How long, in ms, an answer may rely on memory (the storefront index, aggregates) without
   * asking the engine for changes made by other processes; 0 when asking costs nothing.
   */
  readonly changePollMs: number;
  /**
   * Optional: a value that changes whenever any process may have committed a write. When it has
   * not changed since the last look, the index asks nothing.
   */
  changeToken?(): string;
}

/**
 * The number countGtins answers, the same rule on every engine: distinct GTIN-14 forms (the
 * `gtin14` column, comparableGtin of catalog/gtin.ts) over all variants; a variant without a GTIN
 * has none to count.
 */
export const DISTINCT_GTINS_SQL = "SELECT CAST(count(DISTINCT gtin14) AS INTEGER) AS n FROM catalog_variants WHERE gtin14 <> ''";

/** What an engine implements: the store less what IndexedCatalogStore answers itself (listings from its index, product ids from the engine's documents). */
export type CatalogEngine = Omit<CatalogStore, 'listStorefrontDocuments' | 'bulkLoading' | 'productIdOf'> & StorefrontSource & BulkLoading;

/**
 * A storefront row as the index takes it, from the row an engine read as an array (node:sqlite's
 * returnArrays, pg's rowMode 'array') of the columns in the order below: an array per row and one
 * object literal of a fixed shape, rather than a driver's row object copied into another.
 * `change` and `cursor` come as doubles (cursors are exact as doubles), `available` as a boolean
 * or 0/1, `tags` as the stored JSON array.
 */
export function storefrontIndexRow(row: readonly unknown[]): StorefrontIndexRow & StorefrontChange {
  const tags = row[17] as string;
  return {
    change: row[0] as number,
    cursor: row[1] as number,
    id: row[2] as string,
    product_id: row[3] as string,
    shop_name: row[4] as string,
    brand: row[5] as string,
    product_type: row[6] as string,
    title: row[7] as string,
    slug: row[8] as string,
    price_min: row[9] as number,
    price_max: row[10] as number,
    price_display: row[11] as number,
    available: row[12] === true || row[12] === 1,
    created_at: row[13] as number,
    updated_at: row[14] as number,
    product_created_at: row[15] as number,
    product_published_at: row[16] as number,
    tags: tags === '[]' ? NO_TAGS : (JSON.parse(tags) as string[]),
  };
}
const NO_TAGS: readonly string[] = Object.freeze([]);
