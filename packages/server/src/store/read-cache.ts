// Aggregates, recently read product documents, variant pages and storefront pages (the documents
// of a listing's page, by its cursors), kept by IndexedCatalogStore for whichever engine is behind it.
// Guarantees: an entry answers only for the catalog version it was read under (`at` drops every
// entry when the version moves); an answer read while the version moved (a write committed
// meanwhile) is not kept, so a read that raced a write is never served after it. Concurrent asks
// for one aggregate share one computation; a failed one is not kept.
// Limits: at most DOCUMENT_CACHE_ENTRIES documents, PAGE_CACHE_CHARS characters of variant pages
// and STOREFRONT_PAGE_CACHE_BYTES of storefront pages (kept as UTF-8), the least recently read
// dropped first; a page is kept only when asked for a second time, so a run of one-off queries
// neither evicts the hot pages nor leaves the garbage collector copying pages nobody reads again.
import type { CatalogProductPro, CatalogVariant, Page, StorefrontProduct } from '../catalog/model.ts';
import { storedJsonBytes, type RawJson, type RawJsonBytes } from '../catalog/raw-json.ts';

/** Product documents kept in memory: the hot ones of a read-mostly catalog, a few MB at most. */
const DOCUMENT_CACHE_ENTRIES = 2048;
/** Variant pages kept in memory: their texts total at most this many characters (UTF-16 units). */
const PAGE_CACHE_CHARS = 16 * 1024 * 1024;
/** Storefront pages kept in memory, in bytes. A listing page of 20 products is about 50 KB: room for about 600. */
const STOREFRONT_PAGE_CACHE_BYTES = 32 * 1024 * 1024;
/** A page larger than this share of its budget is not kept: it would push out many others. */
const LARGEST_SHARE = 1 / 16;

type VariantPage = Page<RawJson<CatalogVariant>>;
/** A storefront listing's documents as the engine hands them over: one JSON array, text or bytes. */
type StorefrontPage = RawJson<StorefrontProduct[]> | RawJsonBytes<StorefrontProduct[]>;

/** Pages kept from their second ask, within `budget` units of `sizeOf`, the least recently read out first. */
class PageShelf<T> {
  readonly #budget: number;
  readonly #sizeOf: (page: T) => number;
  /** In order of last read (a Map keeps insertion order). */
  readonly #pages = new Map<string, { page: T; size: number }>();
  #used = 0;
  readonly #seenOnce = new Map<string, true>();

  constructor(budget: number, sizeOf: (page: T) => number) {
    this.#budget = budget;
    this.#sizeOf = sizeOf;
  }

  get(key: string): T | undefined {
    const entry = this.#pages.get(key);
    if (entry === undefined) return undefined;
    this.#pages.delete(key);
    this.#pages.set(key, entry);
    return entry.page;
  }

  /** Keeps `page()` when `key` is offered for the second time (only then is it made). */
  offer(key: string, page: () => T): void {
    // Kept already (asked for again while it was being read): nothing to add.
    if (this.#pages.has(key)) return;
    if (!this.#seenOnce.delete(key)) {
      remember(this.#seenOnce, key, true);
      return;
    }
    const value = page();
    const size = this.#sizeOf(value);
    if (size > this.#budget * LARGEST_SHARE) return;
    for (const [oldest, entry] of this.#pages) {
      if (this.#used + size <= this.#budget) break;
      this.#pages.delete(oldest);
      this.#used -= entry.size;
    }
    this.#pages.set(key, { page: value, size });
    this.#used += size;
  }

  clear(): void {
    this.#pages.clear();
    this.#used = 0;
  }
}

export class ReadCache {
  #version: string | undefined;
  /** Moves whenever entries are dropped: an answer read across a move is not kept. */
  #generation = 0;
  readonly #documents = new Map<string, RawJson<CatalogProductPro> | null>();
  /** A product's `id` by the UUID or slug asked for (null: no such product), so that the document is not parsed again to learn it. */
  readonly #productIds = new Map<string, string | null>();
  readonly #pages = new PageShelf<VariantPage>(PAGE_CACHE_CHARS, (page) => page.items.reduce((sum, item) => sum + item.length, 0));
  readonly #storefrontPages = new PageShelf<RawJsonBytes<StorefrontProduct[]>>(STOREFRONT_PAGE_CACHE_BYTES, (page) => page.byteLength);
  readonly #aggregates = new Map<string, Promise<unknown>>();

  get generation(): number {
    return this.#generation;
  }

  /** Drops every entry unless they were read under `version`. */
  at(version: string): void {
    if (version === this.#version) return;
    this.clear();
    this.#version = version;
  }

  clear(): void {
    this.#documents.clear();
    this.#productIds.clear();
    this.#pages.clear();
    this.#storefrontPages.clear();
    this.#aggregates.clear();
    this.#generation += 1;
  }

  /** `compute`'s answer for `key`, shared by every caller until entries are dropped. */
  aggregate<T>(key: string, compute: () => Promise<T>): Promise<T> {
    const known = this.#aggregates.get(key) as Promise<T> | undefined;
    if (known !== undefined) return known;
    const computed = compute();
    this.#aggregates.set(key, computed);
    computed.catch(() => {
      if (this.#aggregates.get(key) === computed) this.#aggregates.delete(key);
    });
    return computed;
  }

  /** A document (or null: no such product) read before, or undefined. */
  document(key: string): RawJson<CatalogProductPro> | null | undefined {
    return this.#documents.get(key);
  }

  /** Keeps `document`, read since `generation`, unless entries were dropped meanwhile. */
  keepDocument(key: string, document: RawJson<CatalogProductPro> | null, generation: number): void {
    if (generation === this.#generation) remember(this.#documents, key, document);
  }

  /** A product's `id` (or null: no such product) learnt before, or undefined. */
  productId(key: string): string | null | undefined {
    return this.#productIds.get(key);
  }

  /** Keeps `id`, learnt since `generation`, unless entries were dropped meanwhile. */
  keepProductId(key: string, id: string | null, generation: number): void {
    if (generation === this.#generation) remember(this.#productIds, key, id);
  }

  page(key: string): VariantPage | undefined {
    return this.#pages.get(key);
  }

  /** Keeps `page`, read since `generation`, if it is asked for a second time and fits. */
  keepPage(key: string, page: VariantPage, generation: number): void {
    if (generation === this.#generation) this.#pages.offer(key, () => page);
  }

  /** The documents of a storefront page, by its cursors (`cursorsKey`), read before: as UTF-8 bytes. */
  storefrontPage(cursorsKey: string): RawJsonBytes<StorefrontProduct[]> | undefined {
    return this.#storefrontPages.get(cursorsKey);
  }

  /**
   * Keeps a storefront page's documents, read since `generation`, if asked for a second time and
   * they fit. Pages of many different filters hold the same products (the first matches in a sort
   * order): the key is the cursors, not the query.
   */
  keepStorefrontPage(cursorsKey: string, page: StorefrontPage, generation: number): void {
    // Kept as bytes: a page served again as text would be encoded again for every response.
    if (generation === this.#generation) this.#storefrontPages.offer(cursorsKey, () => (typeof page === 'string' ? storedJsonBytes(Buffer.from(page)) : page));
  }
}

/** Adds to a map bounded at DOCUMENT_CACHE_ENTRIES, dropping the oldest entry when full. */
function remember<K, V>(cache: Map<K, V>, key: K, value: V): void {
  if (cache.size >= DOCUMENT_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  cache.set(key, value);
}
