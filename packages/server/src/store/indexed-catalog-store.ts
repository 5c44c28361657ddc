// IndexedCatalogStore: the CatalogStore every engine is served through. Storefront listings come
// from the in-memory storefront index (catalog/storefront-index.ts); the aggregates (GTIN count,
// top brands) are computed once per change of the catalog and shared by every request meanwhile;
// recently read product documents and variant pages are kept per catalog version (read-cache.ts);
// writes pass through to the engine.
// Guarantees:
// - Both engines answer every storefront listing by the same code, so they cannot disagree on
//   matching, ordering or totals; the engine only supplies rows and documents.
// - Freshness: this store's own writes show in the next answer; another process's or instance's
//   writes within the engine's `changePollMs` (plus the time to read them), listings, aggregates
//   and cached reads alike. A failed aggregate is never kept.
// - Concurrent listings share one refresh; a refresh that fails leaves the index as it was and
//   the listing fails with the engine's error (ServiceUnavailable when it is down).
// - Snapshot (with `snapshots`): warm() loads the index from the snapshot of this catalog when
//   there is a sound one (storefront-snapshot.ts says which are served) and catches up through the
//   change feed; else it loads every row. After a warm() that read at least SNAPSHOT_REWRITE_SHARE
//   of the products from the engine, it writes a new snapshot in the background; a refresh that
//   finds changes waits for that write before applying them.
// Limits: warm() (the service calls it at start) or else the first listing loads every storefront
// row (in pages of LOAD_PAGE rows), then builds the index's search structures in one synchronous
// step; the index lives in this process's memory.
import type { BrandCount, CatalogProductPro, CatalogVariant, Page } from '../catalog/model.ts';
import type { RawJson } from '../catalog/raw-json.ts';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { arenaStats } from '../catalog/kernels.ts';
import { StorefrontIndex } from '../catalog/storefront-index.ts';
import { gaugeReading } from '../metrics.ts';
import type { BulkLoading, CatalogStore, StorefrontPage, StorefrontQuery, VariantQuery } from '../catalog/catalog-store.ts';
import type { CatalogEngine, StorefrontChange } from './catalog-store.ts';
import { ReadCache } from './read-cache.ts';
import { readSnapshot, snapshotFile, writeSnapshot, type SnapshotPlace, type SnapshotRejection } from './storefront-snapshot.ts';

const LOAD_PAGE = 10_000;
/** Changes applied per step of a refresh (see #refresh). */
const CHANGES_PAGE = 2_000;

/** Snapshots kept as files in `dir`, one per catalog. */
export function snapshotsIn(dir: string): (catalog: string) => SnapshotPlace {
  return (catalog) => snapshotFile(join(dir, `storefront-${createHash('sha256').update(catalog).digest('hex').slice(0, 24)}.index`));
}
/** Share of the products warm() must have read from the engine for a new snapshot to be written. */
const SNAPSHOT_REWRITE_SHARE = 0.01;

export interface IndexedCatalogStoreOptions {
  /** Where the storefront index snapshot of a catalog (named by its identity) lives; none when absent. */
  snapshots?: (catalog: string) => SnapshotPlace;
  /** Fewer storefront products than this are not worth a snapshot (a load is quick). */
  snapshotMinProducts?: number;
}

/**
 * The snapshot places an `indexSnapshotDir` option names for a catalog stored at `sqliteFile`,
 * or, for PostgreSQL (no `sqliteFile`), `inDatabase` for `default`.
 */
export function snapshotPlaces(
  option: string | undefined,
  sqliteFile: string | undefined,
  inDatabase?: (catalog: string) => SnapshotPlace,
): IndexedCatalogStoreOptions {
  if (option === undefined || option === 'none') return {};
  if (option !== 'default') return { snapshots: snapshotsIn(option) };
  if (sqliteFile !== undefined) return { snapshots: snapshotsIn(dirname(sqliteFile)) };
  return inDatabase === undefined ? {} : { snapshots: inDatabase };
}

/** What warm() did with the snapshot: loaded it, or why not; and the write it started, if any. */
export interface SnapshotStatus {
  loaded: boolean;
  rejected?: SnapshotRejection;
  reason?: string;
  written?: Promise<void>;
}

