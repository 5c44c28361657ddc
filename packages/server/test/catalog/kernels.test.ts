// The WebAssembly kernels (kernels.wat) against the JavaScript loops they stand in for: the same
// operations on the same bits, once in arena bitsets (which the kernels take) and once in
// ordinary arrays (which the loops take), for lengths with and without a partial last vector.
import { describe, expect, it } from 'vitest';
import { andAll, andInto, andNotInto, arenaCopy, complement, countAll, isEmpty, nextShared, orInto, popcount, previousShared, threeSources, wordsFor } from '../../src/catalog/storefront-index/bits.ts';
import { type RangeOperator } from '../../src/catalog/storefront-index/ordering.ts';
import { RangeIndex } from '../../src/catalog/storefront-index/range-index.ts';
import { arenaBits, arenaStats, inArena, releaseBits } from '../../src/catalog/kernels.ts';
import { createRandom } from '../../src/catalog/seed/prng.ts';

const SEED = process.env['FC_SEED'] ?? '20261128';

function randomWords(random: ReturnType<typeof createRandom>, words: number, density: number): Uint32Array {
  const bits = new Uint32Array(words);
  for (let i = 0; i < words; i += 1) {
    let word = 0;
    for (let b = 0; b < 32; b += 1) if (random.chance(density)) word |= 1 << b;
    bits[i] = word;
  }
  return bits;
}

