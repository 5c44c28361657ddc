// Range leaves (`<`, `<=`, `>`, `>=`) over one numeric column of the storefront index without a
// pass over the column: slots are split by value into at most RANGE_BUCKETS buckets whose bounds
// are quantiles of the column when it was built, and for each bound the bitset of the slots in the
// buckets below it is kept. A leaf is then one copy of such a bitset (n/32 words) plus a check of
// the slots of the one bucket its value falls in (about n/RANGE_BUCKETS values).
//
// Guarantees: answers are exact for any values, skewed or repeated ones included (a bucket is
// checked value by value, so bounds only decide speed); NaN never satisfies a comparison, as in a
// pass over the column. Every write moves its slot between buckets (the bits between the two
// bounds), so the bitsets stay current without a rebuild.
// Limits: bounds stay where they were put; values written later may crowd one bucket, which makes
// its leaves cost more. The owner rebuilds when the column has doubled since the build. Memory:
// RANGE_BUCKETS − 1 bitsets of n bits and one byte per slot.

/** Buckets per column: one byte per slot holds a bucket number. */
const RANGE_BUCKETS = 64;
/** Values sampled to place the bounds. */
const SAMPLE = 8_192;

export class RangeIndex {
  /** Ascending, distinct. Bucket b holds values v with bounds[b-1] <= v < bounds[b]. */
  readonly #bounds: Float64Array;
  /** #below[k] = slots whose bucket is at most k (so below bound k), for k < bounds.length. */
  #below: Uint32Array[];
  /** Per slot, its bucket; slots not yet written are in the last bucket, in no bitset. */
  #bucketOf: Uint8Array;
  /** Slots when built: the owner rebuilds once the column has doubled. */
  readonly builtAt: number;

  private constructor(bounds: Float64Array, capacity: number, builtAt: number) {
    this.#bounds = bounds;
    this.#below = Array.from({ length: bounds.length }, () => new Uint32Array(wordsFor(capacity)));
    this.#bucketOf = new Uint8Array(capacity).fill(bounds.length);
    this.builtAt = builtAt;
  }

  /** Indexes `column[0 .. size)`, with room for `capacity` slots. */
  static build(column: Float64Array, size: number, capacity: number): RangeIndex {
    const step = Math.max(1, Math.floor(size / SAMPLE));
    const sample: number[] = [];
    for (let slot = 0; slot < size; slot += step) if (!Number.isNaN(column[slot])) sample.push(column[slot]!);
    sample.sort((a, b) => a - b);
    const bounds: number[] = [];
    for (let k = 1; k < RANGE_BUCKETS; k += 1) {
      const bound = sample[Math.floor((k * sample.length) / RANGE_BUCKETS)];
      if (bound !== undefined && bound !== bounds[bounds.length - 1] && bound > sample[0]!) bounds.push(bound);
    }
    const index = new RangeIndex(Float64Array.from(bounds), capacity, size);
    const below = index.#below;
    const last = bounds.length;
    // Each slot's bit goes into its own bucket's bitset, then the bitsets are accumulated upwards.
    for (let slot = 0; slot < size; slot += 1) {
      const bucket = index.#bucket(column[slot]!);
      index.#bucketOf[slot] = bucket;
      if (bucket < last) below[bucket]![slot >>> 5]! |= 1 << (slot & 31);
    }
    for (let k = 1; k < last; k += 1) {
      const into = below[k]!;
      const from = below[k - 1]!;
      for (let i = 0; i < into.length; i += 1) into[i]! |= from[i]!;
    }
    return index;
  }

