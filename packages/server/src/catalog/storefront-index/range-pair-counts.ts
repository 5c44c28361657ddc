// How many slots lie below (or not below) a bucket of one range index and a bucket of another at
// once, and are available: the population count of an AND of two range leaves' bucket bitsets
// (RangeIndex.split) and `available`, answered without reading those bitsets. On a large catalog
// that count is a pass over three bitsets of n/8 bytes each, bound by memory bandwidth; here it is
// a table look-up and a scan of a few buckets' worth of 2-byte codes.
//
// Layout: the slots grouped by their bucket of the first index (positions), each position holding
// its slot's bucket of the second index and whether it is available (one 16-bit code); the buckets
// of the first index in groups of about GROUP_SLOTS positions, and per group and bucket of the
// second index the number of positions in that group or later ones below that bucket (a suffix
// over groups of prefix counts over buckets), once over every slot and once over available ones.
// A count reads one table entry and scans the positions between the first bucket and the start of
// the next group. The leaves' extra members (the passing members of each value's own bucket) are
// checked against the other leaf by a sequential scan of codes kept per bucket's member list (the
// member's bucket of the other index and whether it is available), made on the list's first use
// here: no read of a bitset or a column at a random slot, each of which misses the cache on a large
// catalog, but for the rare members in the other value's own bucket. Each position also holds its
// slot, and the slots are grouped by their bucket of the second index as well, each with its
// bucket of the first index and whether it is available: countLeaves counts a whole AND of two
// leaves with neither the range indexes' member lists nor any bitset, the passing members of each
// value's bucket found by binary search in the bucket's places (sorted by value on first use) and
// their codes read in order.
//
// Guarantees: exact for the columns, range indexes and `available` bitset it was built from, as
// they were during the build; the caller keeps it only as long as none of them is written (the
// index's version) and the range indexes are the same objects.
// Limits: static; a write makes it stale and a later use builds it again (a pass over every slot,
// in slices that yield, abandoned when the index is written meanwhile). Memory: 12 bytes per slot
// (two codes and two slot numbers) and two tables of (groups + 1) × (second index's buckets + 1)
// 4-byte counts: about 16 bytes per slot in all (groups grow with the slots); then 2 bytes per
// member of each bucket whose extra members were checked by passingExtras (at most 4 bytes per
// slot, both columns' buckets all used).
import { hasBit } from './bits.ts';
import { Growable } from './growable.ts';
import { compares, passingBoundary, type RangeOperator, valueOrder } from './ordering.ts';
import { type RangeBase, type RangeIndex, type RangeSplit } from './range-index.ts';

/** The slots of a bucket base: those under bucket `under` of its range index, or with `flip` -1 those not under it (RangeIndex.split). */
export interface BucketBase {
  under: number;
  flip: number;
}

/** A range leaf over one of the pair's columns: as RangeIndex.split splits it, and its comparison. */
export interface PairLeaf {
  split: RangeSplit;
  operator: RangeOperator;
  value: number;
}

/** A range leaf over one of the pair's columns: its base (RangeIndex.base) and its comparison. */
export interface LeafBase extends RangeBase {
  operator: RangeOperator;
  value: number;
}

/** One range index and the column it indexes. */
export interface IndexedColumn {
  range: RangeIndex;
  column: Float64Array;
}

/** Positions per group of first-index buckets, about: a count scans at most one group's. */
const GROUP_SLOTS = 16_384;
const AVAILABLE = 0x8000;
const BUCKET = 0x7fff;
/** Slots between two checks of the clock while building. */
const CHECK_EVERY = 8_192;
/** Milliseconds of building between two pauses. */
const BUILD_SLICE_MS = 4;
/** The scratch list passingExtras returns a view of. */
const PASSING = new Growable((n) => new Int32Array(n));