describe('bitset kernels', () => {
  it(`combine, invert, count and test bits as the JavaScript loops do, for every length's last words (seed ${SEED})`, () => {
    const random = createRandom(SEED);
    for (const words of [0, 1, 2, 3, 4, 5, 7, 8, 9, 31, 33, 100, 1_001]) {
      for (const density of [0, 0.02, 0.5, 1]) {
        const a = randomWords(random, words, density);
        const b = randomWords(random, words, 0.5);
        const size = words * 32 - (words > 0 ? random.int(0, 31) : 0);
        const cases: [string, (into: Uint32Array, from: Uint32Array) => unknown][] = [
          ['and', (into, from) => andInto(into, from)],
          ['or', (into, from) => orInto(into, from)],
          ['and not', (into, from) => andNotInto(into, from, words)],
          ['complement', (into) => complement(into, size)],
          ['popcount', (into) => popcount(into)],
          ['isEmpty', (into) => isEmpty(into)],
        ];
        for (const [name, op] of cases) {
          const [plainInto, plainFrom] = [a.slice(), b.slice()];
          const [arenaInto, arenaFrom] = [arenaCopy(a), arenaCopy(b)];
          expect(inArena(arenaInto) && !inArena(plainInto)).toBe(true);
          const expected = op(plainInto, plainFrom);
          expect(op(arenaInto, arenaFrom), `${name} of ${words} words`).toStrictEqual(expected);
          expect(Array.from(arenaInto), `${name} of ${words} words`).toStrictEqual(Array.from(plainInto));
          expect(Array.from(arenaFrom)).toStrictEqual(Array.from(b));
        }
      }
    }
  });

  it(`ANDs any number of bitsets in one call, into a fresh result or the one held, and counts it, and counts up to three without a result, any of them read flipped, as the JavaScript loops do (seed ${SEED})`, () => {
    const random = createRandom(`${SEED}-and-all`);
    for (const words of [1, 3, 4, 5, 9, 33, 1_001]) {
      for (const sources of [1, 2, 3, 4, 5, 7]) {
        for (const fresh of [true, false]) {
          const start = randomWords(random, words, 0.9);
          const from = Array.from({ length: sources }, () => randomWords(random, words, 0.8));
          const expected = fresh ? new Uint32Array(words).fill(0xffffffff) : start.slice();
          for (const bits of from) for (let i = 0; i < words; i += 1) expected[i]! &= bits[i]!;
          const plain = start.slice();
          const arena = arenaCopy(start);
          const count = expected.reduce((total, word) => total + word.toString(2).replaceAll('0', '').length, 0);
          const what = `${sources} sources of ${words} words${fresh ? ', fresh' : ''}`;
          expect(andAll(plain, from, fresh), what).toBe(count);
          expect(andAll(arena, from.map(arenaCopy), fresh), what).toBe(count);
          expect(Array.from(plain), what).toStrictEqual(Array.from(expected));
          expect(Array.from(arena), what).toStrictEqual(Array.from(expected));
          if (sources <= 3 && fresh) {
            // Counted without a result: the same number, and nothing written.
            const arenaFrom = from.map(arenaCopy);
            expect(countAll(from, words * 32), what).toBe(count);
            expect(countAll(arenaFrom, words * 32), what).toBe(count);
            expect(arenaFrom.map((bits) => Array.from(bits))).toStrictEqual(from.map((bits) => Array.from(bits)));
            // Some sources read flipped, over a size that ends inside the last word: the slots
            // past it are not counted, though a flipped source holds them.
            const flips = from.map(() => (random.chance(0.5) ? -1 : 0));
            const size = words * 32 - random.int(0, 31);
            let flipped = 0;
            for (let slot = 0; slot < size; slot += 1) {
              if (from.every((bits, k) => (((bits[slot >>> 5]! ^ flips[k]!) >>> (slot & 31)) & 1) === 1)) flipped += 1;
            }
            expect(countAll(from, size, flips), `${what}, flips ${flips.join()}, size ${size}`).toBe(flipped);
            expect(countAll(arenaFrom, size, flips), `${what}, flips ${flips.join()}, size ${size}`).toBe(flipped);
          }
        }
      }
    }
  });

  it(`finds the next and the previous word three bitsets share a bit in, any of them read flipped, from every place, as the JavaScript loops do (seed ${SEED})`, () => {
    const random = createRandom(`${SEED}-next-shared`);
    for (const words of [0, 1, 3, 4, 5, 8, 9, 33, 130]) {
      for (const density of [0, 0.002, 0.05, 0.6]) {
        const from = Array.from({ length: 1 + random.int(0, 2) }, () => randomWords(random, words, density));
        // A flipped source is mostly ones, so the flipped bitset is mostly zeros when read.
        const flips = from.map(() => (random.chance(0.3) ? -1 : 0));
        for (const [k, bits] of from.entries()) if (flips[k] === -1) for (let i = 0; i < words; i += 1) bits[i] = ~bits[i]!;
        const plain = threeSources(from, flips);
        const [a, b, c, fa, fb, fc] = plain;
        const shared = (at: number): boolean => ((a[at]! ^ fa) & (b[at]! ^ fb) & (c[at]! ^ fc)) !== 0;
        const arena = threeSources(from.map(arenaCopy), flips);
        expect(inArena(arena[0]) && !inArena(plain[0])).toBe(true);
        for (let at = 0; at <= words; at += 1) {
          let next = at;
          while (next < words && !shared(next)) next += 1;
          let previous = at - 1;
          while (previous >= 0 && !shared(previous)) previous -= 1;
          const what = `${from.length} sources of ${words} words at ${at}, density ${density}, flips ${flips.join()}`;
          expect([nextShared(plain, words, at), nextShared(arena, words, at)], what).toStrictEqual([next, next]);
          expect([previousShared(plain, at), previousShared(arena, at)], what).toStrictEqual([previous, previous]);
        }
      }
    }
  });

  it(`narrows a range leaf from the digit bitsets and from kept buckets as the JavaScript loops do (seed ${SEED})`, () => {
    const random = createRandom(`${SEED}-range`);
    for (const size of [1, 31, 33, 130, 257, 5_000]) {
      const column = new Float64Array(size);
      for (let slot = 0; slot < size; slot += 1) column[slot] = random.chance(0.05) ? Number.NaN : random.int(0, 10_000) / 100;
      const index = RangeIndex.build(column, size, size);
      for (let round = 0; round < 40; round += 1) {
        const operator = (['<', '<=', '>', '>='] as const)[random.int(0, 3)]! satisfies RangeOperator;
        const value = random.chance(0.5) ? column[random.int(0, size - 1)]! : random.int(-100, 10_100) / 100;
        const start = randomWords(random, wordsFor(size), 0.7);
        complement(start, size);
        complement(start, size);
        const bucket = index.bucketOf(value);
        const under = (b: number, arena: boolean): Uint32Array => {
          const bits = arena ? arenaBits(wordsFor(size)) : new Uint32Array(wordsFor(size));
          index.under(bits, size, b);
          return bits;
        };
        for (const buckets of [false, true]) {
          const around = (arena: boolean): readonly [Uint32Array, Uint32Array | null] | undefined =>
            buckets ? [under(bucket, arena), bucket + 1 >= index.buckets ? null : under(bucket + 1, arena)] : undefined;
          const plain = start.slice();
          index.intersect(plain, column, size, operator, value, around(false));
          const viaKernel = arenaCopy(start);
          index.intersect(viaKernel, column, size, operator, value, around(true));
          expect(Array.from(viaKernel), `${size} slots, ${operator} ${value}, ${buckets ? 'buckets' : 'digits'}`).toStrictEqual(Array.from(plain));
          const expected = Array.from({ length: size }, (_, slot) => slot).filter((slot) => {
            const own = column[slot]!;
            const passes = operator === '<' ? own < value : operator === '<=' ? own <= value : operator === '>' ? own > value : own >= value;
            return (start[slot >>> 5]! & (1 << (slot & 31))) !== 0 && passes;
          });
          expect(popcount(viaKernel)).toBe(expected.length);
          // A fresh result (the leaf's own new bitset) is read as every slot, whatever it holds.
          for (const arena of [false, true]) {
            const garbage = randomWords(random, wordsFor(size), 0.5);
            const fresh = arena ? arenaCopy(garbage) : garbage;
            index.intersect(fresh, column, size, operator, value, around(arena), true);
            const fromUniverse = complement(new Uint32Array(wordsFor(size)), size);
            index.intersect(fromUniverse, column, size, operator, value, around(false));
            expect(Array.from(fresh), `${size} slots, ${operator} ${value}, fresh${arena ? ', arena' : ''}`).toStrictEqual(Array.from(fromUniverse));
          }
        }
      }
    }
  });

  it('hands a released block out again only after the code that released it has run, and a collected one never while its view is reachable', async () => {
    const first = arenaBits(1_000);
    first.fill(7);
    const address = first.byteOffset;
    releaseBits(first);
    // Released but the current run of code goes on: its bits are still its own.
    const during = arenaBits(1_000);
    expect(during.byteOffset).not.toBe(address);
    expect(first[999]).toBe(7);
    await Promise.resolve();
    const after = arenaBits(1_000);
    expect(after.byteOffset).toBe(address);
    // Handed out zeroed, whatever it held.
    expect(after.every((word) => word === 0)).toBe(true);
    // A second release of one view frees nothing twice.
    releaseBits(after);
    releaseBits(after);
    await Promise.resolve();
    const freeBefore = arenaStats().freeBytes;
    const [x, y] = [arenaBits(1_000), arenaBits(1_000)];
    expect(x.byteOffset).not.toBe(y.byteOffset);
    expect(arenaStats().freeBytes).toBeLessThan(freeBefore);
  });
});
