// The leaf cache: bitsets of filter leaves kept for reuse, as Lucene's query cache keeps its
// filters, with one admission policy for every leaf and every range bucket: a key's first use
// only notes it, its second admits it (the caller keeps its bitset, at once or between requests),
// later uses read it. Storage, eviction and spares are BitsetCache's. A write does not empty it:
// each kept bitset follows the batch slot by slot (afterWrite).
//
// Guarantees: a kept bitset is the leaf's result at the columns' current version: after a write,
// each kept bitset holds, for every slot the batch added, and for every slot it rewrote where it
// changed the key's field, what the key's column check (leaf-costs.ts) says of the slot now; a
// search that began at an older version (written to while it yielded) is told nothing is kept, and
// keeps nothing. Kept bitsets are copies no search writes to, with room for ROOM_WORDS × 32 more
// slots.
// Limits: see BitsetCache. A key with no column check is forgotten by any write that adds a slot or
// changes its field; the slots under a range bucket are forgotten when their range index is built
// again; a batch too large to follow (SlotChanges.bulk) empties the cache.
import { BitsetCache } from './bitset-cache.ts';
import { wordsFor } from './bits.ts';
import type { StorefrontColumns } from './columns.ts';
import { columnCheck, wordCheck } from './leaf-costs.ts';
import { keyedLeafOf } from './leaf-keys.ts';
import type { SlotChanges } from './slot-changes.ts';

/** Bytes of leaf bitsets kept, or LEAF_CACHE_MIN_KEPT bitsets where those take more. */
const LEAF_CACHE_BYTES = 64 * 2 ** 20;
const LEAF_CACHE_MIN_KEPT = 256;
/**
 * Words a kept bitset has past the slots held, for slots added later: a kept bitset is widened
 * (copied) once per ROOM_WORDS × 32 slots added, and takes that much more of the budget.
 */
const ROOM_WORDS = 256;
/** The fields a word's slots depend on. */
const WORD_FIELDS = ['title', 'brand', 'product_type', 'tags'];

/** What a key names: a whole leaf, or the slots under one bucket of a range index. */
export type LeafKind = 'leaf' | 'bucket';

/** How a kept bitset follows a write: the fields its slots depend on, and the check of one slot. */
interface Follower {
  fields: readonly string[];
  check: (slot: number) => boolean;
}

export class LeafCache {
  readonly #cache = new BitsetCache(LEAF_CACHE_BYTES, LEAF_CACHE_MIN_KEPT);
  readonly #columns: StorefrontColumns;
  /** What the cache keeps is of this generation: a batch too large to follow starts the next. */
  #generation = 0;

  constructor(columns: StorefrontColumns) {
    this.#columns = columns;
    columns.onRangeRebuilt = (field) => {
      for (const [key] of this.#cache.entries()) {
        const keyed = keyedLeafOf(key);
        if (keyed.kind === 'under' && keyed.field === field) this.#cache.forget(key);
      }
    };
  }

  /**
   * A use of `key` by a search that began at `version`: the kept bitset (read it, do not write to
   * it), or whether the leaf is admitted (true from its second use: the caller keeps its bitset).
   * False, and not counted, for a search of an older version or a leaf with no key.
   */
  use(key: string | undefined, version: number, kind: LeafKind = 'leaf'): Uint32Array | boolean {
    if (key === undefined || version !== this.#columns.version) return false;
    return this.#cache.lookup(key, this.#generation, kind);
  }

  /** Whether a bitset is kept for `key` now; neither counted nor a use. */
  has(key: string): boolean {
    return this.#cache.has(key, this.#generation);
  }

  /** The bitset kept for `key` now, counted as a hit and a use; undefined, neither counted nor noted, when there is none. */
  kept(key: string, kind: LeafKind = 'leaf'): Uint32Array | undefined {
    return this.#cache.kept(key, this.#generation, kind);
  }

  /** Keeps a copy of `bits` (of the columns as they are) for `key`. */
  keep(key: string, bits: Uint32Array): void {
    this.#cache.keep(key, bits, wordsFor(this.#columns.size) + ROOM_WORDS);
  }

  /** Follows a write batch: every kept bitset, slot by slot (see the guarantees above). */
  afterWrite(changes: SlotChanges): void {
    if (changes.empty) return;
    if (changes.bulk) {
      this.#generation += 1;
      return;
    }
    const columns = this.#columns;
    const words = wordsFor(columns.size);
    const room = words + ROOM_WORDS;
    for (const [key, held] of this.#cache.entries()) {
      const follower = this.#followerOf(key);
      const rewritten = follower !== undefined && follower.fields.some((field) => changes.touched.has(field)) ? changes.rewritten : [];
      if (changes.added.length === 0 && rewritten.length === 0) continue;
      if (follower === undefined) {
        this.#cache.forget(key);
        continue;
      }
      const bits = held.length < words ? this.#cache.widen(key, room)! : held;
      try {
        for (const slots of [changes.added, rewritten]) {
          for (const slot of slots) {
            if (follower.check(slot)) bits[slot >>> 5]! |= 1 << (slot & 31);
            else bits[slot >>> 5]! &= ~(1 << (slot & 31));
          }
        }
      } catch {
        // Only a bug throws here (no I/O): the write stands, the bitset goes.
        this.#cache.forget(key);
      }
    }
  }

  /** Uses that found a kept bitset, and all uses, since the start: of leaves, and of range buckets. */
  get stats(): Record<LeafKind, { hits: number; lookups: number }> {
    const of = (kind: string): { hits: number; lookups: number } => ({ hits: 0, lookups: 0, ...this.#cache.tally.get(kind) });
    return { leaf: of('leaf'), bucket: of('bucket') };
  }

  /** How the bitset kept for `key` follows a write; undefined for a key with no column check. */
  #followerOf(key: string): Follower | undefined {
    const columns = this.#columns;
    const keyed = keyedLeafOf(key);
    switch (keyed.kind) {
      case 'word':
        return { fields: WORD_FIELDS, check: wordCheck(columns, keyed.word) };
      case 'shop': {
        const check = columnCheck(columns, { type: 'compare', field: 'shop_name', operator: '=', value: keyed.name });
        return check && { fields: ['shop_name'], check: check.check };
      }
      case 'under': {
        const range = columns.builtRangeIndex(keyed.field);
        if (range === undefined) return undefined;
        const column = columns.numbers[keyed.field].data;
        const bucket = keyed.bucket;
        return { fields: [keyed.field], check: (slot) => range.bucketOf(column[slot]!) < bucket };
      }
      case 'leaf': {
        const check = columnCheck(columns, keyed.leaf);
        return check && { fields: [keyed.leaf.field], check: check.check };
      }
    }
  }
}
