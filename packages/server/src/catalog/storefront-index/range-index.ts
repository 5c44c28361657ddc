import { arenaBits, releaseBits } from '../kernels.ts';
import { andNotInto, clearBit, clearPastEnd, fillBits, hasBit, setBit, wordsFor } from './bits.ts';
import { compares, passingBoundary, valueOrder, type RangeOperator } from './ordering.ts';
import { Postings } from './postings.ts';
import { dropFailing, keepPassing, MEMBER_BITS, MEMBER_WORDS, narrowAround, narrowByDigits, type DigitsAt } from './range-passes.ts';

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
  /** Per bucket, the slots written in it (slots holding NaN are in bucket 0). */
  readonly #counts: Int32Array;
  /**
   * Per bucket, those of its slots that are available (`available` as the owner's bitset says),
   * when the index was built with that bitset: the owner reports each change of a slot's
   * availability (availabilityChanged) and passes it to every `set`.
   */
  readonly #available: Int32Array | undefined;
  /** Slots holding NaN. */
  #nanCount = 0;
  /**
   * Per bucket, its members (a posting list per bucket, slots ascending; a rewrite that moves a
   * slot logs it in its new bucket and leaves a stale entry in the old one, skipped by `holds`):
   * made on demand (buildMembers), 4 bytes per slot, so only columns that counts are asked of pay.
   */
  #members: Postings | undefined;
  /** Slots when built: the owner rebuilds once the column has doubled. */
  readonly builtAt: number;

  private constructor(bounds: Float64Array, capacity: number, builtAt: number, available: boolean) {
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
    this.#counts = new Int32Array(bounds.length + 1);
    this.#available = available ? new Int32Array(bounds.length + 1) : undefined;
    this.builtAt = builtAt;
  }

  /**
   * Indexes `column[0 .. size)`, with room for `capacity` slots; with `available` (a bitset of the
   * available slots), also counts each bucket's available slots.
   */
  static build(column: Float64Array, size: number, capacity: number, available?: Uint32Array): RangeIndex {
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
    const index = new RangeIndex(Float64Array.from(bounds), capacity, size, available !== undefined);
    index.#fill(column, size, available);
    return index;
  }

  /**
   * Writes the digits of `column[0 .. size)` 32 slots at a time: each word of the PER_WORD bitsets
   * is gathered in a register-sized accumulator and stored once, where `set` per slot would touch
   * all PER_WORD bitsets (a cache miss each on a large column) for every slot. Same bits as `set`.
   */
  #fill(column: Float64Array, size: number, available: Uint32Array | undefined): void {
    const digits = this.#digits;
    const stride = this.#words;
    // Per word, the slots whose digit equals d, then "at most d" as a running OR over d: three ORs
    // per slot, where setting every "at most d" bitset a slot belongs to took one per value of d.
    const equal = new Int32Array(HIGH + MIDDLE + LOW);
    const words = wordsFor(size);
    const counts = this.#counts;
    const availableCounts = this.#available;
    for (let word = 0; word < words; word += 1) {
      equal.fill(0);
      const base = word << 5;
      const end = Math.min(32, size - base);
      const availableWord = available === undefined ? 0 : available[word]!;
      for (let b = 0; b < end; b += 1) {
        const value = column[base + b]!;
        const bucket = this.#bucket(value);
        this.#extend(bucket, value);
        counts[bucket]! += 1;
        if (availableCounts !== undefined && (availableWord & (1 << b)) !== 0) availableCounts[bucket]! += 1;
        if (Number.isNaN(value)) {
          setBit((this.#nan ??= arenaBits(wordsFor(this.#capacity))), base + b);
          this.#nanCount += 1;
        }
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
   * recorded with; undefined for a new slot). `available`: whether the slot is available now.
   */
  set(slot: number, value: number, previous: number | undefined, available = false): void {
    const bucket = this.#bucket(value);
    this.#extend(bucket, value);
    this.#changed(bucket);
    const before = previous === undefined ? -1 : this.#bucket(previous);
    if (before >= 0) this.#changed(before);
    if (before !== bucket) {
      this.#counts[bucket]! += 1;
      if (available && this.#available !== undefined) this.#available[bucket]! += 1;
      this.#members?.add(bucket, slot);
      if (before >= 0) {
        this.#counts[before]! -= 1;
        if (available && this.#available !== undefined) this.#available[before]! -= 1;
        this.#members?.drop();
      }
    }
    const wasNaN = this.#nan !== undefined && hasBit(this.#nan, slot);
    if (Number.isNaN(value)) setBit((this.#nan ??= arenaBits(wordsFor(this.#capacity))), slot);
    else if (this.#nan !== undefined) clearBit(this.#nan, slot);
    this.#nanCount += (Number.isNaN(value) ? 1 : 0) - (wasNaN ? 1 : 0);
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

  /** A slot whose value at `value` was recorded became available (`available`) or stopped being. */
  availabilityChanged(value: number, available: boolean): void {
    if (this.#available !== undefined) this.#available[this.#bucket(value)]! += available ? 1 : -1;
  }

  /**
   * How many of the `size` slots written hold a value of `column` that compares to `value` as
   * `operator` says (NaN: none), exactly: the buckets wholly on the leaf's side counted from their
   * counts, the members of the value's own bucket checked one by one. No pass over the column.
   * With `available` (the owner's bitset, and the side asked for), only the slots on that side
   * are counted, from the buckets' counts of available slots. Undefined until the buckets'
   * members are made (buildMembers), and with `available` for an index built without it or
   * holding NaN.
   */
  count(column: Float64Array, size: number, operator: RangeOperator, value: number, available?: { bits: Uint32Array; side: boolean }): number | undefined {
    const members = this.#members;
    if (members === undefined) return undefined;
    const availableCounts = this.#available;
    if (available !== undefined && !this.countsAvailable) return undefined;
    if (Number.isNaN(value)) return 0;
    const bucket = this.#bucket(value);
    const counts = this.#counts;
    const below = operator === '<' || operator === '<=';
    if (members.due) this.buildMembers(column, size);
    let passing = 0;
    // Each member once (Postings.forEach), a slot that left the bucket and came back included.
    const side = available?.side;
    const bits = available?.bits;
    this.#members!.forEach(
      bucket,
      (slot) => {
        if (compares(column[slot]!, operator, value) && (bits === undefined || ((bits[slot >>> 5]! & (1 << (slot & 31))) !== 0) === side)) passing += 1;
      },
      (slot, held) => this.#bucket(column[slot]!) === held,
    );
    if (available !== undefined) {
      // The buckets wholly on the leaf's side, counted on the side of `available` asked for.
      let whole = 0;
      const [from, to] = below ? [0, bucket] : [bucket + 1, counts.length];
      for (let k = from; k < to; k += 1) whole += side === true ? availableCounts![k]! : counts[k]! - availableCounts![k]!;
      return whole + passing;
    }
    let under = 0;
    for (let k = 0; k < bucket; k += 1) under += counts[k]!;
    // NaN sits in bucket 0 and passes nothing: under every other bucket, among bucket 0's members.
    if (below) return under - (bucket > 0 ? this.#nanCount : 0) + passing;
    return size - under - counts[bucket]! + passing;
  }

  /** Makes (or remakes, compacted) every bucket's members of `column[0 .. size)`: O(size log buckets). */
  buildMembers(column: Float64Array, size: number): void {
    (this.#members ??= new Postings()).compact(size, this.buckets, (slot, emit) => emit(this.#bucket(column[slot]!)));
  }

  /** Whether `count` answers on one side of `available` (built with it, and no NaN held). */
  get countsAvailable(): boolean {
    return this.#available !== undefined && this.#nanCount === 0;
  }

  /** Whether a slot holds NaN (orders by value then place it by slot alone). */
  get holdsNaN(): boolean {
    return this.#nanCount > 0;
  }

  /** Whether the buckets' members are made (count answers). */
  get hasMembers(): boolean {
    return this.#members !== undefined;
  }


  /** Buckets the bounds make: `under` takes 0 to this. */
  get buckets(): number {
    return this.#min.length;
  }

  /** The bucket's sorted members (see #sorted) if they are made; not a use of them. */
  sortedOf(bucket: number): Int32Array | undefined {
    return this.#sorted[bucket];
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
    // NaN sits in bucket 0, which a leaf may keep whole: its slots are cleared in one pass after.
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

const NO_SLOTS = new Int32Array(0);

/** A bucket's high, middle and low digits. */
function digitsOf(bucket: number): [number, number, number] {
  return [Math.floor(bucket / (MIDDLE * LOW)), Math.floor(bucket / LOW) % MIDDLE, bucket % LOW];
}