export class RangePairCounts {
  readonly first: RangeIndex;
  readonly second: RangeIndex;
  readonly #columns: readonly [IndexedColumn, IndexedColumn];
  readonly #available: Uint32Array;
  /** Per member list of a first-index bucket, per member: its second-index bucket, AVAILABLE set when available; and the reverse. */
  readonly #memberCodes = [new WeakMap<Int32Array, Uint16Array>(), new WeakMap<Int32Array, Uint16Array>()] as const;
  readonly #size: number;
  /** Per first-index bucket (and one past the last), the position its slots start at. */
  readonly #starts: Int32Array;
  /** Per first-index bucket (and one past the last), the available slots in it and in every later bucket. */
  readonly #availableFrom: Int32Array;
  /** Per position, the second-index bucket of its slot, with AVAILABLE set when the slot is available. */
  readonly #codes: Uint16Array;
  /** Per position, its slot. */
  readonly #slots: Int32Array;
  /** Per second-index bucket (and one past the last), where its slots start in #secondSlots. */
  readonly #secondStarts: Int32Array;
  /** The slots grouped by their second-index bucket. */
  readonly #secondSlots: Int32Array;
  /** Per place in #secondSlots, its slot's first-index bucket, with AVAILABLE set when the slot is available. */
  readonly #secondCodes: Uint16Array;
  /** Per bucket of each index, 1 once its places are sorted by value (#passing); else they ascend by slot. */
  readonly #sortedBuckets: readonly [Uint8Array, Uint8Array];
  /** First-index buckets per group. */
  readonly #group: number;
  /** Second-index buckets + 1: the width of a table row. */
  readonly #width: number;
  /** Row g, column j: positions in group g or later whose second-index bucket is below j (row `groups`: none). */
  readonly #below: Int32Array;
  /** The same, of available slots only. */
  readonly #belowAvailable: Int32Array;

  private constructor(
    columns: readonly [IndexedColumn, IndexedColumn],
    available: Uint32Array,
    size: number,
    positions: { starts: Int32Array; availableFrom: Int32Array; codes: Uint16Array; slots: Int32Array; secondStarts: Int32Array; secondSlots: Int32Array; secondCodes: Uint16Array },
    group: number,
    below: Int32Array,
    belowAvailable: Int32Array,
  ) {
    this.first = columns[0].range;
    this.second = columns[1].range;
    this.#columns = columns;
    this.#available = available;
    this.#size = size;
    this.#starts = positions.starts;
    this.#availableFrom = positions.availableFrom;
    this.#codes = positions.codes;
    this.#slots = positions.slots;
    this.#secondStarts = positions.secondStarts;
    this.#secondSlots = positions.secondSlots;
    this.#secondCodes = positions.secondCodes;
    this.#sortedBuckets = [new Uint8Array(this.first.buckets), new Uint8Array(this.second.buckets)];
    this.#group = group;
    this.#width = this.second.buckets + 1;
    this.#below = below;
    this.#belowAvailable = belowAvailable;
  }

  /**
   * Counts over slots `0 .. size)` of the two columns and `available`. `pause` is awaited between
   * slices of the work and answers whether to go on: undefined when it says no.
   */
  static async build(first: IndexedColumn, second: IndexedColumn, available: Uint32Array, size: number, pause: () => Promise<boolean>): Promise<RangePairCounts | undefined> {
    const steps = RangePairCounts.#steps(first, second, available, size);
    let sliceStart = performance.now();
    for (;;) {
      const step = steps.next();
      if (step.done === true) return step.value;
      if (performance.now() - sliceStart < BUILD_SLICE_MS) continue;
      if (!(await pause())) return undefined;
      sliceStart = performance.now();
    }
  }

  /** The same, in one synchronous step (for an index being prepared, before it answers). */
  static buildNow(first: IndexedColumn, second: IndexedColumn, available: Uint32Array, size: number): RangePairCounts {
    const steps = RangePairCounts.#steps(first, second, available, size);
    for (;;) {
      const step = steps.next();
      if (step.done === true) return step.value;
    }
  }