export class IndexedCatalogStore implements CatalogStore {
  readonly #engine: CatalogEngine;
  #index = new StorefrontIndex();
  readonly #options: IndexedCatalogStoreOptions;
  /** A snapshot being written: changes to the index wait for it. */
  #snapshotWriting: Promise<void> | undefined;
  #snapshot: SnapshotStatus = { loaded: false };
  #position: StorefrontChange = { change: -1, cursor: 0 };
  /** Storefront rows read from the engine's change feed so far. */
  #rowsRead = 0;
  #checkedAt = Number.NEGATIVE_INFINITY;
  /** Storefront writes through this store, and how many the index had seen when last refreshed. */
  #writes = 0;
  #writesSeen = 0;
  /** The engine's change token when the index last caught up, if the engine has one. */
  #token: string | undefined;
  #refreshing: Promise<void> | undefined;
  /** Settles once the refresh under way has applied its first page (or ended). */
  #firstPageApplied: Promise<void> = Promise.resolve();
  #versionRead: Promise<string> | undefined;
  #versionReadAt = Number.NEGATIVE_INFINITY;
  /** Aggregates, documents and pages, kept while the engine's change token (or poll period) holds. */
  readonly #reads = new ReadCache();

  constructor(engine: CatalogEngine, options: IndexedCatalogStoreOptions = {}) {
    this.#engine = engine;
    this.#options = options;
    // Since the index was built or loaded; a process serves one store (the last one made reports).
    gaugeReading('catalog_storefront_leaf_cache_lookups', "Filter leaves looked up in the storefront index's leaf cache since the index was loaded: found kept (hit) or not (miss).", ['result'], () => {
      const { hits, lookups } = this.#index.leafCacheStats.leaf;
      return { hit: hits, miss: lookups - hits };
    });
    gaugeReading('catalog_storefront_bucket_cache_lookups', "Range buckets (the slots below a bound's bucket) looked up in the storefront index's leaf cache since the index was loaded, for range leaves not kept whole.", ['result'], () => {
      const { hits, lookups } = this.#index.leafCacheStats.bucket;
      return { hit: hits, miss: lookups - hits };
    });
    gaugeReading(
      'catalog_storefront_pair_counts',
      "Filters of two range bounds on different number fields counted from their pair's table in the storefront index (counted), those whose page was then walked with no bitset (scanned), and the tables built (built) or whose build, or following of a write, failed (failed), since the index was loaded.",
      ['event'],
      () => {
        const { counted, scanned, builds, failures } = this.#index.pairCountStats;
        return { counted, scanned, built: builds, failed: failures };
      },
    );
    gaugeReading('catalog_storefront_sparse_answers', "Storefront listings answered from the posting lists of their most selective operand alone, with no bitset of the catalog, since the index was loaded.", [], () => ({ answers: this.#index.sparseAnswers }));
    gaugeReading(
      'catalog_storefront_later_keeps',
      "What second uses of filter leaves asked the storefront index to keep (whole leaves narrowed in place on their first use, range buckets, buckets' sorted members), made between requests (made) or failed (failed), since the index was loaded.",
      ['result'],
      () => {
        const { made, failed } = this.#index.laterStats;
        return { made, failed };
      },
    );
    gaugeReading(
      'catalog_storefront_bitset_memory_bytes',
      "The WebAssembly memory holding the storefront index's bitsets (range digits, pooled and kept bitsets): bytes handed out so far (it never shrinks), and of those the bytes free for reuse.",
      ['state'],
      () => {
        const { reservedBytes, freeBytes } = arenaStats();
        return { reserved: reservedBytes, free: freeBytes };
      },
    );
  }

  /** What the last warm() did with the snapshot. */
  get snapshot(): SnapshotStatus {
    return this.#snapshot;
  }

  /** The engine behind the index (tests reach engine-specific state through it). */
  get engine(): CatalogEngine {
    return this.#engine;
  }

  get bulkLoading(): BulkLoading {
    return { deferIndexes: () => this.#engine.deferIndexes(), optimize: () => this.#engine.optimize() };
  }

  async listStorefrontDocuments(query: StorefrontQuery): Promise<StorefrontPage> {
    await this.#fresh();
    const { cursors, total } = await this.#index.search(query);
    const key = cursors.join(',');
    const items = await this.#cachedRead(
      () => this.#reads.storefrontPage(key),
      () => this.#engine.storefrontDocuments(cursors),
      (page, generation) => this.#reads.keepStorefrontPage(key, page, generation),
    );
    return { items, total };
  }

  async upsertStorefrontProducts(...args: Parameters<CatalogStore['upsertStorefrontProducts']>): ReturnType<CatalogStore['upsertStorefrontProducts']> {
    try {
      return await this.#engine.upsertStorefrontProducts(...args);
    } finally {
      this.#writes += 1;
      this.#versionRead = undefined;
    }
  }

  searchVariantDocuments(query: VariantQuery): Promise<Page<RawJson<CatalogVariant>>> {
    const key = JSON.stringify(query);
    return this.#cachedRead(
      () => this.#reads.page(key),
      () => this.#engine.searchVariantDocuments(query),
      (page, generation) => this.#reads.keepPage(key, page, generation),
    );
  }
  async topBrands(limit: number): Promise<BrandCount[]> {
    const brands = await this.#aggregate(`brands:${limit}`, () => this.#engine.topBrands(limit));
    return brands.map((entry) => ({ ...entry }));
  }
  getProductDocument(idOrSlug: string): Promise<RawJson<CatalogProductPro> | null> {
    return this.#cachedRead(
      () => this.#reads.document(idOrSlug),
      () => this.#engine.getProductDocument(idOrSlug),
      (document, generation) => this.#reads.keepDocument(idOrSlug, document, generation),
    );
  }

  productIdOf(idOrSlug: string): Promise<string | null> {
    return this.#cachedRead(
      () => this.#reads.productId(idOrSlug),
      async () => {
        // Through the document cache: a product looked up both ways is read from the engine once.
        const document = await this.getProductDocument(idOrSlug);
        return document === null ? null : (JSON.parse(document) as Pick<CatalogProductPro, 'id'>).id;
      },
      (id, generation) => this.#reads.keepProductId(idOrSlug, id, generation),
    );
  }

