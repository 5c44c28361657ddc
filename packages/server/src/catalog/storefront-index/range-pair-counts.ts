// How many slots lie below (or not below) a bucket of one range index and a bucket of another at
// once, and are available: the population count of an AND of two range leaves' bucket bitsets
// (RangeIndex.split) and `available`, answered without reading those bitsets. On a large catalog
// that count is a pass over three bitsets of n/8 bytes each, bound by memory bandwidth; here it is
// a table look-up and a scan of a few buckets' worth of 2-byte codes.
//
// Layout and build: range-pair-layout.ts; the trees: fenwick.ts.
//
// Guarantees: exact for the range indexes it was built from and the columns and `available` bitset
// as they were during the build, and as they are after each slot written since has been followed
// (`follow`, for slots written during the build as well, then `settle`): a rewritten slot moves
// between the groupings' buckets, an added one waits in a tail of at most TAIL_MAX slots (counted
// in the trees at once, checked one by one by the counts) until a batch's `settle` places the tail
// in one sweep; the trees change by one entry per level. The caller gives it the columns' arrays
// anew after a write (`rebind`) and keeps it only while the range indexes are the same objects.
// Limits: following a rewritten slot costs a scan of its buckets' places, O(log groups × log
// buckets) tree updates, and one move per bucket between its old bucket and its new one (of each
// index); placing a tail costs a sweep over both groupings (about 2 × (slots + buckets) moves, most
// of them block copies), once per TAIL_MAX added slots or per batch that adds more. A bucket a
// written slot passes through is no longer sorted by value (sorted again on its next use by a
// count). Counts scan the tail (fewer than TAIL_MAX slots between batches).
import { hasBit } from './bits.ts';
import { Growable } from './growable.ts';
import { compares, passingBoundary, type RangeOperator } from './ordering.ts';
import { type RangeBase, type RangeIndex, type RangeSplit } from './range-index.ts';
import { fenwickAdd, fenwickSum } from './fenwick.ts';
import { AVAILABLE, BUCKET, buildPairLayout, grown, placeOf, sortPlaces, type IndexedColumn, type PairLayout } from './range-pair-layout.ts';

export type { IndexedColumn } from './range-pair-layout.ts';

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

/** Milliseconds of building between two pauses. */
const BUILD_SLICE_MS = 4;
/** Slots added since the last fold that wait in the tail (see #tail) before they are placed in the groupings. */
const TAIL_MAX = 256;
/** The scratch list passingExtras returns a view of. */
const PASSING = new Growable((n) => new Int32Array(n));

export class RangePairCounts {
  readonly first: RangeIndex;
  readonly second: RangeIndex;
  #columns: readonly [IndexedColumn, IndexedColumn];
  #available: Uint32Array;
  /** Per member list of a first-index bucket, per member: its second-index bucket, AVAILABLE set when available; and the reverse. */
  readonly #memberCodes = [new WeakMap<Int32Array, Uint16Array>(), new WeakMap<Int32Array, Uint16Array>()] as const;
  #size: number;
  /** Slots placed in the groupings: 0 .. placed); the rest, placed .. size), wait in the tail. */
  #placed: number;
  /**
   * Per slot added since the last fold (slot placed + i at i), its second-index bucket with
   * AVAILABLE: counted in the trees and `#availableFrom` at once, checked one by one by the counts
   * that scan places, and placed in both groupings together by `settle` once TAIL_MAX wait, in one
   * sweep over the buckets instead of a move per bucket crossed per slot.
   */
  #tail = new Uint16Array(TAIL_MAX);
  /** Per slot, its first-index bucket as the table holds it. */
  #firstBuckets: Uint16Array;
  /** Per first-index bucket (and one past the last), the position its slots start at. */
  readonly #starts: Int32Array;
  /** Per first-index bucket (and one past the last), the available slots in it and in every later bucket. */
  readonly #availableFrom: Int32Array;
  /** Per position, the second-index bucket of its slot, with AVAILABLE set when the slot is available. */
  #codes: Uint16Array;
  /** Per position, its slot. */
  #slots: Int32Array;
  /** Per second-index bucket (and one past the last), where its slots start in #secondSlots. */
  readonly #secondStarts: Int32Array;
  /** The slots grouped by their second-index bucket. */
  #secondSlots: Int32Array;
  /** Per place in #secondSlots, its slot's first-index bucket, with AVAILABLE set when the slot is available. */
  #secondCodes: Uint16Array;
  /** Per bucket of each index, 1 while its places are sorted by value (#passing); else they are in no particular order. */
  readonly #sortedBuckets: readonly [Uint8Array, Uint8Array];
  /** First-index buckets per group. */
  readonly #group: number;
  readonly #groups: number;
  /** Second-index buckets + 1: the width of a tree row. */
  readonly #width: number;
  /**
   * Fenwick trees over (group counted from the last, second-index bucket), 1-based in both: the
   * positions per group and second-index bucket; the same, of available slots only.
   */
  readonly #below: Int32Array;
  readonly #belowAvailable: Int32Array;