  /** The build, yielding every CHECK_EVERY slots or so (a chance to pause). */
  static *#steps(first: IndexedColumn, second: IndexedColumn, available: Uint32Array, size: number): Generator<void, RangePairCounts> {
    if (Math.max(first.range.buckets, second.range.buckets) > BUCKET) throw new Error('range pair counts: the buckets do not fit a code');
    const buckets = first.range.buckets;
    const firstBuckets = new Uint16Array(size);
    const slotCodes = new Uint16Array(size);
    const inBucket = new Int32Array(buckets);
    const availableIn = new Int32Array(buckets + 1);
    const inSecond = new Int32Array(second.range.buckets);
    for (let from = 0; from < size; from += CHECK_EVERY) {
      yield;
      const to = Math.min(size, from + CHECK_EVERY);
      for (let slot = from; slot < to; slot += 1) {
        const bucket = first.range.bucketOf(first.column[slot]!);
        const secondBucket = second.range.bucketOf(second.column[slot]!);
        const isAvailable = hasBit(available, slot);
        firstBuckets[slot] = bucket;
        slotCodes[slot] = secondBucket | (isAvailable ? AVAILABLE : 0);
        inBucket[bucket]! += 1;
        inSecond[secondBucket]! += 1;
        if (isAvailable) availableIn[bucket]! += 1;
      }
    }
    const starts = startsOf(inBucket);
    const secondStarts = startsOf(inSecond);
    const availableFrom = new Int32Array(buckets + 1);
    for (let bucket = buckets - 1; bucket >= 0; bucket -= 1) availableFrom[bucket] = availableFrom[bucket + 1]! + availableIn[bucket]!;
    // Slots in ascending order within a bucket, of each index: counting sorts.
    const next = starts.slice();
    const nextSecond = secondStarts.slice();
    const codes = new Uint16Array(size);
    const slots = new Int32Array(size);
    const secondSlots = new Int32Array(size);
    const secondCodes = new Uint16Array(size);
    for (let from = 0; from < size; from += CHECK_EVERY) {
      yield;
      const to = Math.min(size, from + CHECK_EVERY);
      for (let slot = from; slot < to; slot += 1) {
        const position = next[firstBuckets[slot]!]!++;
        const code = slotCodes[slot]!;
        codes[position] = code;
        slots[position] = slot;
        const at = nextSecond[code & BUCKET]!++;
        secondSlots[at] = slot;
        secondCodes[at] = firstBuckets[slot]! | (code & AVAILABLE);
      }
    }
    const group = 2 ** Math.max(0, Math.round(Math.log2((GROUP_SLOTS * buckets) / Math.max(1, size))));
    const groups = Math.ceil(buckets / group);
    const width = second.range.buckets + 1;
    const below = new Int32Array((groups + 1) * width);
    const belowAvailable = new Int32Array((groups + 1) * width);
    const histogram = new Int32Array(width);
    const histogramAvailable = new Int32Array(width);
    for (let g = groups - 1; g >= 0; g -= 1) {
      yield;
      histogram.fill(0);
      histogramAvailable.fill(0);
      const end = starts[Math.min((g + 1) * group, buckets)]!;
      for (let position = starts[g * group]!; position < end; position += 1) {
        const code = codes[position]!;
        histogram[code & BUCKET]! += 1;
        if ((code & AVAILABLE) !== 0) histogramAvailable[code & BUCKET]! += 1;
      }
      const row = g * width;
      let all = 0;
      let only = 0;
      for (let j = 0; j < width; j += 1) {
        below[row + j] = below[row + width + j]! + all;
        belowAvailable[row + j] = belowAvailable[row + width + j]! + only;
        all += histogram[j]!;
        only += histogramAvailable[j]!;
      }
    }
    return new RangePairCounts([first, second], available, size, { starts, availableFrom, codes, slots, secondStarts, secondSlots, secondCodes }, group, below, belowAvailable);
  }

  /** Slots in `first`'s base and `second`'s base (of this object's first and second index), and available where `availableOnly`. */
  count(first: BucketBase, second: BucketBase, availableOnly: boolean): number {
    const all = availableOnly ? this.#availableFrom[0]! : this.#size;
    const notUnderFirst = availableOnly ? this.#availableFrom[first.under]! : this.#size - this.#starts[first.under]!;
    const underSecond = this.#notUnderAndUnder(0, second.under, availableOnly);
    const both = this.#notUnderAndUnder(first.under, second.under, availableOnly);
    if (first.flip !== 0) return second.flip !== 0 ? notUnderFirst - both : both;
    return second.flip !== 0 ? all - notUnderFirst - underSecond + both : underSecond - both;
  }

  /**
   * The slots that pass both leaves (a leaf over the first index's column, one over the second's),
   * and are available where `availableOnly`: count() of their bases, and the members of each
   * leaf's own bucket that pass, each checked against both leaves (its slot read from this table:
   * no member list of the range index, no bitset).
   */
  countLeaves(first: LeafBase, second: LeafBase, availableOnly: boolean): number {
    let total = this.count(first, second, availableOnly);
    const need = availableOnly ? AVAILABLE : 0;
    if (first.whole === -1) {
      // Members of the first leaf's bucket that pass it: in the second leaf's base, or in its
      // bucket and passing (a column read, for those few).
      const [from, to] = this.#passing(0, first);
      const flipped = second.flip !== 0;
      const y = this.#columns[1].column;
      for (let position = from; position < to; position += 1) {
        const code = this.#codes[position]!;
        if ((code & need) !== need) continue;
        const bucket = code & BUCKET;
        if ((bucket < second.under) !== flipped || (bucket === second.bucket && second.whole === -1 && compares(y[this.#slots[position]!]!, second.operator, second.value))) total += 1;
      }
    }
    if (second.whole === -1) {
      // Members of the second leaf's bucket that pass it, in the first leaf's base (those in its
      // bucket are counted above).
      const [from, to] = this.#passing(1, second);
      const flipped = first.flip !== 0;
      for (let at = from; at < to; at += 1) {
        const code = this.#secondCodes[at]!;
        if ((code & need) === need && ((code & BUCKET) < first.under) !== flipped) total += 1;
      }
    }
    return total;
  }

  /**
   * Where the members of `leaf`'s bucket (of index `side`) that pass it lie among that bucket's
   * places (positions, or places in #secondSlots): the bucket's places are sorted by value on its
   * first use here (moved within the bucket's own places, which no count depends on the order of),
   * so that they are one run, found by binary search.
   */
  #passing(side: 0 | 1, leaf: LeafBase): [number, number] {
    const starts = side === 0 ? this.#starts : this.#secondStarts;
    const [start, end] = [starts[leaf.bucket]!, starts[leaf.bucket + 1]!];
    const slots = side === 0 ? this.#slots : this.#secondSlots;
    const column = this.#columns[side].column;
    const sorted = this.#sortedBuckets[side];
    if (sorted[leaf.bucket] === 0) {
      sortPlaces(slots, side === 0 ? this.#codes : this.#secondCodes, start, end, column);
      sorted[leaf.bucket] = 1;
    }
    const boundary = start + passingBoundary(slots.subarray(start, end), column, leaf.operator, leaf.value);
    return leaf.operator === '<' || leaf.operator === '<=' ? [start, boundary] : [boundary, end];
  }

  /**
   * The extra members of `first` (a leaf over the first index's column) and of `second` that are
   * in both leaves, and available where `availableOnly`, each once, in no particular order: with
   * count() of their bases, the whole AND (count + this list's length). A view of a scratch list,
   * valid until the next call.
   */
  passingExtras(first: PairLeaf, second: PairLeaf, availableOnly: boolean): Int32Array {
    PASSING.ensure(first.split.extra.length + second.split.extra.length);
    const passing = PASSING.data;
    const need = availableOnly ? AVAILABLE : 0;
    let count = 0;
    // The first leaf's extras in the second leaf: in its base, or in its value's bucket and passing.
    if (first.split.extra.length > 0) {
      const { members, from, extra } = first.split;
      const codes = this.#codesOf(members, 0);
      const { under, bucket } = second.split;
      const flipped = second.split.flip !== 0;
      const column = this.#columns[1].column;
      for (let k = from, end = from + extra.length; k < end; k += 1) {
        const code = codes[k]!;
        if ((code & need) !== need) continue;
        const inSecond = ((code & BUCKET) < under) !== flipped || ((code & BUCKET) === bucket && compares(column[members[k]!]!, second.operator, second.value));
        if (inSecond) passing[count++] = members[k]!;
      }
    }
    // The second leaf's extras in the first leaf's base (those in its extras were listed above).
    if (second.split.extra.length > 0) {
      const { members, from, extra } = second.split;
      const codes = this.#codesOf(members, 1);
      const { under } = first.split;
      const flipped = first.split.flip !== 0;
      for (let k = from, end = from + extra.length; k < end; k += 1) {
        const code = codes[k]!;
        if ((code & need) === need && ((code & BUCKET) < under) !== flipped) passing[count++] = members[k]!;
      }
    }
    return passing.subarray(0, count);
  }

  /** The codes of `members` (a bucket's member list of index `side`): per member, its bucket of the other index and AVAILABLE. */
  #codesOf(members: Int32Array, side: 0 | 1): Uint16Array {
    const kept = this.#memberCodes[side].get(members);
    if (kept !== undefined) return kept;
    const other = this.#columns[1 - side]!;
    const codes = new Uint16Array(members.length);
    for (let k = 0; k < members.length; k += 1) {
      const slot = members[k]!;
      codes[k] = other.range.bucketOf(other.column[slot]!) | (hasBit(this.#available, slot) ? AVAILABLE : 0);
    }
    this.#memberCodes[side].set(members, codes);
    return codes;
  }

  /** Slots whose first-index bucket is not under `firstUnder` and whose second-index bucket is under `secondUnder`. */
  #notUnderAndUnder(firstUnder: number, secondUnder: number, availableOnly: boolean): number {
    const group = Math.ceil(firstUnder / this.#group);
    const buckets = this.first.buckets;
    let count = (availableOnly ? this.#belowAvailable : this.#below)[group * this.#width + secondUnder]!;
    // The positions of the buckets from `firstUnder` to the group's start, one by one.
    const codes = this.#codes;
    const end = this.#starts[Math.min(group * this.#group, buckets)]!;
    const need = availableOnly ? AVAILABLE : 0;
    for (let position = this.#starts[firstUnder]!; position < end; position += 1) {
      const code = codes[position]!;
      if ((code & BUCKET) < secondUnder && (code & need) === need) count += 1;
    }
    return count;
  }
}

/** Per bucket of `counts` (and one past the last), where its slots start. */
function startsOf(counts: Int32Array): Int32Array {
  const starts = new Int32Array(counts.length + 1);
  for (let bucket = 0; bucket < counts.length; bucket += 1) starts[bucket + 1] = starts[bucket]! + counts[bucket]!;
  return starts;
}

/** Sorts places `start .. end)` of `slots` by their slots' values in `column` (ties by slot), and `codes` with them. */
function sortPlaces(slots: Int32Array, codes: Uint16Array, start: number, end: number, column: Float64Array): void {
  const own = slots.slice(start, end);
  const ownCodes = codes.slice(start, end);
  const order = valueOrder(own, Float64Array.from(own, (slot) => column[slot]!));
  for (let k = 0; k < order.length; k += 1) {
    slots[start + k] = own[order[k]!]!;
    codes[start + k] = ownCodes[order[k]!]!;
  }
}
