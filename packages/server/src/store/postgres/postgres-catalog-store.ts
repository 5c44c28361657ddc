// PostgresCatalogStore: the catalog on PostgreSQL, for several service instances sharing one
// database. Same observable behaviour as SqliteCatalogStore; the shared conformance suite runs
// against both. This class wires the store's jobs together, each in its own module with its own
// guarantees: the storefront reads (postgres-storefront-reads.ts), the index snapshot's place
// (postgres-storefront-snapshot.ts), the catalog reads (postgres-catalog-reads.ts) and the
// writers (postgres-catalog-writes.ts).
//
// Guarantees
// - Documents are stored as text and read back exactly as imported (key order, number spelling).
// - Storefront cursors are exact doubles, strictly increasing in import order, kept when a product
//   is re-imported; concurrent importers never give one id two cursors (the writers' module).
// - Storefront listings are not answered here: the storefront index (catalog/storefront-index.ts,
//   kept current through `storefrontChangesSince`) finds the cursors, this store their documents.
// - Product look-ups and storefront pages asked during one turn of the event loop share one
//   statement (TurnBatches).
// Failure modes
// - Database unreachable, too busy or a statement over statement_timeout: ServiceUnavailable (the
//   pool reconnects by itself once the database answers again). Other engine errors propagate.
// - A closed store answers every call as an unreachable one.
import type pg from 'pg';
import type { ImportReport, VariantQuery } from '../../catalog/catalog-store.ts';
import { ServiceUnavailable } from '../../catalog/errors.ts';
import type { BrandCount, CatalogProductPro, CatalogVariant, Page, StorefrontProduct, StorefrontProductInput } from '../../catalog/model.ts';
import type { RawJson } from '../../catalog/raw-json.ts';
import type { StorefrontIndexRow } from '../../catalog/storefront-index.ts';
import { foldText } from '../../catalog/text.ts';
import { NO_DOCUMENTS, type CatalogEngine, type StorefrontChange } from '../catalog-store.ts';
import type { SnapshotPlace } from '../storefront-snapshot.ts';
import { catalogVersion, countGtins, LOOKUP_BATCH_MAX, lookUpProducts, sampleVariants, topBrands, VariantSearch, type ProductLookup } from './postgres-catalog-reads.ts';
import { deferIndexes, optimize, upsertCatalogProducts, upsertStorefrontProducts } from './postgres-catalog-writes.ts';
import {
  PAGE_BATCH_MAX,
  PAGE_READS_MAX,
  readStorefrontIdentity,
  readStorefrontPages,
  readStorefrontRows,
  STOREFRONT_BY_CURSOR_WHERE,
  STOREFRONT_CHANGES_WHERE,
  type PageRead,
} from './postgres-storefront-reads.ts';
import { storefrontSnapshotPlace } from './postgres-storefront-snapshot.ts';
import { unavailableOnOutage } from './pg-pool.ts';
import { TurnBatches } from './turn-batches.ts';

export { STOREFRONT_BY_CURSOR_WHERE, STOREFRONT_CHANGES_WHERE, storefrontRowsSql } from './postgres-storefront-reads.ts';

const WHAT = 'catalog database';

export class PostgresCatalogStore implements CatalogEngine {
  /** Other instances' storefront writes are looked for at most this often. */
  readonly changePollMs = 250;
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  #closed = false;
  readonly #variants: VariantSearch;
  /** Product look-ups, answered a turn of the event loop at a time (lookUpProducts). */
  readonly #lookups = new TurnBatches<ProductLookup>((batch) => lookUpProducts(this.#pool, batch), { maxBatch: LOOKUP_BATCH_MAX });
  /** Storefront pages, read a turn of the event loop at a time (readStorefrontPages). */
  readonly #pages = new TurnBatches<PageRead>((batch) => readStorefrontPages(this.#pool, batch), { maxBatch: PAGE_BATCH_MAX, maxInFlight: PAGE_READS_MAX });