  private constructor(
    columns: readonly [IndexedColumn, IndexedColumn],
    available: Uint32Array,
    size: number,
    positions: PairLayout,
  ) {
    this.first = columns[0].range;
    this.second = columns[1].range;
    this.#columns = columns;
    this.#available = available;
    this.#size = size;
    this.#placed = size;
    this.#firstBuckets = positions.firstBuckets;
    this.#starts = positions.starts;
    this.#availableFrom = positions.availableFrom;
    this.#codes = positions.codes;
    this.#slots = positions.slots;
    this.#secondStarts = positions.secondStarts;
    this.#secondSlots = positions.secondSlots;
    this.#secondCodes = positions.secondCodes;
    this.#sortedBuckets = [new Uint8Array(this.first.buckets), new Uint8Array(this.second.buckets)];
    this.#group = positions.group;
    this.#groups = Math.ceil(this.first.buckets / positions.group);
    this.#width = this.second.buckets + 1;
    this.#below = positions.below;
    this.#belowAvailable = positions.belowAvailable;
  }

  /**
   * Counts over slots `0 .. size)` of the two columns and `available`. `pause` is awaited between
   * slices of the work and answers whether to go on: undefined when it says no.
   */
  static async build(first: IndexedColumn, second: IndexedColumn, available: Uint32Array, size: number, pause: () => Promise<boolean>): Promise<RangePairCounts | undefined> {
    const steps = buildPairLayout(first, second, available, size);
    let sliceStart = performance.now();
    for (;;) {
      const step = steps.next();
      if (step.done === true) return new RangePairCounts([first, second], available, size, step.value);
      if (performance.now() - sliceStart < BUILD_SLICE_MS) continue;
      if (!(await pause())) return undefined;
      sliceStart = performance.now();
    }
  }

  /** The same, in one synchronous step (for an index being prepared, before it answers). */
  static buildNow(first: IndexedColumn, second: IndexedColumn, available: Uint32Array, size: number): RangePairCounts {
    const steps = buildPairLayout(first, second, available, size);
    for (;;) {
      const step = steps.next();
      if (step.done === true) return new RangePairCounts([first, second], available, size, step.value);
    }
  }

  /** Slots the table holds: 0 .. size). */
  get size(): number {
    return this.#size;
  }