  /** What `known` finds for the current catalog version, else `read`'s answer, offered to `keep`. */
  async #cachedRead<T>(known: () => T | undefined, read: () => Promise<T>, keep: (value: T, generation: number) => void): Promise<T> {
    this.#reads.at(await this.#version());
    const found = known();
    if (found !== undefined) return found;
    const generation = this.#reads.generation;
    const value = await read();
    keep(value, generation);
    return value;
  }
  countGtins(): Promise<number> {
    return this.#aggregate('gtin-count', () => this.#engine.countGtins());
  }
  async upsertCatalogProducts(...args: Parameters<CatalogStore['upsertCatalogProducts']>): ReturnType<CatalogStore['upsertCatalogProducts']> {
    try {
      return await this.#engine.upsertCatalogProducts(...args);
    } finally {
      this.#reads.clear();
      this.#versionRead = undefined;
    }
  }
  sampleVariants(limit: number): ReturnType<CatalogStore['sampleVariants']> {
    return this.#engine.sampleVariants(limit);
  }
  ping(): Promise<void> {
    return this.#engine.ping();
  }
  /** Loads the storefront index (from its snapshot, or every storefront row) and builds what its searches use. */
  async warm(options: { untilSnapshotWritten?: boolean } = {}): Promise<void> {
    const places = this.#options.snapshots;
    if (places === undefined) {
      await this.#fresh(true);
      this.#index.prepare();
      return;
    }
    const { catalog, lastChange } = await this.#engine.storefrontIdentity();
    const place = places(catalog);
    const read = this.#index.size === 0 ? await readSnapshot(place, catalog, lastChange) : { rejected: 'missing' as const, reason: 'the index was loaded already' };
    if ('index' in read) {
      this.#index = read.index;
      this.#position = read.position;
      this.#snapshot = { loaded: true };
    } else {
      this.#snapshot = { loaded: false, rejected: read.rejected, reason: read.reason };
    }
    const rowsBefore = this.#rowsRead;
    this.#checkedAt = Number.NEGATIVE_INFINITY;
    await this.#fresh(true);
    this.#index.prepare();
    const fromEngine = this.#rowsRead - rowsBefore;
    const size = this.#index.size;
    if (size >= (this.#options.snapshotMinProducts ?? 50_000) && fromEngine >= Math.max(1, size * SNAPSHOT_REWRITE_SHARE)) {
      const position = { ...this.#position };
      const state = this.#index.state();
      // Refreshes wait for the write: the arrays written are the index's own.
      const written = writeSnapshot(place, catalog, position, state).finally(() => {
        if (this.#snapshotWriting === written) this.#snapshotWriting = undefined;
      });
      this.#snapshotWriting = written.catch(() => {});
      this.#snapshot = { ...this.#snapshot, written };
      if (options.untilSnapshotWritten === true) await written;
    }
  }
  close(): Promise<void> {
    return this.#engine.close();
  }

  /** `compute`'s answer, shared until the catalog may have changed. */
  async #aggregate<T>(key: string, compute: () => Promise<T>): Promise<T> {
    this.#reads.at(await this.#version());
    return this.#reads.aggregate(key, compute);
  }

  /** The engine's catalog version: its change token when it has one, else asked at most every poll period. */
  #version(): Promise<string> {
    const token = this.#engine.changeToken?.();
    if (token !== undefined) return Promise.resolve(token);
    const now = performance.now();
    if (this.#versionRead === undefined || now - this.#versionReadAt >= this.#engine.changePollMs) {
      this.#versionReadAt = now;
      const read = this.#engine.catalogVersion();
      this.#versionRead = read;
      read.catch(() => {
        if (this.#versionRead === read) this.#versionRead = undefined;
      });
    }
    return this.#versionRead;
  }

  /**
   * Brings the index up to date before a read. `whole`: wait for every change due (warm(), and
   * whenever this store's own writes are not yet seen). Otherwise (other processes' writes) a
   * read waits for the refresh's first page at most: a change of up to CHANGES_PAGE products is
   * seen by the next read as before, a larger one page by page while reads go on (see #refresh).
   */
  async #fresh(whole = false): Promise<void> {
    if (this.#writesSeen === this.#writes && this.#token !== undefined && this.#engine.changeToken?.() === this.#token) return;
    // A refresh already under way may have started before this store's latest write: wait for it,
    // then refresh again while anything is still due.
    while (this.#writesSeen !== this.#writes || performance.now() - this.#checkedAt >= this.#engine.changePollMs) {
      const refresh = (this.#refreshing ??= this.#refresh().finally(() => {
        this.#refreshing = undefined;
      }));
      if (!whole && this.#writesSeen === this.#writes && this.#position.change >= 0) {
        await Promise.race([refresh, this.#firstPageApplied]);
        return;
      }
      await refresh;
      if (this.#engine.changePollMs === 0) return;
    }
  }

  /**
   * Applies the changes since the index's position, CHANGES_PAGE rows at a time with a turn of the
   * event loop between pages, so that a large write elsewhere (a rewrite of 1% of a large catalog)
   * does not hold every request for the whole of it: each page is one synchronous step of bounded
   * size, and the index answers between pages with some of the write applied (as the engine itself
   * shows a write committed in several transactions). An empty index is loaded whole first.
   */
  async #refresh(): Promise<void> {
    let firstPage!: () => void;
    this.#firstPageApplied = new Promise((resolve) => (firstPage = resolve));
    try {
      const startedAt = performance.now();
      const writes = this.#writes;
      const token = this.#engine.changeToken?.();
      if (this.#index.size === 0 && this.#position.change < 0) await this.#loadByCursor();
      for (;;) {
        const rows = await this.#engine.storefrontChangesSince(this.#position, CHANGES_PAGE);
        if (rows.length === 0) break;
        // The snapshot being written is the index's own arrays: changes wait until it is out.
        await this.#snapshotWriting;
        this.#index.upsert(rows);
        this.#rowsRead += rows.length;
        const last = rows[rows.length - 1]!;
        this.#position = { change: last.change, cursor: last.cursor };
        if (rows.length < CHANGES_PAGE) break;
        firstPage();
        await new Promise((resolve) => setImmediate(resolve));
      }
      this.#checkedAt = startedAt;
      this.#writesSeen = writes;
      this.#token = token;
    } finally {
      firstPage();
    }
  }

  /**
   * Loads an empty index in cursor order, then sets the feed position past every change the load
   * saw: rows written meanwhile (changes above `lastChange`, read before the load) come again
   * through the feed, which applies them as rewrites.
   */
  async #loadByCursor(): Promise<void> {
    const { lastChange } = await this.#engine.storefrontIdentity();
    let after = 0;
    let page = this.#engine.storefrontRowsByCursor(after, LOAD_PAGE);
    for (;;) {
      const rows = await page;
      if (rows.length === 0) break;
      after = rows[rows.length - 1]!.cursor;
      const full = rows.length === LOAD_PAGE;
      // The next page is asked for before this one is indexed, so a server engine reads it
      // meanwhile. Should indexing throw, the page read ahead is dropped (its failure with it).
      if (full) {
        page = this.#engine.storefrontRowsByCursor(after, LOAD_PAGE);
        page.catch(() => {});
      }
      this.#index.upsert(rows);
      this.#rowsRead += rows.length;
      if (!full) break;
    }
    // No row of change <= lastChange lies past the last cursor read: those were committed before
    // the load began, and new products take cursors above every earlier one.
    this.#position = { change: lastChange, cursor: after };
  }
}
