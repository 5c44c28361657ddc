// IndexedCatalogStore: the CatalogStore every engine is served through. Storefront listings come
// from the in-memory storefront index (catalog/storefront-index.ts); everything else passes
// through to the engine.
// Guarantees:
// - Both engines answer every storefront listing by the same code, so they cannot disagree on
//   matching, ordering or totals; the engine only supplies rows and documents.
// - Freshness: this store's own writes show in the next listing; another process's or instance's
//   writes within the engine's `storefrontPollMs` (plus the time to read them).
// - Concurrent listings share one refresh; a refresh that fails leaves the index as it was and
//   the listing fails with the engine's error (ServiceUnavailable when it is down).
// Limits: the first listing after start loads every storefront row (in pages of LOAD_PAGE rows);
// the index lives in this process's memory.
import type { Page } from '../catalog/model.ts';
import { StorefrontIndex } from '../catalog/storefront-index.ts';
import type { CatalogEngine, CatalogStore, StorefrontChange, StorefrontQuery } from './catalog-store.ts';

const LOAD_PAGE = 10_000;

export class IndexedCatalogStore implements CatalogStore {
  readonly #engine: CatalogEngine;
  readonly #index = new StorefrontIndex();
  #position: StorefrontChange = { change: -1, cursor: 0 };
  #checkedAt = Number.NEGATIVE_INFINITY;
  /** Storefront writes through this store, and how many the index had seen when last refreshed. */
  #writes = 0;
  #writesSeen = 0;
  /** The engine's change token when the index last caught up, if the engine has one. */
  #token: string | undefined;
  #refreshing: Promise<void> | undefined;

  constructor(engine: CatalogEngine) {
    this.#engine = engine;
  }

  /** The engine behind the index, for capabilities outside the port (bulk loading). */
  get engine(): CatalogEngine {
    return this.#engine;
  }

  async listStorefrontDocuments(query: StorefrontQuery): Promise<Page<string>> {
    await this.#fresh();
    const { cursors, total } = this.#index.search(query);
    return { items: await this.#engine.storefrontDocuments(cursors), total };
  }

  async upsertStorefrontProducts(...args: Parameters<CatalogStore['upsertStorefrontProducts']>): ReturnType<CatalogStore['upsertStorefrontProducts']> {
    try {
      return await this.#engine.upsertStorefrontProducts(...args);
    } finally {
      this.#writes += 1;
    }
  }

  searchVariantDocuments(...args: Parameters<CatalogStore['searchVariantDocuments']>): ReturnType<CatalogStore['searchVariantDocuments']> {
    return this.#engine.searchVariantDocuments(...args);
  }
  topBrands(limit: number): Promise<import('../catalog/model.ts').BrandCount[]> {
    return this.#engine.topBrands(limit);
  }
  getProductDocument(idOrSlug: string): Promise<string | null> {
    return this.#engine.getProductDocument(idOrSlug);
  }
  countGtins(): Promise<number> {
    return this.#engine.countGtins();
  }
  upsertCatalogProducts(...args: Parameters<CatalogStore['upsertCatalogProducts']>): ReturnType<CatalogStore['upsertCatalogProducts']> {
    return this.#engine.upsertCatalogProducts(...args);
  }
  sampleVariants(limit: number): ReturnType<CatalogStore['sampleVariants']> {
    return this.#engine.sampleVariants(limit);
  }
  ping(): Promise<void> {
    return this.#engine.ping();
  }
  close(): Promise<void> {
    return this.#engine.close();
  }

  async #fresh(): Promise<void> {
    if (this.#writesSeen === this.#writes && this.#token !== undefined && this.#engine.storefrontChangeToken?.() === this.#token) return;
    // A refresh already under way may have started before this store's latest write: wait for it,
    // then refresh again while anything is still due.
    while (this.#writesSeen !== this.#writes || performance.now() - this.#checkedAt >= this.#engine.storefrontPollMs) {
      await (this.#refreshing ??= this.#refresh().finally(() => {
        this.#refreshing = undefined;
      }));
      if (this.#engine.storefrontPollMs === 0) return;
    }
  }

  async #refresh(): Promise<void> {
    const startedAt = performance.now();
    const writes = this.#writes;
    const token = this.#engine.storefrontChangeToken?.();
    for (;;) {
      const rows = await this.#engine.storefrontChangesSince(this.#position, LOAD_PAGE);
      if (rows.length === 0) break;
      this.#index.upsert(rows);
      const last = rows[rows.length - 1]!;
      this.#position = { change: last.change, cursor: last.cursor };
      if (rows.length < LOAD_PAGE) break;
    }
    this.#checkedAt = startedAt;
    this.#writesSeen = writes;
    this.#token = token;
  }
}