  /** Slots in `first`'s base and `second`'s base (of this object's first and second index), and available where `availableOnly`. */
  count(first: BucketBase, second: BucketBase, availableOnly: boolean): number {
    const all = availableOnly ? this.#availableFrom[0]! : this.#size;
    const notUnderFirst = availableOnly ? this.#availableFrom[first.under]! : this.#placed - this.#starts[first.under]! + this.#tailCount(first.under, this.first.buckets, this.second.buckets, 0);
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
      const x = this.#columns[0].column;
      for (let slot = this.#placed; slot < this.#size; slot += 1) {
        const code = this.#tail[slot - this.#placed]!;
        if (this.#firstBuckets[slot] !== first.bucket || (code & need) !== need || !compares(x[slot]!, first.operator, first.value)) continue;
        const bucket = code & BUCKET;
        if ((bucket < second.under) !== flipped || (bucket === second.bucket && second.whole === -1 && compares(y[slot]!, second.operator, second.value))) total += 1;
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
      const y = this.#columns[1].column;
      for (let slot = this.#placed; slot < this.#size; slot += 1) {
        const code = this.#tail[slot - this.#placed]!;
        if ((code & BUCKET) !== second.bucket || (code & need) !== need || !compares(y[slot]!, second.operator, second.value)) continue;
        if ((this.#firstBuckets[slot]! < first.under) !== flipped) total += 1;
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
    let count = fenwickSum(availableOnly ? this.#belowAvailable : this.#below, this.#width, this.#groups - group, secondUnder);
    // The positions of the buckets from `firstUnder` to the group's start, one by one.
    const codes = this.#codes;
    const end = this.#starts[Math.min(group * this.#group, buckets)]!;
    const need = availableOnly ? AVAILABLE : 0;
    for (let position = this.#starts[firstUnder]!; position < end; position += 1) {
      const code = codes[position]!;
      if ((code & BUCKET) < secondUnder && (code & need) === need) count += 1;
    }
    return count + this.#tailCount(firstUnder, Math.min(group * this.#group, buckets), secondUnder, need);
  }

  /** Slots of the tail whose first-index bucket is in `from .. to)` and second-index bucket under `secondUnder`, with `need` (AVAILABLE or 0). */
  #tailCount(from: number, to: number, secondUnder: number, need: number): number {
    let count = 0;
    for (let slot = this.#placed; slot < this.#size; slot += 1) {
      const bucket = this.#firstBuckets[slot]!;
      const code = this.#tail[slot - this.#placed]!;
      if (bucket >= from && bucket < to && (code & BUCKET) < secondUnder && (code & need) === need) count += 1;
    }
    return count;
  }

  /** Takes the columns' arrays and `available` as they are now (a write may have grown them into new arrays). */
  rebind(first: Float64Array, second: Float64Array, available: Uint32Array): void {
    this.#columns = [
      { range: this.first, column: first },
      { range: this.second, column: second },
    ];
    this.#available = available;
  }

  /**
   * Follows `slot` to what the columns (as last given to `rebind`) and `available` hold for it now:
   * a slot held, rewritten; or the next slot (`size` of the table), added (to the tail: call
   * `settle` once the batch is followed). A slot whose buckets and availability are as held still
   * marks its buckets unsorted (its value may have moved within them). Returns the places moved,
   * about: the buckets crossed, of both groupings.
   */
  follow(slot: number): number {
    const [x, y] = this.#columns;
    const first = this.first.bucketOf(x.column[slot]!);
    const second = this.second.bucketOf(y.column[slot]!);
    const available = hasBit(this.#available, slot) ? AVAILABLE : 0;
    if (slot > this.#size) throw new Error('range pair counts: slots are added in order');
    if (slot >= this.#placed) {
      // Added, or added since the last fold: in the tail.
      let moves = 0;
      if (slot === this.#size) {
        this.#grow(slot + 1);
        if (slot - this.#placed >= this.#tail.length) this.#tail = grown(this.#tail, new Uint16Array(2 * this.#tail.length));
        this.#size += 1;
      } else {
        const held = this.#firstBuckets[slot]!;
        const code = this.#tail[slot - this.#placed]!;
        this.#tally(held, code & BUCKET, code & AVAILABLE, -1);
        this.#forgetCodes(held, code & BUCKET, first, second);
        moves = 1;
      }
      this.#tail[slot - this.#placed] = second | available;
      this.#firstBuckets[slot] = first;
      this.#tally(first, second, available, 1);
      return moves;
    } else {
      const held = this.#firstBuckets[slot]!;
      const position = placeOf(this.#slots, this.#starts, held, slot);
      const code = this.#codes[position]!;
      const heldSecond = code & BUCKET;
      const place = placeOf(this.#secondSlots, this.#secondStarts, heldSecond, slot);
      this.#tally(held, heldSecond, code & AVAILABLE, -1);
      this.#relocate(0, position, held, first, slot, second | available);
      this.#relocate(1, place, heldSecond, second, slot, first | available);
      this.#forgetCodes(held, heldSecond, first, second);
      this.#firstBuckets[slot] = first;
      this.#tally(first, second, available, 1);
      return 1 + Math.abs(first - held) + Math.abs(second - heldSecond);
    }
  }

  /**
   * Ends a write batch's follows: places the tail's slots once TAIL_MAX or more wait (one sweep of
   * each grouping, whatever their number). Returns the places moved, about.
   */
  settle(): number {
    const waiting = this.#size - this.#placed;
    if (waiting < TAIL_MAX) return 0;
    this.#fold();
    return 2 * (this.#size + this.first.buckets + this.second.buckets);
  }

  /** Drops the member codes (see #codesOf) of the lists of a slot's buckets, before and after a write: they hold its codes. */
  #forgetCodes(held: number, heldSecond: number, first: number, second: number): void {
    for (const list of [this.first.sortedOf(held), this.first.sortedOf(first)]) if (list !== undefined) this.#memberCodes[0].delete(list);
    for (const list of [this.second.sortedOf(heldSecond), this.second.sortedOf(second)]) if (list !== undefined) this.#memberCodes[1].delete(list);
  }

  /** Places the slots of the tail in both groupings, in one sweep over each index's buckets. */
  #fold(): void {
    const from = this.#placed;
    const added = this.#size - from;
    if (added === 0) return;
    const firstBuckets = this.#firstBuckets.slice(from, this.#size);
    const seconds = Uint16Array.from(this.#tail.subarray(0, added), (code) => code & BUCKET);
    const availables = Uint16Array.from(this.#tail.subarray(0, added), (code) => code & AVAILABLE);
    if (this.#tail.length > TAIL_MAX) this.#tail = new Uint16Array(TAIL_MAX);
    this.#sweep(0, firstBuckets, (k) => seconds[k]! | availables[k]!);
    this.#sweep(1, seconds, (k) => firstBuckets[k]! | availables[k]!);
    this.#placed = this.#size;
  }

  /**
   * Places slots placed .. placed + buckets.length) in grouping `side`, slot placed + k in bucket
   * `buckets[k]` with code `codeOf(k)`: from the last bucket down, each bucket's places move up by
   * the number of new slots in the buckets below it (its first places moved to its end, or the
   * whole bucket copied when it holds fewer), and its new slots go after them. A bucket that
   * changed is marked unsorted. The arrays hold room for the new places (#grow).
   */
  #sweep(side: 0 | 1, buckets: Uint16Array, codeOf: (k: number) => number): void {
    const starts = side === 0 ? this.#starts : this.#secondStarts;
    const slots = side === 0 ? this.#slots : this.#secondSlots;
    const codes = side === 0 ? this.#codes : this.#secondCodes;
    const sorted = this.#sortedBuckets[side];
    const count = starts.length - 1;
    // New slots per bucket, and in order of bucket (a counting sort of their indexes).
    const firstNew = new Int32Array(count + 1);
    for (const bucket of buckets) firstNew[bucket + 1]! += 1;
    for (let bucket = 0; bucket < count; bucket += 1) firstNew[bucket + 1]! += firstNew[bucket]!;
    const byBucket = new Int32Array(buckets.length);
    const next = firstNew.slice();
    buckets.forEach((bucket, k) => (byBucket[next[bucket]!++] = k));
    const old = starts.slice();
    for (let bucket = count - 1; bucket >= 0; bucket -= 1) {
      const [low, high] = [old[bucket]!, old[bucket + 1]!];
      const shift = firstNew[bucket]!;
      const held = high - low;
      if (shift > 0 && held > 0) {
        if (shift >= held) {
          slots.copyWithin(low + shift, low, high);
          codes.copyWithin(low + shift, low, high);
        } else {
          slots.copyWithin(high, low, low + shift);
          codes.copyWithin(high, low, low + shift);
          sorted[bucket] = 0;
        }
      }
      let at = high + shift;
      for (let n = firstNew[bucket]!; n < firstNew[bucket + 1]!; n += 1) {
        const k = byBucket[n]!;
        slots[at] = this.#placed + k;
        codes[at] = codeOf(k);
        at += 1;
        sorted[bucket] = 0;
      }
      starts[bucket + 1] = at;
      starts[bucket] = low + shift;
    }
  }

  /** Adds `delta` positions of a slot in first-index bucket `first`, second-index bucket `second`, available or not, to the counts. */
  #tally(first: number, second: number, available: number, delta: number): void {
    const row = this.#groups - Math.floor(first / this.#group);
    fenwickAdd(this.#below, this.#groups, this.#width, row, second + 1, delta);
    if (available === 0) return;
    fenwickAdd(this.#belowAvailable, this.#groups, this.#width, row, second + 1, delta);
    for (let bucket = 0; bucket <= first; bucket += 1) this.#availableFrom[bucket]! += delta;
  }

  /**
   * Moves place `at` of grouping `side` (0: by first-index bucket, 1: by second) from bucket `from`
   * (the bucket past the last: a place past the end, for a slot added) to bucket `to`, holding
   * `slot` and `code` there: one place of each bucket between moves to the bucket's other end, so
   * the cost is the buckets crossed. Every bucket that changed is marked unsorted.
   */
  #relocate(side: 0 | 1, at: number, from: number, to: number, slot: number, code: number): void {
    const starts = side === 0 ? this.#starts : this.#secondStarts;
    const slots = side === 0 ? this.#slots : this.#secondSlots;
    const codes = side === 0 ? this.#codes : this.#secondCodes;
    const sorted = this.#sortedBuckets[side];
    let hole = at;
    if (from < to) {
      // The hole moves up: each bucket's last place fills it, and that place becomes the next bucket's first.
      for (let bucket = from; bucket < to; bucket += 1) {
        const last = starts[bucket + 1]! - 1;
        if (last !== hole) {
          slots[hole] = slots[last]!;
          codes[hole] = codes[last]!;
          sorted[bucket] = 0;
        }
        starts[bucket + 1]! -= 1;
        hole = last;
      }
    } else {
      // The hole moves down: each bucket's first place fills it, and that place becomes the previous bucket's last.
      for (let bucket = from; bucket > to; bucket -= 1) {
        const first = starts[bucket]!;
        if (first !== hole) {
          slots[hole] = slots[first]!;
          codes[hole] = codes[first]!;
          if (bucket < sorted.length) sorted[bucket] = 0;
        }
        starts[bucket]! += 1;
        hole = first;
      }
    }
    slots[hole] = slot;
    codes[hole] = code;
    sorted[to] = 0;
  }

  /** Room for `size` slots in the per-slot and per-position arrays. */
  #grow(size: number): void {
    if (size <= this.#slots.length) return;
    const length = Math.max(size, 2 * this.#slots.length, 1024);
    this.#firstBuckets = grown(this.#firstBuckets, new Uint16Array(length));
    this.#codes = grown(this.#codes, new Uint16Array(length));
    this.#slots = grown(this.#slots, new Int32Array(length));
    this.#secondSlots = grown(this.#secondSlots, new Int32Array(length));
    this.#secondCodes = grown(this.#secondCodes, new Uint16Array(length));
  }
}







