// The word passes of a range leaf (RangeIndex.intersect): the bucket's digit bitsets or its two
// "under" bitsets narrow a result, noting the words that hold members of the value's own bucket,
// whose values are then checked one by one.
import { arenaBits, inArena, kernels, releaseBits } from '../kernels.ts';
import { compares, passingBoundary, type RangeOperator } from './ordering.ts';

/**
 * Words of a range leaf's result holding members of the value's own bucket (MEMBER_WORDS) and
 * those members (MEMBER_BITS), noted by a narrowing pass for keepPassing: shared by every leaf, as
 * a leaf runs to its end without yielding.
 */
export let MEMBER_WORDS = arenaBits(1024);
export let MEMBER_BITS = arenaBits(1024);
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
// bucket, and no closure: the members' values are checked after the pass (keepPassing).

/**
 * Narrows `result` by the bucket's "under" bitsets (`under`: the slots of buckets below the
 * value's, `next`: below the next bucket, or null past the last): keeps the slots below when
 * `belowMask` is -1, above when 0, and the bucket's own members where `membersMask` is -1; with
 * `note`, records the words holding members for keepPassing and returns their number. With
 * `fresh`, reads `result` as all ones (a new bitset; the caller clears past the end).
 */
export function narrowAround(result: Uint32Array, under: Uint32Array, next: Uint32Array | null, words: number, belowMask: number, membersMask: number, note: boolean, fresh: boolean): number {
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
export function narrowByDigits(result: Uint32Array, digits: Uint32Array, at: DigitsAt, words: number, belowMask: number, membersMask: number, note: boolean, fresh: boolean): number {
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
export function keepPassing(result: Uint32Array, column: Float64Array, noted: number, operator: RangeOperator, value: number): void {
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
export function dropFailing(result: Uint32Array, sorted: Int32Array, column: Float64Array, operator: RangeOperator, value: number): void {
  const boundary = passingBoundary(sorted, column, operator, value);
  const [from, to] = operator === '>' || operator === '>=' ? [0, boundary] : [boundary, sorted.length];
  for (let k = from; k < to; k += 1) {
    const slot = sorted[k]!;
    result[slot >>> 5] = result[slot >>> 5]! & ~(1 << (slot & 31));
  }
}

/** Offsets (into the digit bitsets) and masks of one bucket's six digit bitsets: see RangeIndex.#digitsAt. */
export interface DigitsAt {
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
