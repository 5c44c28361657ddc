// RangePairCounts on its own: the number of slots in two bucket bases (under a bucket of one range
// index, or not, and the same of another) and `available`, against the population count of those
// bases' bitsets, for every kind of base and sizes from a few slots to several groups.
import { describe, expect, it } from 'vitest';
import { complement, hasBit, setBit, wordsFor } from '../../../src/catalog/storefront-index/bits.ts';
import { compares } from '../../../src/catalog/storefront-index/ordering.ts';
import { RANGE_BUCKETS, RangeIndex } from '../../../src/catalog/storefront-index/range-index.ts';
import { RangePairCounts } from '../../../src/catalog/storefront-index/range-pair-counts.ts';
import { createRandom, type Random } from '../../../src/catalog/seed/prng.ts';

const SEED = process.env['FC_SEED'] ?? '20261205';

/** A column with repeated and skewed values besides spread ones. */
function columnOf(random: Random, size: number): Float64Array {
  return new Float64Array(size).map(() => (random.chance(0.2) ? random.int(0, 30) : random.int(0, 1_000_000) / 100));
}

function baseOf(index: RangeIndex, size: number, under: number, flip: number): Uint32Array {
  const bits = new Uint32Array(wordsFor(size));
  index.under(bits, size, under);
  return flip === 0 ? bits : complement(bits, size);
}

const goOn = async (): Promise<boolean> => true;

describe('RangePairCounts', () => {
  for (const size of [5, 3 * RANGE_BUCKETS + 17, 200_000]) {
    it(`counts the slots of two bucket bases, available or all, as their bitsets do, at ${size} slots (seed ${SEED})`, async () => {
      const random = createRandom(`${SEED}-pairs-${size}`);
      const [x, y] = [columnOf(random, size), columnOf(random, size)];
      const available = new Uint32Array(wordsFor(size));
      for (let slot = 0; slot < size; slot += 1) if (random.chance(0.6)) setBit(available, slot);
      const [first, second] = [RangeIndex.build(x, size, size), RangeIndex.build(y, size, size)];
      const counts = (await RangePairCounts.build({ range: first, column: x }, { range: second, column: y }, available, size, goOn))!;
      expect(counts).toBeDefined();
      for (let round = 0; round < 150; round += 1) {
        // Bases at the ends of the buckets and inside them.
        const pickUnder = (index: RangeIndex): number => (random.chance(0.1) ? (random.chance(0.5) ? 0 : index.buckets - 1) : random.int(0, index.buckets - 1));
        const a = { under: pickUnder(first), flip: random.chance(0.5) ? -1 : 0 };
        const b = { under: pickUnder(second), flip: random.chance(0.5) ? -1 : 0 };
        const availableOnly = random.chance(0.5);
        const [baseA, baseB] = [baseOf(first, size, a.under, a.flip), baseOf(second, size, b.under, b.flip)];
        let expected = 0;
        for (let slot = 0; slot < size; slot += 1) {
          if (hasBit(baseA, slot) && hasBit(baseB, slot) && (!availableOnly || hasBit(available, slot))) expected += 1;
        }
        expect(counts.count(a, b, availableOnly), JSON.stringify({ a, b, availableOnly })).toBe(expected);
      }
    });
  }

  for (const size of [7, 3 * RANGE_BUCKETS + 17, 100_000]) {
    it(`counts the slots that pass two leaves (and are available), each leaf's own bucket's members checked, as the columns say, at ${size} slots (seed ${SEED})`, () => {
      const random = createRandom(`${SEED}-leaves-${size}`);
      const [x, y] = [columnOf(random, size), columnOf(random, size)];
      const available = new Uint32Array(wordsFor(size));
      for (let slot = 0; slot < size; slot += 1) if (random.chance(0.6)) setBit(available, slot);
      const [first, second] = [RangeIndex.build(x, size, size), RangeIndex.build(y, size, size)];
      const counts = RangePairCounts.buildNow({ range: first, column: x }, { range: second, column: y }, available, size);
      let checked = 0;
      for (let round = 0; round < 200; round += 1) {
        // Values of the columns (a bucket's bound, a repeated value), between them, and past both ends.
        const valueOf = (column: Float64Array): number => (random.chance(0.5) ? column[random.int(0, size - 1)]! : random.int(-100, 1_000_100) / 100 + (random.chance(0.5) ? 0.005 : 0));
        const leafOf = (index: RangeIndex, column: Float64Array) => {
          const operator = random.pick(['<', '<=', '>', '>='] as const);
          const value = valueOf(column);
          const base = index.base(operator, value);
          return base === undefined ? undefined : { ...base, operator, value };
        };
        const [a, b] = [leafOf(first, x), leafOf(second, y)];
        if (a === undefined || b === undefined) continue;
        const availableOnly = random.chance(0.5);
        let expected = 0;
        for (let slot = 0; slot < size; slot += 1) {
          if (compares(x[slot]!, a.operator, a.value) && compares(y[slot]!, b.operator, b.value) && (!availableOnly || hasBit(available, slot))) expected += 1;
        }
        expect(counts.countLeaves(a, b, availableOnly), JSON.stringify({ a, b, availableOnly })).toBe(expected);
        // Its bases' count too, though countLeaves has reordered the buckets' members it read.
        const [baseA, baseB] = [baseOf(first, size, a.under, a.flip), baseOf(second, size, b.under, b.flip)];
        let inBases = 0;
        for (let slot = 0; slot < size; slot += 1) if (hasBit(baseA, slot) && hasBit(baseB, slot) && (!availableOnly || hasBit(available, slot))) inBases += 1;
        expect(counts.count(a, b, availableOnly)).toBe(inBases);
        checked += 1;
      }
      // A base past the last bucket is not counted here (its leaf is left to the bitsets).
      expect(checked).toBeGreaterThan(100);
    });
  }

  it('pauses between slices of a large build, and gives up when its pause says the columns were written meanwhile', async () => {
    const random = createRandom(`${SEED}-pairs-pause`);
    // Two passes over this many slots take several slices on any machine.
    const size = 2_000_000;
    const [x, y] = [columnOf(random, size), columnOf(random, size)];
    const available = new Uint32Array(wordsFor(size)).fill(0xffffffff);
    const [first, second] = [RangeIndex.build(x, size, size), RangeIndex.build(y, size, size)];
    let pauses = 0;
    const built = await RangePairCounts.build({ range: first, column: x }, { range: second, column: y }, available, size, async () => ++pauses < 2);
    expect(pauses).toBe(2);
    expect(built).toBeUndefined();
  });
});
