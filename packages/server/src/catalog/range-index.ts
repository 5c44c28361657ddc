// Range leaves (`<`, `<=`, `>`, `>=`) over one numeric column of the storefront index without a
// pass over the column: slots are split by value into at most RANGE_BUCKETS buckets whose bounds
// are quantiles of the column when it was built, and for each bound the bitset of the slots in the
// buckets below it is kept. A leaf then keeps the slots of the buckets wholly on its side (one
// pass over the bitset it narrows) and, of the one bucket its value falls in, the members on its
// side: that bucket's members sorted by value, cut by a binary search.
//
// Guarantees: answers are exact for any values, skewed or repeated ones included (bounds only
// decide speed); NaN never satisfies a comparison, as in a pass over the column. Every write moves
// its slot between buckets (the bits between the two bounds) and drops the sorted members of both,
// so the bitsets stay current without a rebuild.
// Limits: bounds stay where they were put; values written later may crowd one bucket, which makes
// its leaves cost more. The owner rebuilds when the column has doubled since the build. A bucket's
// sorted members are made again (O(n/RANGE_BUCKETS log) ) on the first leaf after a write to it.
// Memory: RANGE_BUCKETS − 1 bitsets of n bits, one byte per slot, and the sorted buckets (12 bytes
// per slot once all are made).

export type RangeOperator = '<' | '<=' | '>' | '>=';

/** A bucket's members other than NaN ascending by value, and those holding NaN. */
interface SortedBucket {
  slots: Int32Array;
  values: Float64Array;
  nan: number[];
}

/**
 * How many of ascending `values` are below `value` (or equal, when `inclusive`): the index of the
 * first one that is not. NaN as `value` counts none.
 */
