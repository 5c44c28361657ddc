// Aggregates, recently read product documents, variant pages and storefront pages (the documents
// of a listing's page, by its cursors), kept by IndexedCatalogStore for whichever engine is behind it.
// Guarantees: an entry answers only for the catalog version it was read under (`at` drops every
// entry when the version moves); an answer read while the version moved (a write committed
// meanwhile) is not kept, so a read that raced a write is never served after it. Concurrent asks
// for one aggregate share one computation; a failed one is not kept.
// Limits: at most DOCUMENT_CACHE_ENTRIES documents, and PAGE_CACHE_CHARS characters (or bytes) of
// variant pages and as many of storefront pages, the oldest dropped first; a page is kept only when
// asked for a second time, so a run of one-off queries neither evicts the hot pages nor leaves the
// garbage collector copying pages nobody reads again.
import type { CatalogProductPro, CatalogVariant, Page, StorefrontProduct } from '../catalog/model.ts';
import type { RawJson, RawJsonBytes } from '../catalog/raw-json.ts';

/** Product documents kept in memory: the hot ones of a read-mostly catalog, a few MB at most. */
const DOCUMENT_CACHE_ENTRIES = 2048;
/** Result pages kept in memory, per kind: their texts total at most this many characters (UTF-16 units) or bytes. */
const PAGE_CACHE_CHARS = 16 * 1024 * 1024;
/** A page larger than this share of the budget is not kept: it would push out many others. */
const PAGE_CACHE_LARGEST = PAGE_CACHE_CHARS / 16;

type VariantPage = Page<RawJson<CatalogVariant>>;
/** A storefront listing's documents as the engine hands them over: one JSON array, text or bytes. */
type StorefrontPage = RawJson<StorefrontProduct[]> | RawJsonBytes<StorefrontProduct[]>;

/** Pages kept from their second ask, within PAGE_CACHE_CHARS units of `sizeOf`, the oldest out first. */
class PageShelf<T> {
  readonly #sizeOf: (page: T) => number;
  readonly #pages = new Map<string, { page: T; size: number }>();
  #used = 0;
  readonly #seenOnce = new Map<string, true>();

  constructor(sizeOf: (page: T) => number) {
    this.#sizeOf = sizeOf;
  }

  get(key: string): T | undefined {
    return this.#pages.get(key)?.page;
  }

  offer(key: string, page: T): void {
    if (!this.#seenOnce.delete(key)) {
      remember(this.#seenOnce, key, true);
      return;
    }
    const size = this.#sizeOf(page);
    if (size > PAGE_CACHE_LARGEST) return;
    for (const [oldest, entry] of this.#pages) {
      if (this.#used + size <= PAGE_CACHE_CHARS) break;
      this.#pages.delete(oldest);
      this.#used -= entry.size;
    }
    this.#pages.set(key, { page, size });
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
  readonly #pages = new PageShelf<VariantPage>((page) => page.items.reduce((sum, item) => sum + item.length, 0));
  readonly #storefrontPages = new PageShelf<StorefrontPage>((page) => page.length);
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

  page(key: string): VariantPage | undefined {
    return this.#pages.get(key);
  }

  /** Keeps `page`, read since `generation`, if it is asked for a second time and fits. */
  keepPage(key: string, page: VariantPage, generation: number): void {
    if (generation === this.#generation) this.#pages.offer(key, page);
  }

  /** The documents of a storefront page, by its cursors (`cursorsKey`), read before. */
  storefrontPage(cursorsKey: string): StorefrontPage | undefined {
    return this.#storefrontPages.get(cursorsKey);
  }

  /**
   * Keeps a storefront page's documents, read since `generation`, if asked for a second time and
   * they fit. Pages of many different filters hold the same products (the first matches in a sort
   * order): the key is the cursors, not the query.
   */
  keepStorefrontPage(cursorsKey: string, page: StorefrontPage, generation: number): void {
    if (generation === this.#generation) this.#storefrontPages.offer(cursorsKey, page);
  }
}

/** Adds to a map bounded at DOCUMENT_CACHE_ENTRIES, dropping the oldest entry when full. */
function remember<K, V>(cache: Map<K, V>, key: K, value: V): void {
  if (cache.size >= DOCUMENT_CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  cache.set(key, value);
}
