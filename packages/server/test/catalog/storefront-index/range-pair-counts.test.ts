// RangePairCounts on its own: the number of slots in two bucket bases (under a bucket of one range
// index, or not, and the same of another) and `available`, against the population count of those
// bases' bitsets, for every kind of base and sizes from a few slots to several groups.
import { describe, expect, it } from 'vitest';
import { clearBit, complement, hasBit, setBit, wordsFor } from '../../../src/catalog/storefront-index/bits.ts';
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

  for (const size of [9, 3 * RANGE_BUCKETS + 17, 60_000]) {
    it(`follows slots rewritten (within a bucket, across buckets, their availability) and added, one by one, and counts as the columns say, at ${size} slots and more (seed ${SEED})`, () => {
      const random = createRandom(`${SEED}-follow-${size}`);
      const capacity = size + 1_400;
      const [x, y] = [new Float64Array(capacity), new Float64Array(capacity)];
      x.set(columnOf(random, size));
      y.set(columnOf(random, size));
      const available = new Uint32Array(wordsFor(capacity));
      for (let slot = 0; slot < size; slot += 1) if (random.chance(0.6)) setBit(available, slot);
      const [first, second] = [RangeIndex.build(x, size, capacity), RangeIndex.build(y, size, capacity)];
      const counts = RangePairCounts.buildNow({ range: first, column: x }, { range: second, column: y }, available, size);
      let held = size;
      const bounds = Array.from({ length: 6 }, () => x[random.int(0, size - 1)]!);
      let recent: number[] = [];
      const valueOf = (column: Float64Array): number => (random.chance(0.3) ? column[random.int(0, held - 1)]! : random.chance(0.2) ? random.int(0, 30) : random.int(-100, 1_000_100) / 100);
      for (let round = 0; round < 8; round += 1) {
        // Rewrites of one column, both, or availability only; and new slots, in some rounds a burst
        // of them (more than wait in the table's tail before they are placed).
        const burst = round % 3 === 1 ? 300 : 0;
        for (let k = 0; k < 60 + burst; k += 1) {
          const adding = k >= 60 || random.chance(0.3);
          // Often a member a count checked one by one: its codes, kept since, must follow it.
          const slot = adding ? held++ : recent.length > 0 && random.chance(0.5) ? recent[random.int(0, recent.length - 1)]! : random.int(0, held - 1);
          // 0: x, 1: y, 2: both, 3: both and availability, 4: availability only.
          const kind = adding ? 3 : random.int(0, 4);
          if (kind === 0 || kind === 2 || kind === 3) {
            const value = valueOf(x);
            first.set(slot, value, adding ? undefined : x[slot]);
            x[slot] = value;
          }
          if (kind === 1 || kind === 2 || kind === 3) {
            const value = valueOf(y);
            second.set(slot, value, adding ? undefined : y[slot]);
            y[slot] = value;
          }
          if (kind >= 3) {
            if (random.chance(0.5)) setBit(available, slot);
            else clearBit(available, slot);
          }
          counts.follow(slot);
          // A batch ends now and then.
          if (random.chance(0.2)) counts.settle();
        }
        if (round % 2 === 0) counts.settle();
        expect(counts.size).toBe(held);
        const scratch = new Uint32Array(wordsFor(held));
        for (let check = 0; check < 60; check += 1) {
          const leafOf = (index: RangeIndex, column: Float64Array) => {
            const operator = random.pick(['<', '<=', '>', '>='] as const);
            // Bounds used again and again, whose buckets' members are checked again after the writes.
            const value = random.chance(0.6) ? bounds[random.int(0, bounds.length - 1)]! : valueOf(column);
            // Two passes sort the value's bucket's members (a split needs them).
            index.intersect(scratch, column, held, operator, value);
            index.intersect(scratch, column, held, operator, value);
            const split = index.split(column, operator, value);
            return split === undefined ? undefined : { split, ...index.base(operator, value)!, operator, value };
          };
          const [a, b] = [leafOf(first, x), leafOf(second, y)];
          if (a === undefined || b === undefined) continue;
          const availableOnly = random.chance(0.5);
          const passes = (slot: number): boolean => compares(x[slot]!, a.operator, a.value) && compares(y[slot]!, b.operator, b.value) && (!availableOnly || hasBit(available, slot));
          let expected = 0;
          for (let slot = 0; slot < held; slot += 1) if (passes(slot)) expected += 1;
          const what = JSON.stringify({ round, a: { ...a, split: undefined }, b: { ...b, split: undefined }, availableOnly });
          expect(counts.countLeaves(a, b, availableOnly), what).toBe(expected);
          const [baseA, baseB] = [baseOf(first, held, a.under, a.flip), baseOf(second, held, b.under, b.flip)];
          let inBases = 0;
          for (let slot = 0; slot < held; slot += 1) if (hasBit(baseA, slot) && hasBit(baseB, slot) && (!availableOnly || hasBit(available, slot))) inBases += 1;
          expect(counts.count(a, b, availableOnly), what).toBe(inBases);
          const extras = [...counts.passingExtras(a, b, availableOnly)].sort((p, q) => p - q);
          recent = [...a.split.extra, ...b.split.extra].slice(0, 50);
          const expectedExtras = [...new Set([...a.split.extra, ...b.split.extra])].filter(passes).sort((p, q) => p - q);
          expect(extras, what).toStrictEqual(expectedExtras);
          expect(inBases + extras.length, what).toBe(expected);
        }
      }
    });
  }

  it('checks a member of a leaf\'s own bucket against the other leaf by what its other column holds after a rewrite of that column only', () => {
    // Enough slots that a bucket holds several members, spread values so a bound falls inside one.
    const size = 400_000;
    const x = new Float64Array(size).map((_, i) => ((i * 7_919) % 10_007) / 10 + (i % 13) / 1_000);
    const y = new Float64Array(size).map((_, i) => ((i * 104_729) % 10_009) / 10 + (i % 11) / 1_000);
    const available = new Uint32Array(wordsFor(size)).fill(0xffffffff);
    const [first, second] = [RangeIndex.build(x, size, size), RangeIndex.build(y, size, size)];
    const counts = RangePairCounts.buildNow({ range: first, column: x }, { range: second, column: y }, available, size);
    const scratch = new Uint32Array(wordsFor(size));
    const leafOf = (index: RangeIndex, column: Float64Array, value: number) => {
      index.intersect(scratch, column, size, '<', value);
      index.intersect(scratch, column, size, '<', value);
      return { split: index.split(column, '<', value)!, operator: '<' as const, value };
    };
    const [xBound, yBound] = [x[12_345]!, y[23_456]!];
    const passing = (leaves: { split: { extra: Int32Array } }[]): number[] =>
      [...new Set(leaves.flatMap((leaf) => [...leaf.split.extra]))].filter((slot) => x[slot]! < xBound && y[slot]! < yBound).sort((p, q) => p - q);
    const a = leafOf(first, x, xBound);
    let b = leafOf(second, y, yBound);
    expect([...counts.passingExtras(a, b, false)].sort((p, q) => p - q)).toStrictEqual(passing([a, b]));
    // A member of the first leaf's extras, in the second leaf's base, moved out of it by its y alone.
    const moved = [...a.split.extra].find((slot) => y[slot]! < yBound - 100)!;
    second.set(moved, 999, y[moved]);
    y[moved] = 999;
    counts.follow(moved);
    b = leafOf(second, y, yBound);
    expect(first.split(x, '<', xBound)!.members).toBe(a.split.members);
    expect([...counts.passingExtras(a, b, false)].sort((p, q) => p - q)).toStrictEqual(passing([a, b]));
  });

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
