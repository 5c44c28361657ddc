// Bitsets over slots: one bit per slot, 32 slots per Uint32Array word. The word loops run as the
// WebAssembly kernels (../kernels.ts) when every bitset they read is in the kernels' arena, and as
// plain JavaScript loops otherwise; both compute the same bits.
//
// Guarantees: exact; a bitset of `size` slots keeps the bits at or past `size` clear wherever a
// function here could set them (complement, fills through clearPastEnd), so population counts are
// counts of slots.
// Limits: a bitset is n/8 bytes whatever its population.
import { arenaBits, inArena, kernels } from '../kernels.ts';

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
// read the length once, before the loop: the engine does not hoist `bits.length` out of it.

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

/**
 * The first word at or after `from` (before `words`) where the three sources (as threeSources
 * gives them) share a set bit; `words` when none does. Reads only the words it passes.
 */
export function nextShared(three: ThreeSources, words: number, from: number): number {
  const [a, b, c, fa, fb, fc] = three;
  if (inArena(a) && inArena(b) && inArena(c) && a.length >= words && b.length >= words && c.length >= words) {
    return kernels.next3(a.byteOffset, b.byteOffset, c.byteOffset, words, fa, fb, fc, from);
  }
  while (from < words && ((a[from]! ^ fa) & (b[from]! ^ fb) & (c[from]! ^ fc)) === 0) from += 1;
  return from;
}

/** The last word before `before` where the three sources share a set bit; -1 when none does. */
export function previousShared(three: ThreeSources, before: number): number {
  const [a, b, c, fa, fb, fc] = three;
  if (inArena(a) && inArena(b) && inArena(c)) return kernels.prev3(a.byteOffset, b.byteOffset, c.byteOffset, fa, fb, fc, before);
  let at = before - 1;
  while (at >= 0 && ((a[at]! ^ fa) & (b[at]! ^ fb) & (c[at]! ^ fc)) === 0) at -= 1;
  return at;
}

const NO_FLIPS: readonly number[] = [];

/**
 * One to three bitsets as three, with their flips (0 where `flips` has none): the first, with its
 * flip, stands in for the missing ones (ANDing a source twice changes nothing).
 */
export type ThreeSources = [Uint32Array, Uint32Array, Uint32Array, number, number, number];

export function threeSources(from: readonly Uint32Array[], flips: readonly number[]): ThreeSources {
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