  /** Makes room for `capacity` slots. */
  ensure(capacity: number): void {
    if (capacity <= this.#bucketOf.length) return;
    const bucketOf = new Uint8Array(capacity).fill(this.#bounds.length);
    bucketOf.set(this.#bucketOf);
    this.#bucketOf = bucketOf;
    this.#below = this.#below.map((bits) => {
      const grown = new Uint32Array(wordsFor(capacity));
      grown.set(bits);
      return grown;
    });
  }

  /** Records the value now stored at `slot` (new or rewritten). */
  set(slot: number, value: number): void {
    const from = this.#bucketOf[slot]!;
    const to = this.#bucket(value);
    if (from === to) return;
    this.#bucketOf[slot] = to;
    const word = slot >>> 5;
    const bit = 1 << (slot & 31);
    // In the bitsets from its bucket up: joins those from `to` to below `from`, or leaves the others.
    if (to < from) for (let k = to; k < from && k < this.#below.length; k += 1) this.#below[k]![word]! |= bit;
    else for (let k = from; k < to && k < this.#below.length; k += 1) this.#below[k]![word]! &= ~bit;
  }

  /** Slots of `column[0 .. size)` whose value is below `value` (or equal, when `inclusive`). */
  below(column: Float64Array, size: number, value: number, inclusive: boolean, pool: BitsetPool): Uint32Array {
    const bucket = this.#bucket(value);
    // Every bucket under `bucket` lies wholly below `value`; every one above it, wholly at or above.
    const bits = pool.take(true);
    if (bucket > 0) bits.set(this.#below[bucket - 1]!.subarray(0, bits.length));
    this.#each(bucket, size, (slot) => {
      const v = column[slot]!;
      if (inclusive ? v <= value : v < value) bits[slot >>> 5]! |= 1 << (slot & 31);
    });
    return bits;
  }

  /** Slots of `column[0 .. size)` whose value is above `value` (or equal, when `inclusive`). */
  above(column: Float64Array, size: number, value: number, inclusive: boolean, pool: BitsetPool): Uint32Array {
    const bucket = this.#bucket(value);
    const bits = pool.take(bucket >= this.#below.length);
    if (bucket < this.#below.length) {
      const under = this.#below[bucket]!;
      for (let i = 0; i < bits.length; i += 1) bits[i] = ~under[i]!;
      clearPastEnd(bits, size);
    }
    this.#each(bucket, size, (slot) => {
      const v = column[slot]!;
      if (inclusive ? v >= value : v > value) bits[slot >>> 5]! |= 1 << (slot & 31);
    });
    return bits;
  }

  /** Number of bounds at or below `value`: its bucket. NaN falls in bucket 0. */
  #bucket(value: number): number {
    const bounds = this.#bounds;
    let low = 0;
    let high = bounds.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (bounds[middle]! <= value) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** Calls `visit` for every slot below `size` in `bucket`. */
  #each(bucket: number, size: number, visit: (slot: number) => void): void {
    const upper = bucket < this.#below.length ? this.#below[bucket]! : undefined;
    const lower = bucket > 0 ? this.#below[bucket - 1]! : undefined;
    const words = wordsFor(size);
    for (let i = 0; i < words; i += 1) {
      let word = (upper === undefined ? 0xffffffff : upper[i]!) & (lower === undefined ? 0xffffffff : ~lower[i]!);
      if (i === words - 1 && (size & 31) !== 0) word &= 0xffffffff >>> (32 - (size & 31));
      while (word !== 0) {
        const low = word & -word;
        visit((i << 5) + 31 - Math.clz32(low));
        word ^= low;
      }
    }
  }
}

/**
 * Bitsets of one length for the searches in flight, handed back for reuse when none is: a search
 * at a million products takes several of 125 KB, and allocating them afresh makes V8 run a full
 * collection of the whole heap (the index included) every few hundred searches.
 */
export class BitsetPool {
  #words = 0;
  #free: Uint32Array[] = [];
  #taken: Uint32Array[] = [];
  #searches = 0;

  /** Starts a search over `size` slots: every bitset it takes is `wordsFor(size)` words. */
  begin(size: number): void {
    const words = wordsFor(size);
    if (words !== this.#words) {
      this.#words = words;
      this.#free = [];
    }
    this.#searches += 1;
  }

  /** Ends a search; with none left in flight, every bitset taken is free again. */
  end(): void {
    this.#searches -= 1;
    if (this.#searches > 0) return;
    for (const bits of this.#taken) if (bits.length === this.#words && this.#free.length < MAX_FREE) this.#free.push(bits);
    this.#taken = [];
  }

  /** A bitset for the current search: cleared, or with whatever it held when `zeroed` is false. */
  take(zeroed: boolean): Uint32Array {
    const reused = this.#free.pop();
    const bits = reused ?? new Uint32Array(this.#words);
    if (reused !== undefined && zeroed) bits.fill(0);
    // A search that never ends would keep its bitsets here: past the cap they are left to the GC.
    if (this.#taken.length < MAX_FREE) this.#taken.push(bits);
    return bits;
  }
}

const MAX_FREE = 256;

export function wordsFor(slots: number): number {
  return Math.ceil(slots / 32);
}

/** Clears the bits of slots at or past `size`, so population counts stay exact. */
export function clearPastEnd(bits: Uint32Array, size: number): void {
  const spare = bits.length * 32 - size;
  if (spare > 0 && spare < 32) bits[bits.length - 1]! &= 0xffffffff >>> spare;
}
