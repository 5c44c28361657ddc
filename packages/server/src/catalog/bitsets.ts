// The storefront index's one set module: bitsets over slots, the pool searches take them from, the
// range index over a number column and the posting lists of terms. A search starts from the
// universe (every slot) and each leaf of an AND narrows the running bitset in place; once it is
// empty the AND stops (Meilisearch's "universe" evaluation).
//
// Guarantees: every structure here is exact (no sampling decides an answer, only its speed) and
// holds no JavaScript object per slot or per term: typed arrays, grown by doubling and trimmed by
// the owner once a load is done.
// Limits: a bitset is n/8 bytes whatever its population; posting lists are one compact block
// rebuilt (O(entries)) once the changes logged beside it pass POSTINGS_LOG_SHARE of it.

import { arenaBits, inArena, kernels, releaseBits } from './kernels.ts';

export type RangeOperator = '<' | '<=' | '>' | '>=';

export function wordsFor(slots: number): number {
  return Math.ceil(slots / 32);
}

export function setBit(bits: Uint32Array, slot: number): void {
  bits[slot >>> 5]! |= 1 << (slot & 31);
}

export function clearBit(bits: Uint32Array, slot: number): void {
  bits[slot >>> 5]! &= ~(1 << (slot & 31));
}

export function hasBit(bits: Uint32Array, slot: number): boolean {
  return (bits[slot >>> 5]! & (1 << (slot & 31))) !== 0;
}

/** Sets the bits of slots `from` to `to` (exclusive). */
export function setRun(bits: Uint32Array, from: number, to: number): void {
  let slot = from;
  for (; slot < to && (slot & 31) !== 0; slot += 1) setBit(bits, slot);
  for (; slot + 32 <= to; slot += 32) bits[slot >>> 5] = 0xffffffff;
  for (; slot < to; slot += 1) setBit(bits, slot);
}

// Loops over whole bitsets: bitsets in the arena (kernels.ts: every bitset the index makes, unless
// the arena is full) go to the WebAssembly kernels; the JavaScript loops serve the others. Those
// read the length once: compared against `bits.length` on every iteration, V8 (Node 24) reloads it
// each time and the same loop ran two to three times slower.