  /** `ownsPool`: close() also ends the pool. */
  constructor(pool: pg.Pool, options: { ownsPool?: boolean } = {}) {
    this.#pool = pool;
    this.#ownsPool = options.ownsPool ?? false;
    this.#variants = new VariantSearch(pool);
  }

  storefrontChangesSince(after: StorefrontChange, limit: number): Promise<(StorefrontIndexRow & StorefrontChange)[]> {
    return this.#run(() => readStorefrontRows(this.#pool, STOREFRONT_CHANGES_WHERE, [String(after.change), String(after.cursor), limit]));
  }

  storefrontRowsByCursor(after: number, limit: number): Promise<(StorefrontIndexRow & StorefrontChange)[]> {
    return this.#run(() => readStorefrontRows(this.#pool, STOREFRONT_BY_CURSOR_WHERE, [String(after), limit]));
  }

  storefrontIdentity(): Promise<{ catalog: string; lastChange: number }> {
    return this.#run(() => readStorefrontIdentity(this.#pool));
  }

  /** The storefront index snapshot of `catalog`, kept in this database so that every instance loads the one an instance, an import or a seed wrote. */
  storefrontSnapshotPlace(catalog: string): SnapshotPlace {
    return storefrontSnapshotPlace(this.#pool, (work) => this.#run(work), catalog);
  }

  catalogVersion(): Promise<string> {
    return this.#run(() => catalogVersion(this.#pool));
  }

  storefrontDocuments(cursors: readonly number[]): Promise<RawJson<StorefrontProduct[]>> {
    if (cursors.length === 0) return Promise.resolve(NO_DOCUMENTS);
    return this.#run(() => new Promise<RawJson<StorefrontProduct[]>>((resolve, reject) => this.#pages.push({ cursors, resolve, reject })));
  }

  searchVariantDocuments(query: VariantQuery): Promise<Page<RawJson<CatalogVariant>>> {
    return this.#run(() => this.#variants.search(query));
  }

  topBrands(limit: number): Promise<BrandCount[]> {
    return this.#run(() => topBrands(this.#pool, limit));
  }

  getProductDocument(idOrSlug: string): Promise<RawJson<CatalogProductPro> | null> {
    return this.#run(() => new Promise<RawJson<CatalogProductPro> | null>((resolve, reject) => this.#lookups.push({ key: idOrSlug, slug: foldText(idOrSlug), resolve, reject })));
  }

  countGtins(): Promise<number> {
    return this.#run(() => countGtins(this.#pool));
  }

  upsertCatalogProducts(products: readonly CatalogProductPro[]): Promise<ImportReport> {
    if (products.length === 0) return Promise.resolve({ inserted: 0, updated: 0 });
    return this.#run(() => upsertCatalogProducts(this.#pool, products));
  }

  upsertStorefrontProducts(products: readonly StorefrontProductInput[]): Promise<ImportReport> {
    if (products.length === 0) return Promise.resolve({ inserted: 0, updated: 0 });
    return this.#run(() => upsertStorefrontProducts(this.#pool, products));
  }

  sampleVariants(limit: number): Promise<CatalogVariant[]> {
    return this.#run(() => sampleVariants(this.#pool, limit));
  }

  /** Before a bulk load into an EMPTY catalog: see deferIndexes (postgres-catalog-writes.ts). Returns whether it deferred. */
  deferIndexes(): Promise<boolean> {
    return this.#run(() => deferIndexes(this.#pool));
  }

  /** After a bulk load (import, seed), and by `catalog migrate`: see optimize (postgres-catalog-writes.ts). */
  optimize(): Promise<void> {
    return this.#run(() => optimize(this.#pool));
  }

  ping(): Promise<void> {
    return this.#run(async () => {
      await this.#pool.query('SELECT 1');
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownsPool) await this.#pool.end();
  }

  /** Every public method runs through here: a closed store answers like an unreachable one. */
  #run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new ServiceUnavailable(WHAT, { cause: new Error('store closed') }));
    return unavailableOnOutage(WHAT, work);
  }
}
