// The leaf cache: bitsets of filter leaves kept for reuse, as Lucene's query cache keeps its
// filters, with one admission policy for every leaf and every range bucket: a key's first use
// only notes it, its second admits it (the caller keeps its bitset, at once or between requests),
// later uses read it. Storage, eviction and spares are BitsetCache's.
//
// Guarantees: a kept bitset is the leaf's result at the columns' current version and is never
// returned at another; a search that began at an older version (written to while it yielded) is
// told nothing is kept, and keeps nothing. Kept bitsets are copies no search writes to.
// Limits: see BitsetCache; every write to the columns empties it.
import { BitsetCache } from './bitset-cache.ts';
import type { StorefrontColumns } from './columns.ts';

/** Bytes of leaf bitsets kept, or LEAF_CACHE_MIN_KEPT bitsets where those take more. */
const LEAF_CACHE_BYTES = 64 * 2 ** 20;
const LEAF_CACHE_MIN_KEPT = 256;

/** What a key names: a whole leaf, or the slots under one bucket of a range index. */
export type LeafKind = 'leaf' | 'bucket';

export class LeafCache {
  readonly #cache = new BitsetCache(LEAF_CACHE_BYTES, LEAF_CACHE_MIN_KEPT);
  readonly #columns: StorefrontColumns;

  constructor(columns: StorefrontColumns) {
    this.#columns = columns;
  }

  /**
   * A use of `key` by a search that began at `version`: the kept bitset (read it, do not write to
   * it), or whether the leaf is admitted (true from its second use: the caller keeps its bitset).
   * False, and not counted, for a search of an older version or a leaf with no key.
   */
  use(key: string | undefined, version: number, kind: LeafKind = 'leaf'): Uint32Array | boolean {
    if (key === undefined || version !== this.#columns.version) return false;
    return this.#cache.lookup(key, version, kind);
  }

  /** Whether a bitset is kept for `key` now; neither counted nor a use. */
  has(key: string): boolean {
    return this.#cache.has(key, this.#columns.version);
  }

  /** The bitset kept for `key` now, counted as a hit and a use; undefined, neither counted nor noted, when there is none. */
  kept(key: string, kind: LeafKind = 'leaf'): Uint32Array | undefined {
    return this.#cache.kept(key, this.#columns.version, kind);
  }

  /** Keeps a copy of `bits` for `key`, at the version of the last use. */
  keep(key: string, bits: Uint32Array): void {
    this.#cache.keep(key, bits);
  }

  /** Uses that found a kept bitset, and all uses, since the start: of leaves, and of range buckets. */
  get stats(): Record<LeafKind, { hits: number; lookups: number }> {
    const of = (kind: string): { hits: number; lookups: number } => ({ hits: 0, lookups: 0, ...this.#cache.tally.get(kind) });
    return { leaf: of('leaf'), bucket: of('bucket') };
  }
}