/** The number of set bits of a 32-bit word: integer arithmetic throughout (Math.imul, not a float product), no branch. */
function bitsIn(value: number): number {
  let word = value | 0;
  word -= (word >>> 1) & 0x55555555;
  word = (word & 0x33333333) + ((word >>> 2) & 0x33333333);
  return Math.imul((word + (word >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

export function popcount(bits: Uint32Array): number {
  const words = bits.length;
  if (inArena(bits)) return kernels.popcount(bits.byteOffset, words);
  let total = 0;
  for (let i = 0; i < words; i += 1) total += bitsIn(bits[i]!);
  return total;
}

/** Sets every word of `bits` to 0, or with `ones` to 0xffffffff. */
export function fillBits(bits: Uint32Array, ones: boolean): void {
  if (inArena(bits)) kernels.fill(bits.byteOffset, bits.length, ones ? 0xff : 0);
  else bits.fill(ones ? 0xffffffff : 0);
}

/** Copies `from`'s first `into.length` words into `into`. */
export function copyBits(into: Uint32Array, from: Uint32Array): void {
  if (from.length >= into.length && inArena(into) && inArena(from)) kernels.copy(into.byteOffset, from.byteOffset, into.length);
  else into.set(from.subarray(0, into.length));
}

/** A copy of `array` in the arena (where the kernels can take it). */
export function arenaCopy(array: Uint32Array): Uint32Array {
  const copy = arenaBits(array.length, false);
  copyBits(copy, array);
  return copy;
}

export function isEmpty(bits: Uint32Array): boolean {
  const words = bits.length;
  if (inArena(bits)) return kernels.any(bits.byteOffset, words) === 0;
  for (let i = 0; i < words; i += 1) if (bits[i] !== 0) return false;
  return true;
}

export function andInto(into: Uint32Array, from: Uint32Array): void {
  const words = into.length;
  if (from.length >= words && inArena(into) && inArena(from)) return kernels.combine(into.byteOffset, from.byteOffset, words, 0, 0);
  for (let i = 0; i < words; i += 1) into[i] = into[i]! & from[i]!;
}

/**
 * ANDs every bitset of `from` into `into` (with `fresh`, `into` is read as all ones whatever it
 * holds: a new result needs no copy of its first operand) and returns the number of set bits of
 * the result. In the arena, three sources a pass: each word is read once from each and written
 * once, where an AND at a time writes the result once per source.
 */
export function andAll(into: Uint32Array, from: readonly Uint32Array[], fresh: boolean): number {
  const words = into.length;
  if (from.length > 0 && inArena(into) && from.every((bits) => bits.length >= words && inArena(bits))) {
    let total = 0;
    for (let at = 0; at < from.length; at += 3) {
      const a = from[at]!;
      const b = from[Math.min(at + 1, from.length - 1)]!;
      const c = from[Math.min(at + 2, from.length - 1)]!;
      total = kernels.and3(into.byteOffset, a.byteOffset, b.byteOffset, c.byteOffset, words, fresh && at === 0 ? 1 : 0);
    }
    return total;
  }
  if (fresh) fillBits(into, true);
  for (const bits of from) andInto(into, bits);
  return popcount(into);
}

/**
 * The number of slots below `size` set in every one of one to three bitsets, each read flipped
 * where its entry of `flips` is -1 (a flipped source stands for the slots it does not hold; past
 * `size` those are not counted); nothing is written.
 */
export function countAll(from: readonly Uint32Array[], size: number, flips: readonly number[] = NO_FLIPS): number {
  const [a, b, c, fa, fb, fc] = threeSources(from, flips);
  const words = wordsFor(size);
  let total = 0;
  if (inArena(a) && inArena(b) && inArena(c) && a.length >= words && b.length >= words && c.length >= words) {
    total = kernels.count3(a.byteOffset, b.byteOffset, c.byteOffset, words, fa, fb, fc);
  } else {
    for (let i = 0; i < words; i += 1) total += bitsIn((a[i]! ^ fa) & (b[i]! ^ fb) & (c[i]! ^ fc));
  }
  // The last word's slots past `size`, which a flipped source holds.
  const past = size & 31;
  if (past !== 0) {
    const last = words - 1;
    total -= bitsIn((a[last]! ^ fa) & (b[last]! ^ fb) & (c[last]! ^ fc) & ~((1 << past) - 1));
  }
  return total;
}

const NO_FLIPS: readonly number[] = [];

/**
 * One to three bitsets as three, with their flips (0 where `flips` has none): the first, with its
 * flip, stands in for the missing ones (ANDing a source twice changes nothing).
 */
export function threeSources(from: readonly Uint32Array[], flips: readonly number[]): [Uint32Array, Uint32Array, Uint32Array, number, number, number] {
  if (from.length < 1 || from.length > 3) throw new Error('one to three bitsets');
  const at = (k: number): number => (k < from.length ? k : 0);
  return [from[at(0)]!, from[at(1)]!, from[at(2)]!, flips[at(0)] ?? 0, flips[at(1)] ?? 0, flips[at(2)] ?? 0];
}

export function orInto(into: Uint32Array, from: Uint32Array): void {
  const words = into.length;
  if (from.length >= words && inArena(into) && inArena(from)) return kernels.combine(into.byteOffset, from.byteOffset, words, 0, -1);
  for (let i = 0; i < words; i += 1) into[i] = into[i]! | from[i]!;
}

/** Clears in `into` the bits set in `from`, over their first `words` words. */
export function andNotInto(into: Uint32Array, from: Uint32Array, words: number): void {
  if (into.length >= words && from.length >= words && inArena(into) && inArena(from)) return kernels.combine(into.byteOffset, from.byteOffset, words, -1, 0);
  for (let i = 0; i < words; i += 1) into[i] = into[i]! & ~from[i]!;
}

/** Inverts `bits` in place, slots past `size` left clear. */
export function complement(bits: Uint32Array, size: number): Uint32Array {
  const words = bits.length;
  if (inArena(bits)) kernels.invert(bits.byteOffset, words);
  else for (let i = 0; i < words; i += 1) bits[i] = ~bits[i]!;
  clearPastEnd(bits, size);
  return bits;
}

/** Clears the bits of slots at or past `size`, so population counts stay exact. */
export function clearPastEnd(bits: Uint32Array, size: number): void {
  const first = wordsFor(size);
  if ((size & 31) !== 0) bits[first - 1]! &= 0xffffffff >>> (32 - (size & 31));
  bits.fill(0, first);
}

/** Calls `each` with every set slot of `bits`, ascending. */
export function forEachSlot(bits: Uint32Array, each: (slot: number) => void): void {
  const words = bits.length;
  for (let i = 0; i < words; i += 1) {
    let word = bits[i]!;
    while (word !== 0) {
      const lowest = word & -word;
      word ^= lowest;
      each((i << 5) + 31 - Math.clz32(lowest));
    }
  }
}

/**
 * Keeps in `result` only the slots for which `keep(slot)` holds: the narrowing of a leaf that has
 * no set of its own (an equality over a column), costing one call per slot still in the result.
 */
export function narrow(result: Uint32Array, keep: (slot: number) => boolean): void {
  const words = result.length;
  for (let i = 0; i < words; i += 1) {
    let word = result[i]!;
    if (word === 0) continue;
    let kept = word;
    while (word !== 0) {
      const lowest = word & -word;
      word ^= lowest;
      if (!keep((i << 5) + 31 - Math.clz32(lowest))) kept &= ~lowest;
    }
    result[i] = kept;
  }
}

/** How many of ascending `values[0 .. length)` are below `value` (or equal, when `inclusive`). */
export function countBelow(values: Float64Array, value: number, inclusive: boolean, length = values.length): number {
  let low = 0;
  let high = length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (inclusive ? values[middle]! <= value : values[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** A typed array that grows by doubling; `trim` gives back the spare room once a load is done. */
export class Growable<T extends Float64Array | Int32Array | Uint32Array | Uint8Array> {
  data: T;
  readonly #make: (length: number) => T;
  constructor(make: (length: number) => T, initial = 1024) {
    this.#make = make;
    this.data = make(initial);
  }
  ensure(length: number): void {
    if (length <= this.data.length) return;
    const grown = this.#make(Math.max(length, this.data.length * 2));
    grown.set(this.data as never);
    this.data = grown;
  }
  /**
   * Holds exactly `length` elements: grown, or cut, into a new array made as the others are (so
   * an array the arena holds stays there).
   */
  fit(length: number): void {
    if (length === this.data.length) return;
    const fitted = this.#make(length);
    fitted.set(this.data.subarray(0, Math.min(length, this.data.length)) as never);
    this.data = fitted;
  }
  /** Shrinks to `length` plus an eighth, so the next writes do not reallocate at once. */
  trim(length: number): void {
    const target = Math.max(1024, length + (length >>> 3));
    if (target >= this.data.length) return;
    const trimmed = this.#make(target);
    trimmed.set(this.data.subarray(0, target) as never);
    this.data = trimmed;
  }
}

/** A growable list of 32-bit integers. */
export class IntList {
  readonly #values = new Growable((n) => new Int32Array(n), 16);
  length = 0;
  get data(): Int32Array {
    return this.#values.data;
  }
  push(value: number): void {
    this.#values.ensure(this.length + 1);
    this.#values.data[this.length] = value;
    this.length += 1;
  }
  clear(): void {
    this.length = 0;
  }
  trim(): void {
    this.#values.trim(this.length);
  }
}

/**
 * Bitsets of one length for the searches in flight: each search takes them into a scope of its own
 * and hands them back when it ends, whether or not other searches are in flight. A search at a
 * million products takes several of 125 KB (at ten million, 1.25 MB): allocating them afresh makes
 * V8 run a full collection of the whole heap every few hundred searches.
 * Guarantee: a bitset goes back (to be handed out again, or to the arena) only when the scope it
 * was taken into ends, so a search that takes into its own scope holds its bitsets until it ends.
 * (The scope is named at each `take`: a pool that put bitsets in the scope begun last handed the
 * bitsets of a search resuming after an `await` to another search's scope, which gave them back
 * while the first still wrote to them.)
 */
export class BitsetPool {
  #words = 0;
  #free: Uint32Array[] = [];

  /** Starts a search over `size` slots (every bitset it takes is `wordsFor(size)` words): its scope. */
  begin(size: number): Uint32Array[] {
    const words = wordsFor(size);
    if (words !== this.#words) {
      this.#words = words;
      for (const bits of this.#free) releaseBits(bits);
      this.#free = [];
    }
    return [];
  }

  /** Ends a search: every bitset its scope took is free again. */
  end(scope: Uint32Array[]): void {
    for (const bits of scope) {
      if (bits.length === this.#words && this.#free.length < MAX_FREE) this.#free.push(bits);
      else releaseBits(bits);
    }
    scope.length = 0;
  }

  /**
   * A bitset for the search of `scope` (undefined: none; the bitset is left to the GC): cleared, or
   * with whatever it held when `zeroed` is false.
   */
  take(scope: Uint32Array[] | undefined, zeroed: boolean): Uint32Array {
    const reused = this.#free.pop();
    const bits = reused ?? arenaBits(this.#words, zeroed);
    if (reused !== undefined && zeroed) fillBits(bits, false);
    // A search that takes more than this leaves the rest to the GC.
    if (scope !== undefined && scope.length < MAX_FREE) scope.push(bits);
    return bits;
  }
}

const MAX_FREE = 256;

/**
 * Bitsets of filter leaves kept for reuse, as Lucene's query cache keeps its filters: the leaves of
 * real filters repeat (`available = true`, a brand, a price bound a form offers) while the
 * filters they make up differ. A key's first use only notes it; its second evaluates the leaf
 * whole and keeps it; later ones read it with one word operation per 32 slots instead of the
 * leaf's own work (a range leaf reads seven bitsets and some values per 32 slots; a posting list
 * sets one bit per member).
 * Guarantees: a kept bitset is the leaf's result at the version it was kept at, and is never
 * returned at another: `lookup` with a new version forgets everything. Kept bitsets are copies
 * that no search writes to.
 * Limits: at most `budgetBytes` of kept bitsets, or `minKept` of them where that is more, and
 * MAX_NOTED keys, least recently used out first; every write to the index (a new version) empties
 * it, so a catalog written to every few seconds gains little.
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
   * allocating. A cache whose working set is larger than its budget (a bitset of ten million
   * slots is 1.25 MB) allocated one per keep, and that external memory
   * alone made V8 run full collections, each a pause of several ms, over and over (bench/README.md,
   * "Issue 25, round 5"). At most an eighth of the budget. A spare is written to only by a keep()
   * after the one that dropped it, so a bitset lookup() returned stays as it is until the caller's
   * next keep() but one.
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

  /** Keeps a copy of `bits` for `key` (at the version of the last look-up). */
  keep(key: string, bits: Uint32Array): void {
    this.#limitBytes = Math.max(this.#budgetBytes, this.#minKept * bits.byteLength);
    if (bits.byteLength > this.#limitBytes) return;
    // The copy is taken before this keep drops anything (see #spares).
    const copy = this.#spareOf(bits.length) ?? arenaBits(bits.length, false);
    copyBits(copy, bits);
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

/**
 * A bucket number is three digits, of bases HIGH, MIDDLE and LOW (most significant first): at most
 * HIGH × MIDDLE × LOW buckets. Enough buckets that a leaf reads few values from the column (each
 * read is a cache miss on a large catalog) and that a leaf answered from a kept bucket checks few
 * members one by one (StorefrontIndex's in-place answers); few enough bitsets per slot for the
 * memory goal: (HIGH - 1) + (MIDDLE - 1) + (LOW - 1) bits per slot and number column.
 */
const HIGH = 32;
const MIDDLE = 16;
const LOW = 16;
export const RANGE_BUCKETS = HIGH * MIDDLE * LOW;
/** Where each digit's bitsets start in a word's group: digit d ("at most d") at start + d. */
const MIDDLE_AT = HIGH - 1;
const LOW_AT = MIDDLE_AT + MIDDLE - 1;
/** Bitsets kept per word: for each digit, "at most d" for every d but its largest. */
const PER_WORD = LOW_AT + LOW - 1;
/** Values sampled to place the bounds. */
const SAMPLE = 65_536;

/** A range leaf's base (RangeIndex.base): see there. */
export interface RangeBase {
  under: number;
  flip: number;
  bucket: number;
  whole: number;
}

/**
 * A range leaf as RangeIndex.split gives it: the slots under bucket `under` (with `flip` -1, those
 * not under it) and besides them `extra`, the members of the value's `bucket` that pass:
 * `members` (the bucket's members ascending by value, then slot; empty when none or all pass)
 * from index `from`.
 */
export interface RangeSplit {
  under: number;
  flip: number;
  extra: Int32Array;
  bucket: number;
  members: Int32Array;
  from: number;
}

/**
 * Range leaves (`<`, `<=`, `>`, `>=`) over one number column without a pass over the column: slots
 * are split by value into at most RANGE_BUCKETS buckets whose bounds are quantiles of the column
 * when it was built. A bucket number is three digits, and for each value d of a digit the bitset of
 * the slots whose digit is at most d is kept (range-encoded bitsets), so "bucket below b" and
 * "bucket equal to b" cost six reads per 32 slots, from six bitsets read in order, with no branch. A leaf
 * keeps the buckets wholly on its side and, of its value's one bucket, the members that pass: from
 * the bucket's members sorted by value (a binary search, then the failing ones dropped) once the
 * bucket has been used twice since it last changed, else by checking each member's value.
 *
 * Guarantees: exact for any values, skewed or repeated ones included; NaN satisfies no comparison.
 * Every write rewrites its slot's digits, so the bitsets stay current without a rebuild; every
 * slot a search can see must have been written (built or `set`).
 * Limits: bounds stay where they were put; values written later may crowd one bucket, which makes
 * its leaves check more values. The owner rebuilds when the column has doubled since the build.
 * A leaf costs a few word operations per 32 slots plus one step per member of one bucket (about
 * 1/RANGE_BUCKETS of the column); making a bucket's sorted members costs a pass like a leaf's.
 * Memory: PER_WORD bits per slot, and 4 bytes per member of each bucket whose sorted members are kept.
 */
export class RangeIndex {
  /**
   * The bounds (ascending, distinct: bucket b holds values v with bounds[b-1] <= v < bounds[b]; NaN
   * is in bucket 0), then NaN up to a power of two (at least 2) entries: see #bucket.
   */
  readonly #padded: Float64Array;
  /**
   * PER_WORD bitsets of #words words each, one after the other: bitset d holds the slots whose high
   * digit is at most d, bitsets MIDDLE_AT + d and LOW_AT + d likewise for the other digits (a
   * digit's largest value is left out: every digit is at most that). Slots not yet written are in
   * bucket 0.
   */
  #digits: Uint32Array;
  #words: number;
  #capacity: number;
  /**
   * Per bucket, the smallest and largest value ever written to it (members leaving do not narrow
   * them): a leaf whose value lies outside them takes or drops the bucket whole.
   */
  readonly #min: Float64Array;
  readonly #max: Float64Array;
  /** Slots holding NaN, once one was written. */
  #nan: Uint32Array | undefined;
  /**
   * Per bucket, its members other than NaN ascending by (value, slot), made on a leaf's second use
   * of the bucket since a write last changed its members (#uses counts those uses, up to 2); a
   * leaf then drops the failing members from this list instead of reading each member's value (a
   * cache miss on a large column). Undefined until made, and again once a write changes the bucket.
   */
  readonly #sorted: (Int32Array | undefined)[];
  readonly #uses: Uint8Array;
  /** Slots when built: the owner rebuilds once the column has doubled. */
  readonly builtAt: number;

  private constructor(bounds: Float64Array, capacity: number, builtAt: number) {
    this.#padded = new Float64Array(Math.max(2, 2 ** Math.ceil(Math.log2(bounds.length + 1)))).fill(Number.NaN);
    this.#padded.set(bounds);
    this.#words = wordsFor(capacity);
    this.#digits = arenaBits(this.#words * PER_WORD, false);
    fillBits(this.#digits, true);
    this.#capacity = capacity;
    this.#min = new Float64Array(bounds.length + 1).fill(Number.POSITIVE_INFINITY);
    this.#max = new Float64Array(bounds.length + 1).fill(Number.NEGATIVE_INFINITY);
    this.#sorted = Array.from({ length: bounds.length + 1 }, () => undefined);
    this.#uses = new Uint8Array(bounds.length + 1);
    this.builtAt = builtAt;
  }

  /** Indexes `column[0 .. size)`, with room for `capacity` slots. */
  static build(column: Float64Array, size: number, capacity: number): RangeIndex {
    const step = Math.max(1, Math.floor(size / SAMPLE));
    let sampled = 0;
    const sample = new Float64Array(Math.ceil(size / step));
    for (let slot = 0; slot < size; slot += step) if (!Number.isNaN(column[slot])) sample[sampled++] = column[slot]!;
    const sorted = sample.subarray(0, sampled).sort();
    const bounds: number[] = [];
    for (let k = 1; k < RANGE_BUCKETS; k += 1) {
      const bound = sorted[Math.floor((k * sampled) / RANGE_BUCKETS)];
      if (bound !== undefined && bound !== bounds[bounds.length - 1] && bound > sorted[0]!) bounds.push(bound);
    }
    const index = new RangeIndex(Float64Array.from(bounds), capacity, size);
    index.#fill(column, size);
    return index;
  }

  /**
   * Writes the digits of `column[0 .. size)` 32 slots at a time: each word of the PER_WORD bitsets
   * is gathered in a register-sized accumulator and stored once, where `set` per slot would touch
   * all PER_WORD bitsets (a cache miss each on a large column) for every slot. Same bits as `set`.
   */
  #fill(column: Float64Array, size: number): void {
    const digits = this.#digits;
    const stride = this.#words;
    // Per word, the slots whose digit equals d, then "at most d" as a running OR over d: three ORs
    // per slot, where setting every "at most d" bitset a slot belongs to took one per value of d.
    const equal = new Int32Array(HIGH + MIDDLE + LOW);
    const words = wordsFor(size);
    for (let word = 0; word < words; word += 1) {
      equal.fill(0);
      const base = word << 5;
      const end = Math.min(32, size - base);
      for (let b = 0; b < end; b += 1) {
        const value = column[base + b]!;
        const bucket = this.#bucket(value);
        this.#extend(bucket, value);
        if (Number.isNaN(value)) setBit((this.#nan ??= arenaBits(wordsFor(this.#capacity))), base + b);
        const bit = 1 << b;
        equal[Math.floor(bucket / (MIDDLE * LOW))]! |= bit;
        equal[HIGH + (Math.floor(bucket / LOW) % MIDDLE)]! |= bit;
        equal[HIGH + MIDDLE + (bucket % LOW)]! |= bit;
      }
      // Slots past `size` get no digit: `set` writes all of a slot's digits before a search sees it.
      let running = 0;
      for (let d = 0; d < HIGH - 1; d += 1) digits[d * stride + word] = running |= equal[d]!;
      running = 0;
      for (let d = 0; d < MIDDLE - 1; d += 1) digits[(MIDDLE_AT + d) * stride + word] = running |= equal[HIGH + d]!;
      running = 0;
      for (let d = 0; d < LOW - 1; d += 1) digits[(LOW_AT + d) * stride + word] = running |= equal[HIGH + MIDDLE + d]!;
    }
  }

  /** Makes room for `capacity` slots (or gives back what is past it). */
  resize(capacity: number): void {
    if (capacity === this.#capacity) return;
    const words = wordsFor(capacity);
    const digits = arenaBits(words * PER_WORD, false);
    fillBits(digits, true);
    const kept = Math.min(words, this.#words);
    for (let at = 0; at < PER_WORD; at += 1) digits.set(this.#digits.subarray(at * this.#words, at * this.#words + kept), at * words);
    releaseBits(this.#digits);
    this.#digits = digits;
    this.#words = words;
    this.#capacity = capacity;
    if (this.#nan !== undefined) {
      const nan = arenaBits(words);
      nan.set(this.#nan.subarray(0, Math.min(words, this.#nan.length)));
      releaseBits(this.#nan);
      this.#nan = nan;
    }
  }

  get capacity(): number {
    return this.#capacity;
  }

  /**
   * Records the value now stored at `slot`: new, or rewritten from `previous` (the value it was
   * recorded with; undefined for a new slot).
   */
  set(slot: number, value: number, previous: number | undefined): void {
    const bucket = this.#bucket(value);
    this.#extend(bucket, value);
    this.#changed(bucket);
    if (previous !== undefined) this.#changed(this.#bucket(previous));
    if (Number.isNaN(value)) setBit((this.#nan ??= arenaBits(wordsFor(this.#capacity))), slot);
    else if (this.#nan !== undefined) clearBit(this.#nan, slot);
    const word = slot >>> 5;
    const stride = this.#words;
    const bit = 1 << (slot & 31);
    const [high, middle, low] = digitsOf(bucket);
    const digits = this.#digits;
    const mark = (at: number, holds: boolean): void => {
      if (holds) digits[at * stride + word]! |= bit;
      else digits[at * stride + word]! &= ~bit;
    };
    for (let d = 0; d < HIGH - 1; d += 1) mark(d, high <= d);
    for (let d = 0; d < MIDDLE - 1; d += 1) mark(MIDDLE_AT + d, middle <= d);
    for (let d = 0; d < LOW - 1; d += 1) mark(LOW_AT + d, low <= d);
  }

  /** Buckets the bounds make: `under` takes 0 to this. */
  get buckets(): number {
    return this.#min.length;
  }

  /** The bucket `value` falls in (NaN: bucket 0). */
  bucketOf(value: number): number {
    return this.#bucket(value);
  }

  /**
   * Writes into `into` (over `size` slots) the written slots whose bucket is below `bucket`
   * (0 to `buckets`): what a range leaf reads from the digit bitsets, for any value in `bucket`.
   * Past `size` it holds nothing. NaN, in bucket 0, is under every bucket but 0.
   */
  under(into: Uint32Array, size: number, bucket: number): void {
    const words = wordsFor(size);
    // A leaf's pass over a fresh result keeping the slots below the bucket, and none of its members.
    if (bucket >= this.buckets) fillBits(into, true);
    else narrowByDigits(into, this.#digits, this.#digitsAt(bucket), words, -1, 0, false, true);
    clearPastEnd(into, size);
  }

  /**
   * Clears in `result` (a bitset over `size` slots) the slots whose value in `column` does not
   * compare to `value` as `operator` says. `around` is, when the caller has them, `under` of the
   * value's bucket and of the next (null past the last bucket): each word then reads those two
   * bitsets instead of six digit bitsets. With `fresh`, `result` is taken to hold every slot
   * whatever it holds (no fill first): the leaf's own new bitset.
   */
  intersect(
    result: Uint32Array,
    column: Float64Array,
    size: number,
    operator: RangeOperator,
    value: number,
    around?: readonly [Uint32Array, Uint32Array | null],
    fresh = false,
    sortLater?: (sort: () => void) => void,
  ): void {
    if (Number.isNaN(value)) {
      fillBits(result, false);
      return;
    }
    // Buckets under `bucket` lie wholly below `value`, those above it wholly above; its own
    // members are checked one by one.
    const bucket = this.#bucket(value);
    const below = operator === '<' || operator === '<=';
    const whole = this.#whole(bucket, operator, value);
    const words = wordsFor(size);
    const belowMask = below ? -1 : 0;
    // The bucket's members still in the result are noted for a second pass only when they must be
    // checked one by one; otherwise they are kept or dropped with the rest of their word.
    // With the bucket's sorted members at hand, the pass keeps every member still in the result
    // and the failing ones are dropped from the list after it.
    const sorted = whole === -1 ? this.#sortedMembers(bucket, column, size, sortLater) : undefined;
    const membersMask = whole === 1 || sorted !== undefined ? -1 : 0;
    const note = whole === -1 && sorted === undefined;
    const noted =
      around === undefined
        ? narrowByDigits(result, this.#digits, this.#digitsAt(bucket), words, belowMask, membersMask, note, fresh)
        : narrowAround(result, around[0], around[1], words, belowMask, membersMask, note, fresh);
    if (fresh) clearPastEnd(result, size);
    if (noted > 0) keepPassing(result, column, noted, operator, value);
    if (sorted !== undefined) dropFailing(result, sorted, column, operator, value);
    // NaN sits in bucket 0, which a leaf may keep whole. (A loop here that read `this.#nan` per
    // word cost more than the leaf's own pass.)
    const nan = this.#nan;
    if (nan !== undefined) andNotInto(result, nan, words);
  }

  /**
   * The leaf `operator value` (not NaN) as one bitset a caller keeps and a few slots: the written
   * slots under bucket `under` (see `under`), or with `flip` -1 those not under it, and besides
   * them `extra`, the members of the value's bucket that pass (ascending by value, none in that
   * base). Undefined where that takes what is not at hand: a NaN slot was ever written (it lies
   * under every bucket but 0 yet passes no leaf), the bucket's sorted members are not made (see
   * #sorted; this is not a use of them), or the base would be under the bucket past the last.
   */
  split(column: Float64Array, operator: RangeOperator, value: number): RangeSplit | undefined {
    const base = this.base(operator, value);
    if (base === undefined) return undefined;
    const { under, flip, bucket, whole } = base;
    const below = flip === 0;
    if (whole !== -1) return { under, flip, extra: NO_SLOTS, bucket, members: NO_SLOTS, from: 0 };
    const sorted = this.#sorted[bucket];
    if (sorted === undefined) return undefined;
    const boundary = passingBoundary(sorted, column, operator, value);
    const from = below ? 0 : boundary;
    return { under, flip, extra: sorted.subarray(from, below ? boundary : sorted.length), bucket, members: sorted, from };
  }

  /**
   * The base of the leaf `operator value` as `split` takes it, without its members: the slots
   * under bucket `under` (with `flip` -1, those not under it), which hold every slot that passes
   * but for members of the value's own `bucket` when `whole` is -1 (some of them pass, each to be
   * checked; 1 or 0: all or none, and the base says which). Undefined as for `split`: a NaN value
   * or a NaN slot ever written, or a base under the bucket past the last.
   */
  base(operator: RangeOperator, value: number): RangeBase | undefined {
    if (Number.isNaN(value) || this.#nan !== undefined) return undefined;
    const bucket = this.#bucket(value);
    const below = operator === '<' || operator === '<=';
    const whole = this.#whole(bucket, operator, value);
    // Below: under the bucket, or under the next when all its members pass. Above: not under the
    // next, or not under the bucket when all its members pass.
    const under = below ? (whole === 1 ? bucket + 1 : bucket) : whole === 1 ? bucket : bucket + 1;
    if (under >= this.buckets) return undefined;
    return { under, flip: below ? 0 : -1, bucket, whole };
  }

  /** 1 when every member of `bucket` passes the leaf, 0 when none does, as its extremes say; else -1. */
  #whole(bucket: number, operator: RangeOperator, value: number): number {
    const min = this.#min[bucket]!;
    const max = this.#max[bucket]!;
    return operator === '<' ? (max < value ? 1 : min >= value ? 0 : -1)
      : operator === '<=' ? (max <= value ? 1 : min > value ? 0 : -1)
      : operator === '>' ? (min > value ? 1 : max <= value ? 0 : -1)
      : min >= value ? 1 : max < value ? 0 : -1;
  }

  /**
   * Where the digit bitsets of `bucket` are, for a pass that reads six of them per word with no
   * branch: a digit with no bitset to read (none below 0; all at most the largest) reads bitset 0
   * and masks it, which costs less than a test of the digit in every word.
   */
  #digitsAt(bucket: number): DigitsAt {
    // Per digit, the bitsets "below its value" and "at most its value"; -1 stands for none (no
    // digit is below 0) and PER_WORD for all (every digit is at most its largest value).
    const [high, middle, low] = digitsOf(bucket);
    const highBelow = high === 0 ? -1 : high - 1;
    const highThrough = high === HIGH - 1 ? PER_WORD : high;
    const middleBelow = middle === 0 ? -1 : MIDDLE_AT + middle - 1;
    const middleThrough = middle === MIDDLE - 1 ? PER_WORD : MIDDLE_AT + middle;
    const lowBelow = low === 0 ? -1 : LOW_AT + low - 1;
    const lowThrough = low === LOW - 1 ? PER_WORD : LOW_AT + low;
    const offset = (at: number): number => (at < 0 || at === PER_WORD ? 0 : at * this.#words);
    return {
      hbAt: offset(highBelow),
      htAt: offset(highThrough),
      mbAt: offset(middleBelow),
      mtAt: offset(middleThrough),
      lbAt: offset(lowBelow),
      ltAt: offset(lowThrough),
      hbMask: highBelow < 0 ? 0 : -1,
      mbMask: middleBelow < 0 ? 0 : -1,
      lbMask: lowBelow < 0 ? 0 : -1,
      htAll: highThrough === PER_WORD ? -1 : 0,
      mtAll: middleThrough === PER_WORD ? -1 : 0,
      ltAll: lowThrough === PER_WORD ? -1 : 0,
    };
  }

  /** A write changed the members of `bucket`: its sorted list is stale. */
  #changed(bucket: number): void {
    this.#sorted[bucket] = undefined;
    this.#uses[bucket] = 0;
  }

  /**
   * The bucket's sorted members (see #sorted): undefined on the first use since the bucket last
   * changed, made on the second (one pass over the digit bitsets for the members, and a sort), or
   * with `sortLater`, handed to it to be made later (undefined until then).
   */
  #sortedMembers(bucket: number, column: Float64Array, size: number, sortLater?: (sort: () => void) => void): Int32Array | undefined {
    const kept = this.#sorted[bucket];
    if (kept !== undefined) return kept;
    if (this.#uses[bucket]! < 1) {
      this.#uses[bucket] = 1;
      return undefined;
    }
    if (sortLater !== undefined) {
      sortLater(() => this.#sortedMembers(bucket, column, size));
      return undefined;
    }
    // Every member, noted by a pass over a scratch bitset read as all ones (the slots past `size`
    // it notes are skipped), ascending by slot.
    const words = wordsFor(size);
    const scratch = arenaBits(words, false);
    const noted = narrowByDigits(scratch, this.#digits, this.#digitsAt(bucket), words, 0, -1, true, true);
    releaseBits(scratch);
    const members: number[] = [];
    const values: number[] = [];
    for (let k = 0; k < noted; k += 1) {
      const base = MEMBER_WORDS[k]! << 5;
      for (let bits = MEMBER_BITS[k]! | 0; bits !== 0; bits &= bits - 1) {
        const slot = base + 31 - Math.clz32(bits & -bits);
        if (slot >= size || Number.isNaN(column[slot])) continue;
        members.push(slot);
        values.push(column[slot]!);
      }
    }
    const slots = Int32Array.from(members);
    const sorted = Int32Array.from(valueOrder(slots, Float64Array.from(values)), (at) => slots[at]!);
    this.#sorted[bucket] = sorted;
    return sorted;
  }

  #extend(bucket: number, value: number): void {
    if (value < this.#min[bucket]!) this.#min[bucket] = value;
    if (value > this.#max[bucket]!) this.#max[bucket] = value;
  }

  /**
   * Number of bounds at or below `value`: its bucket. NaN falls in bucket 0. A binary search
   * over the bounds padded with NaN (no comparison holds for it) to a power of two, in steps with
   * no data-dependent branch: a branch per step mispredicts about half the time.
   */
  #bucket(value: number): number {
    const padded = this.#padded;
    let at = 0;
    for (let step = padded.length >>> 1; step > 0; step >>>= 1) at += padded[at + step - 1]! <= value ? step : 0;
    return at + (padded[at]! <= value ? 1 : 0);
  }
}


/**
 * Words of a range leaf's result holding members of the value's own bucket (MEMBER_WORDS) and
 * those members (MEMBER_BITS), noted by a narrowing pass for keepPassing: shared by every leaf, as
 * a leaf runs to its end without yielding.
 */
let MEMBER_WORDS = arenaBits(1024);
let MEMBER_BITS = arenaBits(1024);
/** The digit masks a kernel's pass reads (see the kernel `narrow`). */
const MASKS = arenaBits(6);

function roomForMembers(words: number): void {
  if (MEMBER_WORDS.length >= words) return;
  releaseBits(MEMBER_WORDS);
  releaseBits(MEMBER_BITS);
  MEMBER_WORDS = arenaBits(words);
  MEMBER_BITS = arenaBits(words);
}

// The passes below run as the kernel `narrow` (kernels.wat) when their bitsets are in the arena,
// four words per step; their JavaScript loops serve the others and say what the kernel computes
// (test/catalog/kernels.test.ts holds the two to the same bits). Each loop is a plain function of
// typed arrays and numbers with one branch, on the rare words holding members of the value's
// bucket: written inside RangeIndex.intersect, with a closure per member and a test to skip the
// result's empty words, the same work ran several times slower per word (see bench/README.md,
// "Issue 25, round 5").

/**
 * Narrows `result` by the bucket's "under" bitsets (`under`: the slots of buckets below the
 * value's, `next`: below the next bucket, or null past the last): keeps the slots below when
 * `belowMask` is -1, above when 0, and the bucket's own members where `membersMask` is -1; with
 * `note`, records the words holding members for keepPassing and returns their number. With
 * `fresh`, reads `result` as all ones (a new bitset; the caller clears past the end).
 */
function narrowAround(result: Uint32Array, under: Uint32Array, next: Uint32Array | null, words: number, belowMask: number, membersMask: number, note: boolean, fresh: boolean): number {
  if (note) roomForMembers(words);
  const memberWords = MEMBER_WORDS;
  const memberBits = MEMBER_BITS;
  const nextBits = next ?? under;
  const nextAll = next === null ? -1 : 0;
  if (result.length >= words && under.length >= words && nextBits.length >= words && inArena(result) && inArena(under) && inArena(nextBits) && inArena(memberWords) && inArena(memberBits)) {
    MASKS[1] = nextAll;
    const [r, u, n] = [result.byteOffset, under.byteOffset, nextBits.byteOffset];
    return kernels.narrow(r, words, 0, u, n, 0, 0, 0, 0, MASKS.byteOffset, belowMask, membersMask, note ? 1 : 0, memberWords.byteOffset, memberBits.byteOffset, fresh ? 1 : 0);
  }
  const freshMask = fresh ? -1 : 0;
  let noted = 0;
  for (let i = 0; i < words; i += 1) {
    const had = result[i]! | freshMask;
    const low = under[i]!;
    const same = (nextBits[i]! | nextAll) & ~low;
    const members = had & same;
    result[i] = (had & ((low & belowMask) | (~(low | same) & ~belowMask))) | (members & membersMask);
    if (members !== 0 && note) {
      memberWords[noted] = i;
      memberBits[noted] = members;
      noted += 1;
    }
  }
  return noted;
}

/** narrowAround, reading the bucket's six digit bitsets per word instead of two "under" bitsets. */
function narrowByDigits(result: Uint32Array, digits: Uint32Array, at: DigitsAt, words: number, belowMask: number, membersMask: number, note: boolean, fresh: boolean): number {
  if (note) roomForMembers(words);
  const memberWords = MEMBER_WORDS;
  const memberBits = MEMBER_BITS;
  const { hbAt, htAt, mbAt, mtAt, lbAt, ltAt, hbMask, mbMask, lbMask, htAll, mtAll, ltAll } = at;
  if (result.length >= words && inArena(result) && inArena(digits) && inArena(memberWords) && inArena(memberBits)) {
    MASKS.set([hbMask, htAll, mbMask, mtAll, lbMask, ltAll]);
    const address = (offset: number): number => digits.byteOffset + 4 * offset;
    return kernels.narrow(
      result.byteOffset,
      words,
      1,
      address(hbAt),
      address(htAt),
      address(mbAt),
      address(mtAt),
      address(lbAt),
      address(ltAt),
      MASKS.byteOffset,
      belowMask,
      membersMask,
      note ? 1 : 0,
      memberWords.byteOffset,
      memberBits.byteOffset,
      fresh ? 1 : 0,
    );
  }
  const freshMask = fresh ? -1 : 0;
  let noted = 0;
  for (let i = 0; i < words; i += 1) {
    const had = result[i]! | freshMask;
    const hb = digits[hbAt + i]! & hbMask;
    const ht = digits[htAt + i]! | htAll;
    const mb = digits[mbAt + i]! & mbMask;
    const mt = digits[mtAt + i]! | mtAll;
    const lb = digits[lbAt + i]! & lbMask;
    const lt = digits[ltAt + i]! | ltAll;
    // Below the bucket: a lower high digit, or the same and a lower middle digit, or the same
    // two and a lower low digit.
    const highSame = ht & ~hb;
    const middleSame = mt & ~mb;
    const under = hb | (highSame & (mb | (middleSame & lb)));
    const same = highSame & middleSame & lt & ~lb;
    const members = had & same;
    result[i] = (had & ((under & belowMask) | (~(under | same) & ~belowMask))) | (members & membersMask);
    if (members !== 0 && note) {
      memberWords[noted] = i;
      memberBits[noted] = members;
      noted += 1;
    }
  }
  return noted;
}

/** Adds to `result` the noted members whose own value in `column` compares to `value` as `operator` says. */
function keepPassing(result: Uint32Array, column: Float64Array, noted: number, operator: RangeOperator, value: number): void {
  for (let k = 0; k < noted; k += 1) {
    const i = MEMBER_WORDS[k]!;
    let kept = 0;
    for (let check = MEMBER_BITS[k]!; check !== 0; ) {
      const lowest = check & -check;
      check ^= lowest;
      if (compares(column[(i << 5) + 31 - Math.clz32(lowest)]!, operator, value)) kept |= lowest;
    }
    result[i]! |= kept;
  }
}

/**
 * Clears in `result` the members of `sorted` (slots ascending by their value in `column`, no NaN)
 * whose value does not compare to `value` as `operator` says: a prefix of the list for `>` and
 * `>=`, a suffix for `<` and `<=`.
 */
function dropFailing(result: Uint32Array, sorted: Int32Array, column: Float64Array, operator: RangeOperator, value: number): void {
  const boundary = passingBoundary(sorted, column, operator, value);
  const [from, to] = operator === '>' || operator === '>=' ? [0, boundary] : [boundary, sorted.length];
  for (let k = from; k < to; k += 1) {
    const slot = sorted[k]!;
    result[slot >>> 5] = result[slot >>> 5]! & ~(1 << (slot & 31));
  }
}

/**
 * The places of `slots` (0 to its length) in ascending order of (value, slot), `values[place]`
 * being the value of `slots[place]`, read once by the caller: a comparator reading a large column
 * would miss the cache at every step.
 */
export function valueOrder(slots: Int32Array, values: Float64Array): Int32Array {
  return Int32Array.from(slots, (_, at) => at).sort((a, b) => values[a]! - values[b]! || slots[a]! - slots[b]!);
}

/**
 * Where in `sorted` (slots ascending by their value in `column`, no NaN) the members that compare
 * to `value` as `operator` says meet the others, by binary search: those before it pass `<` and
 * `<=`, those from it on pass `>` and `>=`.
 */
export function passingBoundary(sorted: Int32Array, column: Float64Array, operator: RangeOperator, value: number): number {
  // For `<` and `>=` the first position at or above `value`, for `<=` and `>` the first above it.
  const firstAbove = operator === '<=' || operator === '>';
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    const own = column[sorted[middle]!]!;
    if (firstAbove ? own <= value : own < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

const NO_SLOTS = new Int32Array(0);

/** Whether `own` compares to `value` as `operator` says (NaN: never). */
export function compares(own: number, operator: RangeOperator, value: number): boolean {
  return operator === '<' ? own < value : operator === '<=' ? own <= value : operator === '>' ? own > value : own >= value;
}

/** Offsets (into the digit bitsets) and masks of one bucket's six digit bitsets: see RangeIndex.#digitsAt. */
interface DigitsAt {
  hbAt: number;
  htAt: number;
  mbAt: number;
  mtAt: number;
  lbAt: number;
  ltAt: number;
  hbMask: number;
  mbMask: number;
  lbMask: number;
  htAll: number;
  mtAll: number;
  ltAll: number;
}

/** A bucket's high, middle and low digits. */
function digitsOf(bucket: number): [number, number, number] {
  return [Math.floor(bucket / (MIDDLE * LOW)), Math.floor(bucket / LOW) % MIDDLE, bucket % LOW];
}

/** Share of the compact block's entries the log of later changes may reach before a rebuild. */
const POSTINGS_LOG_SHARE = 1 / 16;
const POSTINGS_LOG_MIN = 16_384;

/**
 * Posting lists: for each term (a small integer), the slots that hold it. One compact block (each
 * term's slots ascending, found through an offset per term) plus a log of the entries added since
 * it was built; an entry whose slot no longer holds its term is stale and is skipped by asking
 * the owner (`holds`), which keeps each slot's terms.
 *
 * Guarantees: exact, given `holds`. Limits: a read with stale entries about costs a `holds` call
 * per entry; `compact` (O(entries + terms)) is due once the log or the stale entries pass
 * POSTINGS_LOG_SHARE of the entries, and the owner calls it between searches.
 */
export class Postings {
  /** offsets[term] .. offsets[term + 1]: the term's slots in `slots`, for terms below `#terms`. */
  #offsets: Uint32Array = new Uint32Array(1);
  #slots: Int32Array = new Int32Array(0);
  #terms = 0;
  /** Entries added since the block was built, as (term, slot) pairs. */
  readonly #logTerms = new IntList();
  readonly #logSlots = new IntList();
  /** Per term of the log, its entries' positions in the log, built on the first read after an add. */
  #logByTerm: Map<number, number[]> | undefined;
  /** Entries whose slot dropped their term since the block was built. */
  stale = 0;

  add(term: number, slot: number): void {
    this.#logTerms.push(term);
    this.#logSlots.push(slot);
    this.#logByTerm = undefined;
  }

  /** Counts an entry made stale by a slot that no longer holds its term. */
  drop(): void {
    this.stale += 1;
  }

  /** Whether the block alone answers: nothing logged, nothing stale. */
  get clean(): boolean {
    return this.#logTerms.length === 0 && this.stale === 0;
  }

  get due(): boolean {
    const limit = Math.max(POSTINGS_LOG_MIN, this.#slots.length * POSTINGS_LOG_SHARE);
    return this.#logTerms.length > limit || this.stale > limit;
  }

  /** Sets in `bits` the slots that hold `term`. */
  setBits(term: number, bits: Uint32Array, holds: (slot: number, term: number) => boolean): void {
    if (this.stale === 0 && term < this.#terms) {
      // Nothing stale: the block's entries are set without asking (the common case, and the long lists).
      const slots = this.#slots;
      const end = this.#offsets[term + 1]!;
      for (let i = this.#offsets[term]!; i < end; i += 1) bits[slots[i]! >>> 5]! |= 1 << (slots[i]! & 31);
      if (this.#logTerms.length === 0) return;
      this.#forEachLogged(term, (slot) => setBit(bits, slot), holds);
      return;
    }
    this.forEach(term, (slot) => setBit(bits, slot), holds);
  }

  /** Calls `each` with every slot that holds `term` (log entries after the block's). */
  forEach(term: number, each: (slot: number) => void, holds: (slot: number, term: number) => boolean): void {
    const checked = this.stale > 0;
    if (term < this.#terms) {
      const slots = this.#slots;
      const end = this.#offsets[term + 1]!;
      for (let i = this.#offsets[term]!; i < end; i += 1) {
        const slot = slots[i]!;
        if (!checked || holds(slot, term)) each(slot);
      }
    }
    if (this.#logTerms.length === 0) return;
    this.#forEachLogged(term, each, holds);
  }

  #forEachLogged(term: number, each: (slot: number) => void, holds: (slot: number, term: number) => boolean): void {
    const positions = this.#logIndex().get(term);
    if (positions === undefined) return;
    const logSlots = this.#logSlots.data;
    // A slot may have been logged twice for one term (dropped, then taken again): `holds` is
    // asked for each, and setting a bit twice is harmless.
    for (const position of positions) {
      const slot = logSlots[position]!;
      if (holds(slot, term)) each(slot);
    }
  }

  #logIndex(): Map<number, number[]> {
    if (this.#logByTerm !== undefined) return this.#logByTerm;
    const byTerm = new Map<number, number[]>();
    const terms = this.#logTerms.data;
    for (let i = 0; i < this.#logTerms.length; i += 1) {
      let positions = byTerm.get(terms[i]!);
      if (positions === undefined) byTerm.set(terms[i]!, (positions = []));
      positions.push(i);
    }
    this.#logByTerm = byTerm;
    return byTerm;
  }

  /**
   * Rebuilds the block from every slot's terms (`termsOf(slot, emit)` emits each once), slots
   * ascending, and empties the log.
   */
  compact(size: number, terms: number, termsOf: (slot: number, emit: (term: number) => void) => void): void {
    const offsets = new Uint32Array(terms + 1);
    for (let slot = 0; slot < size; slot += 1) termsOf(slot, (term) => (offsets[term + 1]! += 1));
    for (let term = 0; term < terms; term += 1) offsets[term + 1]! += offsets[term]!;
    const slots = new Int32Array(offsets[terms]!);
    const next = offsets.slice(0, terms);
    for (let slot = 0; slot < size; slot += 1) termsOf(slot, (term) => (slots[next[term]!++] = slot));
    this.#offsets = offsets;
    this.#slots = slots;
    this.#terms = terms;
    this.#logTerms.clear();
    this.#logSlots.clear();
    this.#logTerms.trim();
    this.#logSlots.trim();
    this.#logByTerm = undefined;
    this.stale = 0;
  }

  /** The compact block (for a snapshot: `compact` first, so the log is empty). */
  parts(): [Uint32Array, Int32Array] {
    return [this.#offsets, this.#slots];
  }

  /** Takes a block `parts` gave, with an empty log. */
  restore(offsets: Uint32Array, slots: Int32Array): void {
    this.#offsets = offsets;
    this.#slots = slots;
    this.#terms = offsets.length - 1;
    this.#logTerms.clear();
    this.#logSlots.clear();
    this.#logByTerm = undefined;
    this.stale = 0;
  }
}

/**
 * Folded strings to small integers, exactly, with no JavaScript string kept per term: the UTF-8
 * bytes of every term in one buffer, found through an open-addressing table of FNV-1a hashes.
 */
export class TermDictionary {
  #bytes: Uint8Array = new Uint8Array(1 << 16);
  #used = 0;
  /** starts[code] .. starts[code + 1]: the term's bytes. */
  readonly #starts = new Growable((n) => new Uint32Array(n));
  readonly #hashes = new Growable((n) => new Uint32Array(n));
  #size = 0;
  /** code + 1 per table slot, 0 when empty; a power of two, at most three quarters full. */
  #table: Int32Array = new Int32Array(1024);
  #scratch = new Uint8Array(256);

  get size(): number {
    return this.#size;
  }

  /**
   * The code of `foldText(raw)`, adding it when new. Printable ASCII (what most tags and words are)
   * is lower-cased into the scratch buffer directly: no string is made.
   */
  codeFolded(raw: string, fold: (text: string) => string): number {
    const length = raw.length;
    if (length > this.#scratch.length) this.#scratch = new Uint8Array(length * 3);
    const scratch = this.#scratch;
    for (let i = 0; i < length; i += 1) {
      let unit = raw.charCodeAt(i);
      if (unit < 0x20 || unit > 0x7e) return this.code(fold(raw));
      if (unit >= 0x41 && unit <= 0x5a) unit += 0x20;
      scratch[i] = unit;
    }
    return this.#codeOfScratch(length);
  }

  /** The term's code, adding it when new. */
  code(term: string): number {
    return this.#codeOfScratch(this.#encode(term));
  }

  /** The code of the term whose UTF-8 bytes are the scratch buffer's first `length`. */
  #codeOfScratch(length: number): number {
    const hash = fnv(this.#scratch, length);
    const found = this.#lookup(hash, length);
    if (found >= 0) return found;
    const code = this.#size;
    if (this.#used + length > this.#bytes.length) {
      const grown = new Uint8Array(Math.max(this.#used + length, this.#bytes.length * 2));
      grown.set(this.#bytes.subarray(0, this.#used));
      this.#bytes = grown;
    }
    this.#bytes.set(this.#scratch.subarray(0, length), this.#used);
    this.#starts.ensure(code + 2);
    this.#hashes.ensure(code + 1);
    this.#starts.data[code] = this.#used;
    this.#used += length;
    this.#starts.data[code + 1] = this.#used;
    this.#hashes.data[code] = hash;
    this.#size += 1;
    if (this.#size * 4 > this.#table.length * 3) this.#rehash(this.#table.length * 2);
    else this.#place(code, hash);
    return code;
  }

  /** The term's code, or -1 when no slot ever held it. */
  find(term: string): number {
    const length = this.#encode(term);
    return this.#lookup(fnv(this.#scratch, length), length);
  }

  /** Its state as typed arrays (views: copy or write them before the next `code`). */
  parts(): [Uint8Array, Uint32Array, Uint32Array, Int32Array] {
    return [this.#bytes.subarray(0, this.#used), this.#starts.data.subarray(0, this.#size + 1), this.#hashes.data.subarray(0, this.#size), this.#table];
  }

  /** A dictionary of the state `parts` gave. */
  static fromParts(bytes: Uint8Array<ArrayBuffer>, starts: Uint32Array<ArrayBuffer>, hashes: Uint32Array<ArrayBuffer>, table: Int32Array<ArrayBuffer>): TermDictionary {
    const dictionary = new TermDictionary();
    dictionary.#bytes = bytes;
    dictionary.#used = bytes.length;
    dictionary.#size = hashes.length;
    dictionary.#starts.data = starts;
    dictionary.#hashes.data = hashes;
    dictionary.#table = table;
    return dictionary;
  }

  /** Gives back spare room once a load is done. */
  trim(): void {
    this.#starts.trim(this.#size + 1);
    this.#hashes.trim(this.#size);
    if (this.#bytes.length > this.#used + (this.#used >>> 3) + 1024) this.#bytes = this.#bytes.slice(0, this.#used + (this.#used >>> 3) + 1024);
  }

  #encode(term: string): number {
    // UTF-8 takes at most three bytes per UTF-16 unit.
    if (term.length * 3 > this.#scratch.length) this.#scratch = new Uint8Array(term.length * 3);
    return encoder.encodeInto(term, this.#scratch).written;
  }

  #lookup(hash: number, length: number): number {
    const mask = this.#table.length - 1;
    const starts = this.#starts.data;
    const hashes = this.#hashes.data;
    for (let at = hash & mask; ; at = (at + 1) & mask) {
      const entry = this.#table[at]!;
      if (entry === 0) return -1;
      const code = entry - 1;
      if (hashes[code] !== hash) continue;
      const start = starts[code]!;
      if (starts[code + 1]! - start !== length) continue;
      let same = true;
      for (let i = 0; i < length && same; i += 1) same = this.#bytes[start + i] === this.#scratch[i];
      if (same) return code;
    }
  }

  #place(code: number, hash: number): void {
    const mask = this.#table.length - 1;
    let at = hash & mask;
    while (this.#table[at] !== 0) at = (at + 1) & mask;
    this.#table[at] = code + 1;
  }

  #rehash(length: number): void {
    this.#table = new Int32Array(length);
    for (let code = 0; code < this.#size; code += 1) this.#place(code, this.#hashes.data[code]!);
  }
}

const encoder = new TextEncoder();

function fnv(bytes: Uint8Array, length: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < length; i += 1) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  return hash >>> 0;
}