export function countBelow(values: Float64Array, value: number, inclusive: boolean): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (inclusive ? values[middle]! <= value : values[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

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
  /**
   * Per bucket, a value no member exceeds (the largest ever written to it: a member leaving does
   * not lower it). A leaf whose value lies at or past a bucket's edge needs no check of its members.
   */
  readonly #max: Float64Array;
  /** Whether NaN was ever written: NaN satisfies no comparison, so every member is then checked. */
  #sawNaN = false;
  /** Per bucket, its members sorted by value, made on first need and dropped by a write to the bucket. */
  readonly #sorted: (SortedBucket | undefined)[] = [];
  /** Slots when built: the owner rebuilds once the column has doubled. */
  readonly builtAt: number;

  private constructor(bounds: Float64Array, capacity: number, builtAt: number) {
    this.#bounds = bounds;
    this.#below = Array.from({ length: bounds.length }, () => new Uint32Array(wordsFor(capacity)));
    this.#bucketOf = new Uint8Array(capacity).fill(bounds.length);
    this.#max = new Float64Array(bounds.length + 1).fill(Number.NEGATIVE_INFINITY);
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
      const value = column[slot]!;
      const bucket = index.#bucket(value);
      index.#bucketOf[slot] = bucket;
      if (value > index.#max[bucket]!) index.#max[bucket] = value;
      else if (Number.isNaN(value)) index.#sawNaN = true;
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

  /** Records the value now stored at `slot` (new, or rewritten with another value). */
  set(slot: number, value: number): void {
    const from = this.#bucketOf[slot]!;
    const to = this.#bucket(value);
    if (value > this.#max[to]!) this.#max[to] = value;
    else if (Number.isNaN(value)) this.#sawNaN = true;
    this.#sorted[from] = undefined;
    this.#sorted[to] = undefined;
    if (from === to) return;
    this.#bucketOf[slot] = to;
    const word = slot >>> 5;
    const bit = 1 << (slot & 31);
    // In the bitsets from its bucket up: joins those from `to` to below `from`, or leaves the others.
    if (to < from) for (let k = to; k < from && k < this.#below.length; k += 1) this.#below[k]![word]! |= bit;
    else for (let k = from; k < to && k < this.#below.length; k += 1) this.#below[k]![word]! &= ~bit;
  }

  /** Slots of `column[0 .. size)` whose value compares to `value` as `operator` says, as a bitset from `pool`. */
  select(column: Float64Array, size: number, operator: RangeOperator, value: number, pool: BitsetPool): Uint32Array {
    const bits = pool.take(false);
    bits.fill(0xffffffff);
    clearPastEnd(bits, size);
    this.intersect(bits, column, size, operator, value);
    return bits;
  }

  /**
   * Clears in `result` (a bitset over `size` slots) the slots whose value does not compare to
   * `value` as `operator` says: the failing members of the bucket `value` falls in, found by binary
   * search in the bucket's sorted members, then one pass over `result` keeping the slots of the
   * buckets that pass whole and of that bucket.
   */
  intersect(result: Uint32Array, column: Float64Array, size: number, operator: RangeOperator, value: number): void {
    // Every bucket under `bucket` lies wholly below `value`, every one above it wholly at or above;
    // the bucket itself spans [low, max] with low <= value.
    const bucket = this.#bucket(value);
    const low = bucket === 0 ? Number.NEGATIVE_INFINITY : this.#bounds[bucket - 1]!;
    const max = this.#max[bucket]!;
    const known = !this.#sawNaN;
    // Slots pass whole when in a bucket below `under` (for < and <=) or not below it (> and >=).
    let under: number;
    let check: boolean;
    if (operator === '<' || operator === '<=') {
      const all = known && (operator === '<=' ? max <= value : max < value);
      under = all ? bucket + 1 : bucket;
      check = !all && !(operator === '<' && low === value);
    } else if (operator === '>=' && low === value) {
      under = bucket;
      check = false;
    } else {
      under = bucket + 1;
      check = !(known && (operator === '>=' ? max < value : max <= value));
    }
    const invert = operator === '>' || operator === '>=';
    const last = this.#below.length;
    // under = 0: no slot is below it; under > last: every slot is.
    const whole = under === 0 || under > last ? undefined : this.#below[under - 1]!;
    const wholeConstant = (under === 0) === invert ? -1 : 0;
    const upper = bucket < last ? this.#below[bucket]! : undefined;
    const lower = bucket > 0 ? this.#below[bucket - 1]! : undefined;
    if (check) {
      const sorted = this.#sortedBucket(bucket, column, size);
      const { values, slots } = sorted;
      // The failing members are one end of the sorted run (NaN fails every comparison).
      const [from, to] =
        operator === '<' ? [countBelow(values, value, false), values.length]
        : operator === '<=' ? [countBelow(values, value, true), values.length]
        : operator === '>' ? [0, countBelow(values, value, true)]
        : [0, countBelow(values, value, false)];
      for (let k = from; k < to; k += 1) result[slots[k]! >>> 5]! &= ~(1 << (slots[k]! & 31));
      for (const slot of sorted.nan) result[slot >>> 5]! &= ~(1 << (slot & 31));
    }
    const words = wordsFor(size);
    for (let i = 0; i < words; i += 1) {
      const had = result[i]!;
      if (had === 0) continue;
      const passing = whole === undefined ? wholeConstant : invert ? ~whole[i]! : whole[i]!;
      const members = check ? (upper === undefined ? -1 : upper[i]!) & (lower === undefined ? -1 : ~lower[i]!) : 0;
      result[i] = had & (passing | members);
    }
  }

  #sortedBucket(bucket: number, column: Float64Array, size: number): SortedBucket {
    let sorted = this.#sorted[bucket];
    if (sorted !== undefined) return sorted;
    const upper = bucket < this.#below.length ? this.#below[bucket]! : undefined;
    const lower = bucket > 0 ? this.#below[bucket - 1]! : undefined;
    const members: number[] = [];
    const nan: number[] = [];
    const words = wordsFor(size);
    for (let i = 0; i < words; i += 1) {
      let word = (upper === undefined ? -1 : upper[i]!) & (lower === undefined ? -1 : ~lower[i]!);
      if (i === words - 1 && (size & 31) !== 0) word &= 0xffffffff >>> (32 - (size & 31));
      while (word !== 0) {
        const lowest = word & -word;
        word ^= lowest;
        const slot = (i << 5) + 31 - Math.clz32(lowest);
        (Number.isNaN(column[slot]) ? nan : members).push(slot);
      }
    }
    const slots = Int32Array.from(members).sort((a, b) => column[a]! - column[b]!);
    sorted = { slots, values: Float64Array.from(slots, (slot) => column[slot]!), nan };
    this.#sorted[bucket] = sorted;
    return sorted;
  }

  /** Sorts every bucket's members now, so no leaf pays for it on first use. */
  sortAll(column: Float64Array, size: number): void {
    for (let bucket = 0; bucket <= this.#below.length; bucket += 1) this.#sortedBucket(bucket, column, size);
  }

  /** Number of bounds at or below `value`: its bucket. NaN falls in bucket 0. */
  #bucket(value: number): number {
    return countBelow(this.#bounds, value, true);
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

/** Inverts `bits` in place, slots past `size` left clear. */
export function complement(bits: Uint32Array, size: number): Uint32Array {
  for (let i = 0; i < bits.length; i += 1) bits[i] = ~bits[i]!;
  clearPastEnd(bits, size);
  return bits;
}

/** Clears the bits of slots at or past `size`, so population counts stay exact. */
export function clearPastEnd(bits: Uint32Array, size: number): void {
  const spare = bits.length * 32 - size;
  if (spare > 0 && spare < 32) bits[bits.length - 1]! &= 0xffffffff >>> spare;
}
