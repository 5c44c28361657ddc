// The layout of a RangePairCounts table (range-pair-counts.ts), and its build.
//
// The slots grouped by their bucket of the first index (positions), each position holding its
// slot's bucket of the second index and whether it is available (one 16-bit code); the buckets of
// the first index in groups of about GROUP_SLOTS positions (as many as there were at the build),
// and per group and bucket of the second index the number of positions, as a two-dimensional
// Fenwick tree over (groups from the last, buckets), once over every slot and once over available
// ones. A count reads O(log groups × log buckets) tree entries and scans the positions between the
// first bucket and the start of the next group. The leaves' extra members (the passing members of
// each value's own bucket) are checked against the other leaf by a sequential scan of codes kept
// per bucket's member list (the member's bucket of the other index and whether it is available),
// made on the list's first use: no read of a bitset or a column at a random slot, each of which
// misses the cache on a large catalog, but for the rare members in the other value's own bucket.
// Each position also holds its slot, and the slots are grouped by their bucket of the second index
// as well, each with its bucket of the first index and whether it is available: countLeaves counts
// a whole AND of two leaves with neither the range indexes' member lists nor any bitset, the
// passing members of each value's bucket found by binary search in the bucket's places (sorted by
// value on first use) and their codes read in order.
//
// Memory: 14 bytes per slot (two codes, two slot numbers, the slot's first-index bucket) and two
// trees of (groups + 1) × (second index's buckets + 1) 4-byte counts: about 18 bytes per slot in all
// (groups grow with the slots at the build); then 2 bytes per member of each bucket whose extra
// members were checked by passingExtras (at most 4 bytes per slot, both columns' buckets all used).
import { hasBit } from './bits.ts';
import { toFenwick } from './fenwick.ts';
import { valueOrder } from './ordering.ts';
import type { RangeIndex } from './range-index.ts';

/** One range index and the column it indexes. */
export interface IndexedColumn {
  range: RangeIndex;
  column: Float64Array;
}

/** A code's flag: its slot is available. */
export const AVAILABLE = 0x8000;
/** A code's bucket of the other index. */
export const BUCKET = 0x7fff;
/** Positions per group of first-index buckets, about: a count scans at most one group's. */
const GROUP_SLOTS = 16_384;
/** Slots between two chances to pause while building. */
const CHECK_EVERY = 8_192;

/** The positions and trees of a table, as built (RangePairCounts holds them and keeps them true). */
export interface PairLayout {
  /** Per slot, its first-index bucket. */
  firstBuckets: Uint16Array;
  /** Per first-index bucket (and one past the last), the position its slots start at. */
  starts: Int32Array;
  /** Per first-index bucket (and one past the last), the available slots in it and in every later bucket. */
  availableFrom: Int32Array;
  /** Per position, the second-index bucket of its slot, with AVAILABLE set when the slot is available. */
  codes: Uint16Array;
  /** Per position, its slot. */
  slots: Int32Array;
  /** Per second-index bucket (and one past the last), where its slots start in secondSlots. */
  secondStarts: Int32Array;
  /** The slots grouped by their second-index bucket. */
  secondSlots: Int32Array;
  /** Per place in secondSlots, its slot's first-index bucket, with AVAILABLE set when the slot is available. */
  secondCodes: Uint16Array;
  /** First-index buckets per group. */
  group: number;
  /** Fenwick trees over (group counted from the last, second-index bucket): positions, and available ones. */
  below: Int32Array;
  belowAvailable: Int32Array;
}

/** The layout of slots `0 .. size)` of the two columns and `available`, yielding every CHECK_EVERY slots or so (a chance to pause). */
export function* buildPairLayout(first: IndexedColumn, second: IndexedColumn, available: Uint32Array, size: number): Generator<void, PairLayout> {
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
  // Per group and second-index bucket, its positions (row: the group counted from the last, 1-based).
  for (let g = groups - 1; g >= 0; g -= 1) {
    yield;
    const row = (groups - g) * width + 1;
    const end = starts[Math.min((g + 1) * group, buckets)]!;
    for (let position = starts[g * group]!; position < end; position += 1) {
      const code = codes[position]!;
      below[row + (code & BUCKET)]! += 1;
      if ((code & AVAILABLE) !== 0) belowAvailable[row + (code & BUCKET)]! += 1;
    }
  }
  yield;
  toFenwick(below, groups, width);
  toFenwick(belowAvailable, groups, width);
  return { firstBuckets, starts, availableFrom, codes, slots, secondStarts, secondSlots, secondCodes, group, below, belowAvailable };
}

/** Per bucket of `counts` (and one past the last), where its slots start. */
function startsOf(counts: Int32Array): Int32Array {
  const starts = new Int32Array(counts.length + 1);
  for (let bucket = 0; bucket < counts.length; bucket += 1) starts[bucket + 1] = starts[bucket]! + counts[bucket]!;
  return starts;
}

/** Sorts places `start .. end)` of `slots` by their slots' values in `column` (ties by slot), and `codes` with them. */
export function sortPlaces(slots: Int32Array, codes: Uint16Array, start: number, end: number, column: Float64Array): void {
  const own = slots.slice(start, end);
  const ownCodes = codes.slice(start, end);
  const order = valueOrder(own, Float64Array.from(own, (slot) => column[slot]!));
  for (let k = 0; k < order.length; k += 1) {
    slots[start + k] = own[order[k]!]!;
    codes[start + k] = ownCodes[order[k]!]!;
  }
}

/** The place of `slot` among the places of `bucket` (a scan: they are in no order the slot tells). */
export function placeOf(slots: Int32Array, starts: Int32Array, bucket: number, slot: number): number {
  for (let at = starts[bucket]!, end = starts[bucket + 1]!; at < end; at += 1) if (slots[at] === slot) return at;
  throw new Error('range pair counts: a slot is not in the bucket held for it');
}

/** `into` holding `from` at its start. */
export function grown<T extends Uint16Array | Int32Array>(from: T, into: T): T {
  into.set(from as never);
  return into;
}
