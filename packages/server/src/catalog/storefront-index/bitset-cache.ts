import { arenaBits, releaseBits } from '../kernels.ts';
import { copyBits } from './bits.ts';

/**
 * The storage of the leaf cache (leaf-cache.ts): bitsets kept per key, as Lucene's query cache keeps
 * its filters: the leaves of real filters repeat (`available = true`, a brand, a price bound a
 * form offers) while the filters they make up differ. A key's first look-up only notes it and
 * answers false; its second answers true (the owner then keeps the bitset); later ones return it.
 * Guarantees: a kept bitset is the leaf's result at the version it was kept at, and is never
 * returned at another: `lookup` with a new version forgets everything. Kept bitsets are copies
 * that no search writes to.
 * Limits: at most `budgetBytes` of kept bitsets, or `minKept` of them where that is more, and
 * MAX_NOTED keys, least recently used out first; a look-up at a new version empties it.
 */
export class BitsetCache {
  readonly #budgetBytes: number;
  /**
   * Bitsets kept whatever their size: the leaves a workload repeats (the bounds a form offers) do
   * not grow with the catalog, but their bitsets do, and a cache that holds fewer of them than a
   * cycle of repeats misses on every one (least recently used out first).
   */
  readonly #minKept: number;
  /** The budget in force: budgetBytes, or minKept bitsets of the size last kept where that is more. */
  #limitBytes: number;
  #bytes = 0;
  #version = -1;
  /** Key → kept bitset, or null for a key used once; in order of last use (a Map keeps insertion order). */
  readonly #entries = new Map<string, Uint32Array | null>();
  /**
   * Bitsets dropped (evicted, or of an older version), which later keeps copy into instead of
   * allocating: a working set larger than the budget would otherwise allocate external memory on
   * every keep. At most an eighth of the budget. A spare is written to only by a keep() after the
   * one that dropped it, so a bitset lookup() returned stays as it is until the caller's next
   * keep() but one.
   */
  readonly #spares: Uint32Array[] = [];
  #spareBytes = 0;
  /** Per kind of key the owner names: look-ups that found a kept bitset, and all look-ups, since the cache was made. */
  readonly tally = new Map<string, { hits: number; lookups: number }>();

  constructor(budgetBytes: number, minKept = 0) {
    this.#budgetBytes = budgetBytes;
    this.#minKept = minKept;
    this.#limitBytes = budgetBytes;
  }

  /**
   * The bitset kept for `key` at `version` (read it, do not write to it), or whether the caller
   * should `keep` the leaf's bitset once it has it: true from the key's second use on.
   */
  lookup(key: string, version: number, kind = 'leaf'): Uint32Array | boolean {
    let tally = this.tally.get(kind);
    if (tally === undefined) this.tally.set(kind, (tally = { hits: 0, lookups: 0 }));
    tally.lookups += 1;
    if (version !== this.#version) {
      for (const bits of this.#entries.values()) if (bits) this.#drop(bits);
      this.#entries.clear();
      this.#bytes = 0;
      this.#version = version;
    }
    const entry = this.#entries.get(key);
    if (entry === undefined) {
      this.#entries.set(key, null);
      this.#evict();
      return false;
    }
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    if (entry === null) return true;
    tally.hits += 1;
    return entry;
  }

  /** Whether a bitset is kept for `key` at `version`; neither counted nor a use. */
  has(key: string, version: number): boolean {
    return version === this.#version && Boolean(this.#entries.get(key));
  }

  /**
   * The bitset kept for `key` at `version`, counted as a look-up (a hit) and a use; undefined,
   * neither counted nor noted, when there is none: the caller looks up as it reaches the leaf.
   */
  kept(key: string, version: number, kind = 'leaf'): Uint32Array | undefined {
    if (version !== this.#version) return undefined;
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    return this.lookup(key, version, kind) as Uint32Array;
  }

  /**
   * Keeps a copy of `bits` for `key` (at the version of the last look-up), `words` long where that
   * is longer (clear past `bits`): room for the slots its owner may add.
   */
  keep(key: string, bits: Uint32Array, words = bits.length): void {
    const length = Math.max(words, bits.length);
    this.#limitBytes = Math.max(this.#budgetBytes, this.#minKept * length * 4);
    if (length * 4 > this.#limitBytes) return;
    // The copy is taken before this keep drops anything (see #spares).
    const copy = this.#spareOf(length) ?? arenaBits(length, false);
    copyBits(copy.subarray(0, bits.length), bits);
    copy.fill(0, bits.length);
    const old = this.#entries.get(key);
    this.#entries.delete(key);
    if (old) {
      this.#bytes -= old.byteLength;
      this.#drop(old);
    }
    this.#entries.set(key, copy);
    this.#bytes += copy.byteLength;
    this.#evict();
  }

  /**
   * The kept bitsets and their keys, in order of last use, for an owner that updates them in place
   * as what they stand for changes; neither counted nor a use.
   */
  entries(): [string, Uint32Array][] {
    return [...this.#entries].flatMap(([key, bits]) => (bits ? [[key, bits] as [string, Uint32Array]] : []));
  }

  /** Makes the bitset kept for `key` `words` long, its words kept (clear past them); the bitset returned replaces the one held. */
  widen(key: string, words: number): Uint32Array | undefined {
    const old = this.#entries.get(key);
    if (!old || old.length >= words) return old ?? undefined;
    const wide = arenaBits(words, false);
    copyBits(wide.subarray(0, old.length), old);
    wide.fill(0, old.length);
    this.#entries.set(key, wide);
    this.#bytes += wide.byteLength - old.byteLength;
    this.#drop(old);
    return wide;
  }

  /** Puts out what is kept or noted for `key`. */
  forget(key: string): void {
    const old = this.#entries.get(key);
    this.#entries.delete(key);
    if (!old) return;
    this.#bytes -= old.byteLength;
    this.#drop(old);
  }

  #evict(): void {
    if (this.#bytes <= this.#limitBytes && this.#entries.size <= MAX_NOTED) return;
    for (const [key, entry] of this.#entries) {
      if (this.#bytes <= this.#limitBytes && this.#entries.size <= MAX_NOTED) return;
      this.#entries.delete(key);
      if (entry) {
        this.#bytes -= entry.byteLength;
        this.#drop(entry);
      }
    }
  }

  #drop(bits: Uint32Array): void {
    if (this.#spareBytes + bits.byteLength > this.#limitBytes / 8) {
      releaseBits(bits);
      return;
    }
    this.#spares.push(bits);
    this.#spareBytes += bits.byteLength;
  }

  /** A spare of `length` words, or undefined; spares of another length (an index that grew) are let go. */
  #spareOf(length: number): Uint32Array | undefined {
    for (;;) {
      const spare = this.#spares.pop();
      if (spare === undefined) return undefined;
      this.#spareBytes -= spare.byteLength;
      if (spare.length === length) return spare;
      releaseBits(spare);
    }
  }
}

/** Keys a BitsetCache notes or keeps at most. */
const MAX_NOTED = 4_096;
