// The storefront index's set module on its own: bitset helpers, the range index and posting lists
// against plain evaluations, and the term dictionary's exactness.
import { describe, expect, it } from 'vitest';
import { arenaCopy, complement, forEachSlot, hasBit, isEmpty, narrow, popcount, setBit, setRun, wordsFor } from '../../../src/catalog/storefront-index/bits.ts';
import { BitsetCache } from '../../../src/catalog/storefront-index/bitset-cache.ts';
import { BitsetPool } from '../../../src/catalog/storefront-index/bitset-pool.ts';
import { Growable, IntList } from '../../../src/catalog/storefront-index/growable.ts';
import { type RangeOperator } from '../../../src/catalog/storefront-index/ordering.ts';
import { Postings } from '../../../src/catalog/storefront-index/postings.ts';
import { RANGE_BUCKETS, RangeIndex } from '../../../src/catalog/storefront-index/range-index.ts';
import { TermDictionary } from '../../../src/catalog/storefront-index/term-dictionary.ts';
import { createRandom } from '../../../src/catalog/seed/prng.ts';
import { foldText } from '../../../src/catalog/text.ts';

const SEED = process.env['FC_SEED'] ?? '20261125';

function slotsOf(bits: Uint32Array): number[] {
  const slots: number[] = [];
  forEachSlot(bits, (slot) => slots.push(slot));
  return slots;
}

function universe(size: number): Uint32Array {
  return complement(new Uint32Array(wordsFor(size)), size);
}

describe('bitsets', () => {
  it('sets runs across word edges, complements within the size and counts exactly', () => {
    for (const [from, to, size] of [[0, 0, 10], [3, 29, 40], [5, 70, 100], [32, 64, 64], [31, 33, 95]] as const) {
      const bits = new Uint32Array(wordsFor(size));
      setRun(bits, from, to);
      expect(slotsOf(bits)).toStrictEqual(Array.from({ length: to - from }, (_, i) => from + i));
      complement(bits, size);
      expect(popcount(bits)).toBe(size - (to - from));
      expect(slotsOf(bits).every((slot) => slot < size && (slot < from || slot >= to))).toBe(true);
    }
  });

  it('narrows a result to the slots a predicate keeps', () => {
    const bits = universe(100);
    narrow(bits, (slot) => slot % 7 === 0);
    expect(slotsOf(bits)).toStrictEqual(Array.from({ length: 15 }, (_, i) => i * 7));
  });

  it('tells set slots and empty sets apart at every position of a word, past word edges too', () => {
    for (const size of [0, 1, 31, 32, 33, 64, 95]) {
      expect(isEmpty(new Uint32Array(wordsFor(size))), `empty of ${size}`).toBe(true);
      for (let slot = 0; slot < size; slot += 1) {
        const bits = new Uint32Array(wordsFor(size));
        setBit(bits, slot);
        expect(isEmpty(bits), `${slot} of ${size}`).toBe(false);
        expect(Array.from({ length: size }, (_, other) => hasBit(bits, other)), `${slot} of ${size}`).toStrictEqual(Array.from({ length: size }, (_, other) => other === slot));
      }
    }
  });

  it('complements within the size a bitset longer than the size needs', () => {
    const bits = complement(new Uint32Array(4), 40);
    expect(slotsOf(bits)).toStrictEqual(Array.from({ length: 40 }, (_, i) => i));
  });

  it('asks the predicate once about each slot in the result, and only about those', () => {
    const bits = new Uint32Array(3);
    setRun(bits, 0, 10);
    setRun(bits, 64, 96);
    const asked: number[] = [];
    narrow(bits, (slot) => {
      asked.push(slot);
      return slot % 2 === 0;
    });
    expect(asked).toStrictEqual([...Array.from({ length: 10 }, (_, i) => i), ...Array.from({ length: 32 }, (_, i) => 64 + i)]);
    expect(slotsOf(bits)).toStrictEqual(asked.filter((slot) => slot % 2 === 0));
  });

  it('hands out cleared bitsets again once the search that took them has ended, while others are still in flight', () => {
    const pool = new BitsetPool();
    const first = pool.begin(64);
    const a = pool.take(first, true);
    setBit(a, 5);
    const second = pool.begin(64);
    const b = pool.take(second, false);
    const a2 = pool.take(first, false);
    pool.end(first);
    // The second search is still in flight: its bitset stays with it; the first's come back, cleared when asked.
    const reused = [pool.take(second, true), pool.take(second, true)];
    expect(reused).toContain(a);
    expect(reused).toContain(a2);
    expect(reused).not.toContain(b);
    expect(popcount(a)).toBe(0);
    const extra = pool.take(second, true);
    expect([a, a2, b]).not.toContain(extra);
    pool.end(second);
    const third = pool.begin(64);
    expect([a, a2, b, extra]).toContain(pool.take(third, true));
    pool.end(third);
    // Another size: nothing of the old size is handed out.
    const fourth = pool.begin(640);
    expect(pool.take(fourth, true)).toHaveLength(wordsFor(640));
    pool.end(fourth);
  });

  it('hands out bitsets of no words for an empty catalog, and of the size begun after a search that took none', () => {
    const pool = new BitsetPool();
    const empty = pool.begin(0);
    const none = pool.take(empty, true);
    expect(none).toBeInstanceOf(Uint32Array);
    expect(none).toHaveLength(0);
    pool.end(empty);
    pool.end(pool.begin(512));
    const next = pool.begin(512);
    const bits = pool.take(next, true);
    expect(bits).toBeInstanceOf(Uint32Array);
    expect(bits).toHaveLength(16);
    pool.end(next);
  });

  it('hands a bitset taken unzeroed out with what it held', () => {
    const pool = new BitsetPool();
    const first = pool.begin(64);
    const bits = pool.take(first, true);
    setBit(bits, 40);
    pool.end(first);
    const second = pool.begin(64);
    const again = pool.take(second, false);
    expect(again).toBe(bits);
    expect(slotsOf(again)).toStrictEqual([40]);
    pool.end(second);
  });

  it('keeps at most 256 bitsets free', () => {
    const pool = new BitsetPool();
    const first = pool.begin(64);
    const taken = new Set(Array.from({ length: 256 }, () => pool.take(first, true)));
    const second = pool.begin(64);
    for (let i = 0; i < 256; i += 1) taken.add(pool.take(second, true));
    pool.end(first);
    pool.end(second);
    const third = pool.begin(64);
    const again = Array.from({ length: 512 }, () => pool.take(third, true));
    expect(again.filter((bits) => taken.has(bits))).toHaveLength(256);
    pool.end(third);
  });

  it('keeps a bitset in the scope it was taken into, whichever search began last, until that scope ends', () => {
    // A search resuming after an await takes while another search, begun later, is in flight.
    const pool = new BitsetPool();
    const first = pool.begin(64);
    const second = pool.begin(64);
    const held = pool.take(first, true);
    pool.end(second);
    const during = pool.begin(64);
    expect(pool.take(during, true)).not.toBe(held);
    pool.end(during);
    pool.end(first);
    const after = pool.begin(64);
    expect(pool.take(after, true)).toBe(held);
    pool.end(after);
  });

  it('hands out a bitset outside any search and never takes it back', () => {
    const pool = new BitsetPool();
    pool.end(pool.begin(64));
    const loose = pool.take(undefined, true);
    expect(loose).toHaveLength(2);
    for (let round = 0; round < 2; round += 1) {
      const search = pool.begin(64);
      expect(pool.take(search, true)).not.toBe(loose);
      pool.end(search);
    }
  });
});

describe('Growable', () => {
  it('keeps its array while it has room, doubles past it and trims to the length plus an eighth', () => {
    const growable = new Growable((n) => new Int32Array(n), 4);
    const first = growable.data;
    first.set([1, 2, 3, 4]);
    growable.ensure(4);
    expect(growable.data).toBe(first);
    growable.ensure(5);
    expect(growable.data).toHaveLength(8);
    growable.ensure(4_000);
    expect(growable.data).toHaveLength(4_000);
    growable.data[1_999] = 7;
    growable.trim(2_000);
    const trimmed = growable.data;
    expect([trimmed.length, ...trimmed.subarray(0, 4), trimmed[1_999]]).toStrictEqual([2_250, 1, 2, 3, 4, 7]);
    // Nothing to give back: the array stays.
    growable.trim(2_000);
    growable.trim(3_000);
    expect(growable.data).toBe(trimmed);
    // Never below 1024 entries.
    growable.trim(10);
    expect(growable.data).toHaveLength(1_024);
    const small = new Growable((n) => new Uint8Array(n), 16);
    small.trim(0);
    expect(small.data).toHaveLength(16);
  });

  it('IntList pushes, clears and gives its room back', () => {
    const list = new IntList();
    for (let i = 0; i < 3_000; i += 1) list.push(i * 3);
    expect([list.length, list.data[2_999]]).toStrictEqual([3_000, 8_997]);
    list.clear();
    expect(list.length).toBe(0);
    list.push(-5);
    list.trim();
    expect([list.length, list.data[0], list.data.length]).toStrictEqual([1, -5, 1_024]);
  });
});

describe('RangeIndex', () => {
  it(`narrows like a plain comparison while values are rewritten across bounds (seed ${SEED})`, () => {
    const random = createRandom(SEED);
    const size = 3_000;
    const column = new Float64Array(size);
    // Skewed and repeated values: a tenth share one value, the rest spread.
    for (let slot = 0; slot < size; slot += 1) column[slot] = random.chance(0.1) ? 99.99 : random.int(0, 100_000) / 100;
    column[17] = Number.NaN;
    const index = RangeIndex.build(column, size, size);
    for (let round = 0; round < 200; round += 1) {
      const moved = random.int(0, size - 1);
      const previous = column[moved]!;
      column[moved] = random.chance(0.05) ? Number.NaN : random.int(-100, 100_100) / 100;
      index.set(moved, column[moved]!, previous);
      const operator = (['<', '<=', '>', '>='] as const)[random.int(0, 3)]! satisfies RangeOperator;
      const value = random.chance(0.5) ? column[random.int(0, size - 1)]! : random.int(-100, 100_100) / 100;
      // A running result that some earlier leaf narrowed already.
      const result = universe(size);
      narrow(result, (slot) => slot % 3 !== 0);
      index.intersect(result, column, size, operator, value);
      const expected = Array.from({ length: size }, (_, slot) => slot).filter((slot) => {
        const own = column[slot]!;
        const passes = operator === '<' ? own < value : operator === '<=' ? own <= value : operator === '>' ? own > value : own >= value;
        return slot % 3 !== 0 && passes;
      });
      expect(slotsOf(result), `${operator} ${value}`).toStrictEqual(expected);
      // The same leaf from the slots below the value's bucket and below the next (kept by a caller).
      const bucket = index.bucketOf(value);
      const underOf = (b: number): Uint32Array => {
        const bits = new Uint32Array(wordsFor(size));
        index.under(bits, size, b);
        return bits;
      };
      const viaBuckets = universe(size);
      narrow(viaBuckets, (slot) => slot % 3 !== 0);
      index.intersect(viaBuckets, column, size, operator, value, [underOf(bucket), bucket + 1 >= index.buckets ? null : underOf(bucket + 1)]);
      expect(slotsOf(viaBuckets), `${operator} ${value}, from buckets`).toStrictEqual(expected);
      // Under a bucket: exactly the slots of the buckets below it (NaN in bucket 0), the last and past it included.
      const b = [0, 1, index.buckets - 1, index.buckets, random.int(0, index.buckets)][round % 5]!;
      const plainUnder = Array.from({ length: size }, (_, slot) => slot).filter((slot) => index.bucketOf(column[slot]!) < b);
      expect(slotsOf(underOf(b)), `under ${b} of ${index.buckets}`).toStrictEqual(plainUnder);
    }
  });

  it(`splits a leaf into the slots under one bucket, read as is or flipped, and its bucket's passing members, exactly; none where NaN was written (seed ${SEED})`, () => {
    const random = createRandom(`${SEED}-split`);
    // Several values per bucket, some repeated (buckets a leaf takes or drops whole).
    const size = 4 * RANGE_BUCKETS;
    const column = new Float64Array(size).map(() => (random.chance(0.2) ? random.int(0, 50) : random.int(0, 1_000_000) / 100));
    const index = RangeIndex.build(column, size, size);
    let split = 0;
    let partial: [RangeOperator, number] | undefined;
    for (let round = 0; round < 240; round += 1) {
      const operator = (['<', '<=', '>', '>='] as const)[random.int(0, 3)]! satisfies RangeOperator;
      const value = random.chance(0.3) ? column[random.int(0, size - 1)]! : random.int(-100, 1_000_100) / 100;
      // Used twice first, as a caller's leaves would: the bucket's sorted members are made on the second.
      for (let use = 0; use < 2; use += 1) index.intersect(universe(size), column, size, operator, value);
      const parts = index.split(column, operator, value);
      const bucket = index.bucketOf(value);
      if (parts === undefined) {
        // Only where the base would be the slots under the bucket past the last.
        expect(bucket, `${operator} ${value}`).toBe(index.buckets - 1);
        continue;
      }
      split += 1;
      const base = new Uint32Array(wordsFor(size));
      index.under(base, size, parts.under);
      if (parts.flip !== 0) complement(base, size);
      const extra = Array.from(parts.extra);
      expect(extra.filter((slot) => hasBit(base, slot)), `${operator} ${value}: extra slots outside the base`).toStrictEqual([]);
      expect(extra.every((slot) => index.bucketOf(column[slot]!) === bucket), `${operator} ${value}: extra slots of its bucket`).toBe(true);
      if (extra.length > 0) partial = [operator, value];
      for (const slot of extra) base[slot >>> 5]! |= 1 << (slot & 31);
      // The slots where the parts and a plain comparison disagree (a short list to compare).
      const wrong = Array.from({ length: size }, (_, slot) => slot).filter((slot) => {
        const own = column[slot]!;
        const passes = operator === '<' ? own < value : operator === '<=' ? own <= value : operator === '>' ? own > value : own >= value;
        return passes !== hasBit(base, slot);
      });
      expect(wrong, `${operator} ${value}`).toStrictEqual([]);
    }
    expect(split).toBeGreaterThan(200);
    // A bucket whose sorted members are not made yet: no split (this is not a use of them).
    expect(partial).toBeDefined();
    const fresh = RangeIndex.build(column, size, size);
    expect(fresh.split(column, ...partial!)).toBeUndefined();
    // NaN written anywhere: none (it lies under buckets yet passes no leaf).
    expect(index.split(column, ...partial!)).toBeDefined();
    const previous = column[7]!;
    column[7] = Number.NaN;
    index.set(7, Number.NaN, previous);
    expect(index.split(column, ...partial!)).toBeUndefined();
    expect(index.split(column, '<', Number.NaN)).toBeUndefined();
  });

  it(`drops a bucket's failing members from its sorted list, made on its second use and again after writes move members in and out (seed ${SEED})`, () => {
    // Many distinct values per bucket (the buckets' extremes seldom decide), NaN among them, and
    // bounds drawn from a few buckets so that each is used again and again between writes.
    const random = createRandom(`${SEED}-sorted`);
    const size = 30_000;
    const column = new Float64Array(size);
    for (let slot = 0; slot < size; slot += 1) column[slot] = random.chance(0.01) ? Number.NaN : random.int(0, 1_000_000) / 1_000;
    const index = RangeIndex.build(column, size, size);
    const hot = Array.from({ length: 6 }, () => column[random.int(0, size - 1)]!).filter((value) => !Number.isNaN(value));
    const start = universe(size);
    narrow(start, (slot) => slot % 5 !== 0);
    for (let round = 0; round < 120; round += 1) {
      if (round % 10 === 9) {
        // A few rewrites, into the hot buckets and out of them.
        const hotBuckets = new Set(hot.map((value) => index.bucketOf(value)));
        const members = Array.from({ length: size }, (_, slot) => slot).filter((slot) => hotBuckets.has(index.bucketOf(column[slot]!)));
        for (let k = 0; k < 20; k += 1) {
          const slot = random.chance(0.5) ? members[random.int(0, members.length - 1)]! : random.int(0, size - 1);
          const previous = column[slot]!;
          column[slot] = random.chance(0.5) ? hot[random.int(0, hot.length - 1)]! + random.int(-5, 5) / 1_000 : random.chance(0.1) ? Number.NaN : random.int(0, 1_000_000) / 1_000;
          index.set(slot, column[slot]!, previous);
        }
      }
      const operator = (['<', '<=', '>', '>='] as const)[random.int(0, 3)]! satisfies RangeOperator;
      const value = hot[random.int(0, hot.length - 1)]! + random.int(-3, 3) / 1_000;
      const expected = new Uint32Array(wordsFor(size));
      for (let slot = 0; slot < size; slot += 1) {
        const own = column[slot]!;
        const passes = operator === '<' ? own < value : operator === '<=' ? own <= value : operator === '>' ? own > value : own >= value;
        if (slot % 5 !== 0 && passes) setBit(expected, slot);
      }
      for (const arena of [false, true]) {
        const result = arena ? arenaCopy(start) : start.slice();
        index.intersect(result, column, size, operator, value);
        // The first slot whose bit differs (-1: none); comparing word arrays element by element in expect() is slow.
        const differs = expected.findIndex((word, i) => word !== result[i]);
        expect(differs, `${operator} ${value}${arena ? ', arena' : ''}`).toBe(-1);
      }
    }
  });

  it('grows with the column and keeps what it held', () => {
    const column = new Float64Array(100).map((_, slot) => slot);
    const index = RangeIndex.build(column, 50, 50);
    index.resize(100);
    for (let slot = 50; slot < 100; slot += 1) index.set(slot, slot, undefined);
    const result = universe(100);
    index.intersect(result, column, 100, '>=', 40);
    expect(slotsOf(result)).toStrictEqual(Array.from({ length: 60 }, (_, i) => 40 + i));
    // Built with room to spare: the slots past the column's end, in its last word and beyond, are written later.
    const roomy = RangeIndex.build(column, 50, 100);
    for (let slot = 50; slot < 100; slot += 1) roomy.set(slot, slot, undefined);
    for (const [operator, value, expected] of [['<', 55, 55], ['>=', 49, 51], ['<=', -1, 0], ['>', 98, 1]] as const) {
      const bits = universe(100);
      roomy.intersect(bits, column, 100, operator, value);
      expect(popcount(bits), `${operator} ${value}`).toBe(expected);
    }
    // A NaN written past the old capacity satisfies no comparison; one rewritten to a number does again.
    const grown = RangeIndex.build(column, 50, 50);
    grown.resize(100);
    for (let slot = 50; slot < 100; slot += 1) grown.set(slot, slot, undefined);
    column[80] = Number.NaN;
    grown.set(80, Number.NaN, 80);
    const tenth = column[10]!;
    column[10] = Number.NaN;
    grown.set(10, Number.NaN, tenth);
    for (const [operator, value, expected] of [['>=', 0, 98], ['<', 1e9, 98], ['>', 70, 28]] as const) {
      const bits = universe(100);
      grown.intersect(bits, column, 100, operator, value);
      expect(popcount(bits), `${operator} ${value}`).toBe(expected);
    }
    column[80] = 80;
    grown.set(80, 80, Number.NaN);
    const bits = universe(100);
    grown.intersect(bits, column, 100, '>', 70);
    expect(popcount(bits)).toBe(29);
  });
  it('places bounds at quantiles of the column, distinct and above its least value, NaN and slots past the size left out', () => {
    const bucketsOf = (index: RangeIndex, values: readonly number[]): number[] => values.map((value) => index.bucketOf(value));
    // 2 × RANGE_BUCKETS - 1 distinct values, shuffled: the bound of bucket k is the value of rank
    // 2k - 1, so every bucket but the first holds two.
    const count = 2 * RANGE_BUCKETS - 1;
    const distinct = new Float64Array(count).map((_, slot) => (slot * 1_024) % count);
    const ranks = Array.from({ length: count }, (_, value) => value);
    const twoPerBucket = ranks.map((value) => Math.ceil(value / 2));
    const spread = RangeIndex.build(distinct, count, count);
    expect(spread.buckets).toBe(RANGE_BUCKETS);
    expect(bucketsOf(spread, ranks)).toStrictEqual(twoPerBucket);
    expect(bucketsOf(spread, ranks.map((value) => value + 0.5))).toStrictEqual(twoPerBucket);
    expect(bucketsOf(spread, [-1, Number.NEGATIVE_INFINITY, Number.NaN, 1e9, Number.POSITIVE_INFINITY])).toStrictEqual([0, 0, 0, RANGE_BUCKETS - 1, RANGE_BUCKETS - 1]);
    // The same values among as many NaN, with other values past the size: the same bounds.
    const withNaN = new Float64Array(2 * count + 18).fill(1e9);
    for (let slot = 0; slot < 2 * count; slot += 1) withNaN[slot] = slot % 2 === 0 ? Number.NaN : distinct[slot >>> 1]!;
    const skipping = RangeIndex.build(withNaN, 2 * count, 2 * count + 18);
    expect(skipping.buckets).toBe(RANGE_BUCKETS);
    expect(bucketsOf(skipping, ranks)).toStrictEqual(twoPerBucket);
    // 2048 values four times each (fewer values than buckets): one bucket per value, the least value's bucket 0.
    const repeated = new Float64Array(8_192).map((_, slot) => ((slot * 1_031) % 8_192) >>> 2);
    const perValue = RangeIndex.build(repeated, 8_192, 8_192);
    expect(perValue.buckets).toBe(2_048);
    expect(bucketsOf(perValue, ranks.slice(0, 2_048))).toStrictEqual(ranks.slice(0, 2_048));
  });

  it('narrows exactly over all RANGE_BUCKETS buckets, the last ones included, reading the digit bitsets or the buckets around the value', () => {
    const size = 2 * RANGE_BUCKETS - 1;
    const column = new Float64Array(size).map((_, slot) => (slot * 1_024) % size);
    const index = RangeIndex.build(column, size, size);
    expect(index.buckets).toBe(RANGE_BUCKETS);
    const every = Array.from({ length: size }, (_, slot) => slot);
    const underOf = (bucket: number): Uint32Array => {
      const bits = new Uint32Array(wordsFor(size));
      index.under(bits, size, bucket);
      return bits;
    };
    const bitsOf = (slots: number[]): Uint32Array => {
      const bits = new Uint32Array(wordsFor(size));
      for (const slot of slots) setBit(bits, slot);
      return bits;
    };
    // Where the middle and high digits turn over (every 16 and 256 buckets), and the ends.
    const last = RANGE_BUCKETS;
    for (const bucket of [0, 1, 15, 16, 255, 256, last - 257, last - 256, last - 2, last - 1, last]) {
      expect(underOf(bucket), `under ${bucket}`).toStrictEqual(bitsOf(every.filter((slot) => index.bucketOf(column[slot]!) < bucket)));
    }
    // Bucket b holds values 2b - 1 and 2b: the values around those buckets.
    const turn = 2 * (last - 256);
    const values = [-1, 0, 0.5, 1, 2, 511, 512, 513, turn - 2, turn - 1, turn, turn + 1, 2 * last - 3.5, 2 * last - 3, 2 * last - 2, 10 * last];
    for (const operator of ['<', '<=', '>', '>='] as const) {
      for (const value of values) {
        const expected = bitsOf(
          every.filter((slot) => {
            const own = column[slot]!;
            return operator === '<' ? own < value : operator === '<=' ? own <= value : operator === '>' ? own > value : own >= value;
          }),
        );
        const bucket = index.bucketOf(value);
        for (const around of [undefined, [underOf(bucket), bucket + 1 >= index.buckets ? null : underOf(bucket + 1)] as const]) {
          const result = universe(size);
          index.intersect(result, column, size, operator, value, around);
          expect(result, `${operator} ${value}${around === undefined ? '' : ', from buckets'}`).toStrictEqual(expected);
        }
      }
    }
  });

  it('answers every operator exactly at, between and beyond the values, and a NaN bound matches nothing', () => {
    const size = 200;
    const column = new Float64Array(size).map((_, slot) => (slot % 7 === 3 ? Number.NaN : (slot * 37) % 23));
    const index = RangeIndex.build(column, size, size);
    const values = [Number.NEGATIVE_INFINITY, ...Array.from({ length: 49 }, (_, i) => i / 2 - 1), Number.POSITIVE_INFINITY, Number.NaN];
    for (const operator of ['<', '<=', '>', '>='] as const) {
      for (const value of values) {
        const expected = Array.from({ length: size }, (_, slot) => slot).filter((slot) => {
          const own = column[slot]!;
          return operator === '<' ? own < value : operator === '<=' ? own <= value : operator === '>' ? own > value : own >= value;
        });
        const result = universe(size);
        index.intersect(result, column, size, operator, value);
        expect(slotsOf(result), `${operator} ${value}`).toStrictEqual(expected);
      }
    }
  });

  it('resizes down and up, keeping the slots below the capacity and which of them hold NaN', () => {
    const column = new Float64Array(100).map((_, slot) => (slot % 10 === 9 ? Number.NaN : slot));
    const numbers = (size: number): number[] => Array.from({ length: size }, (_, slot) => slot).filter((slot) => slot % 10 !== 9);
    const index = RangeIndex.build(column, 100, 100);
    index.resize(40);
    expect(index.capacity).toBe(40);
    const result = universe(40);
    index.intersect(result, column, 40, '<', 20);
    expect(slotsOf(result)).toStrictEqual(numbers(20));
    // Up from a build that held NaN: a NaN written past the old capacity matches nothing either.
    const small = RangeIndex.build(column, 40, 40);
    small.resize(100);
    for (let slot = 40; slot < 100; slot += 1) small.set(slot, column[slot]!, undefined);
    const all = universe(100);
    small.intersect(all, column, 100, '<', 1e9);
    expect(slotsOf(all)).toStrictEqual(numbers(100));
  });
});

describe('BitsetCache', () => {
  const bitsOf = (...slots: number[]): Uint32Array => {
    const bits = new Uint32Array(4);
    for (const slot of slots) setBit(bits, slot);
    return bits;
  };

  it('notes a key on its first use, keeps a copy on its second, and hands it out from the third', () => {
    const cache = new BitsetCache(1_024);
    expect(cache.lookup('a', 1)).toBe(false);
    expect(cache.lookup('a', 1)).toBe(true);
    const bits = bitsOf(3, 70);
    cache.keep('a', bits);
    bits.fill(0);
    const kept = cache.lookup('a', 1);
    expect(kept instanceof Uint32Array && slotsOf(kept)).toStrictEqual([3, 70]);
    expect(cache.tally.get('leaf')).toStrictEqual({ hits: 1, lookups: 3 });
  });

  it('answers each key with what was kept for it while keys turn over, reusing dropped bitsets, and leaves a bitset it handed out as it was until the keep after next', () => {
    // Room for eight bitsets of 16 bytes, and one spare (an eighth of the budget).
    const cache = new BitsetCache(128);
    const keep = (key: string, slot: number): void => {
      cache.lookup(key, 1);
      expect(cache.lookup(key, 1)).toBe(true);
      cache.keep(key, bitsOf(slot));
    };
    // Ten keys over room for eight: every keep from the ninth on evicts one, and copies into a
    // bitset an earlier keep dropped rather than a new one.
    const handedOut = new Set<Uint32Array>();
    for (let round = 0; round < 3; round += 1) {
      for (let k = 0; k < 10; k += 1) {
        keep(`k${k}`, (k * 7 + round) % 128);
        const kept = cache.lookup(`k${k}`, 1);
        expect(kept instanceof Uint32Array && slotsOf(kept)).toStrictEqual([(k * 7 + round) % 128]);
        handedOut.add(kept as Uint32Array);
      }
    }
    expect(handedOut.size).toBeLessThanOrEqual(9);
    // Handed out, then one keep that may drop it: still as it was.
    const held = cache.lookup('k9', 1) as Uint32Array;
    for (let k = 0; k < 9; k += 1) cache.lookup(`k${k}`, 1);
    keep('fresh', 99);
    expect(slotsOf(held)).toStrictEqual([(9 * 7 + 2) % 128]);
    // A new version drops everything; what is kept next answers alone.
    keep('after', 5);
    expect(cache.lookup('after', 2)).toBe(false);
    expect(cache.lookup('after', 2)).toBe(true);
    cache.keep('after', bitsOf(6));
    const after = cache.lookup('after', 2);
    expect(after instanceof Uint32Array && slotsOf(after)).toStrictEqual([6]);
  });

  it('hands out a kept bitset from kept() as a counted hit, and neither counts nor notes a key it does not keep', () => {
    const cache = new BitsetCache(1_024);
    expect(cache.kept('a', 1)).toBeUndefined();
    expect(cache.tally.get('leaf')).toBeUndefined();
    // Not noted by kept(): the first lookup is still a first use.
    expect(cache.lookup('a', 1)).toBe(false);
    expect(cache.kept('a', 1)).toBeUndefined();
    expect(cache.lookup('a', 1)).toBe(true);
    cache.keep('a', bitsOf(5));
    const kept = cache.kept('a', 1);
    expect(kept instanceof Uint32Array && slotsOf(kept)).toStrictEqual([5]);
    expect(cache.tally.get('leaf')).toStrictEqual({ hits: 1, lookups: 3 });
    expect(cache.kept('a', 2)).toBeUndefined();
  });

  it('forgets everything when the version changes', () => {
    const cache = new BitsetCache(1_024);
    cache.lookup('a', 1);
    cache.lookup('a', 1);
    cache.keep('a', bitsOf(1));
    expect(cache.lookup('a', 2)).toBe(false);
    expect(cache.lookup('a', 2)).toBe(true);
  });

  it('keeps at most its budget of bytes, the least recently used out first', () => {
    // Room for two bitsets of 16 bytes.
    const cache = new BitsetCache(32);
    for (const key of ['a', 'b', 'c']) {
      cache.lookup(key, 1);
      cache.lookup(key, 1);
    }
    cache.keep('a', bitsOf(1));
    cache.keep('b', bitsOf(2));
    expect(cache.lookup('a', 1)).toBeInstanceOf(Uint32Array);
    // 'b' is now the least recently used: keeping 'c' puts it out, not 'a'.
    cache.keep('c', bitsOf(3));
    expect(cache.lookup('b', 1)).toBe(false);
    expect(cache.lookup('a', 1)).toBeInstanceOf(Uint32Array);
    expect(cache.lookup('c', 1)).toBeInstanceOf(Uint32Array);
    // A bitset larger than the whole budget is not kept.
    cache.lookup('huge', 1);
    cache.lookup('huge', 1);
    cache.keep('huge', new Uint32Array(9));
    expect(cache.lookup('huge', 1)).toBe(true);
  });

  it('keeps at least its minimum count of bitsets however large they are, then the least recently used out first', () => {
    // A budget of one 16-byte bitset, and three kept whatever their size.
    const cache = new BitsetCache(16, 3);
    const keys = ['a', 'b', 'c', 'd'];
    for (const key of keys) {
      cache.lookup(key, 1);
      cache.lookup(key, 1);
    }
    keys.forEach((key, slot) => cache.keep(key, bitsOf(slot)));
    expect(keys.map((key) => cache.lookup(key, 1) instanceof Uint32Array)).toStrictEqual([false, true, true, true]);
    const c = cache.lookup('c', 1);
    expect(c instanceof Uint32Array && slotsOf(c)).toStrictEqual([2]);
  });

  it('counts a bitset kept twice under one key once (two searches that both looked it up keep it)', () => {
    const cache = new BitsetCache(32);
    for (const key of ['a', 'a', 'b', 'b']) cache.lookup(key, 1);
    cache.keep('a', bitsOf(1));
    cache.keep('a', bitsOf(2));
    // 16 + 16 bytes fit the budget of 32: nothing goes out.
    cache.keep('b', bitsOf(3));
    const [a, b] = [cache.lookup('a', 1), cache.lookup('b', 1)];
    expect([a instanceof Uint32Array && slotsOf(a), b instanceof Uint32Array && slotsOf(b)]).toStrictEqual([[2], [3]]);
  });

  it('notes a bounded number of keys', () => {
    const cache = new BitsetCache(1_024);
    cache.lookup('first', 1);
    for (let i = 0; i < 5_000; i += 1) cache.lookup(`k${i}`, 1);
    // Noted once, then put out by thousands of newer keys: its next use is a first one again.
    expect(cache.lookup('first', 1)).toBe(false);
    expect(cache.lookup('k4999', 1)).toBe(true);
  });
  it('keeps a bitset exactly as large as its budget', () => {
    const cache = new BitsetCache(16);
    cache.lookup('a', 1);
    cache.lookup('a', 1);
    cache.keep('a', bitsOf(9));
    const kept = cache.lookup('a', 1);
    expect(kept instanceof Uint32Array && slotsOf(kept)).toStrictEqual([9]);
  });

  it('counts keeping a key as its latest use', () => {
    const cache = new BitsetCache(32);
    for (const key of ['a', 'a', 'b', 'b']) cache.lookup(key, 1);
    cache.keep('b', bitsOf(2));
    cache.keep('a', bitsOf(1));
    // 'b' is now the least recently used: keeping 'c' puts it out, not 'a'.
    cache.lookup('c', 1);
    cache.lookup('c', 1);
    cache.keep('c', bitsOf(3));
    expect(cache.lookup('a', 1)).toBeInstanceOf(Uint32Array);
    expect(cache.lookup('b', 1)).toBe(false);
  });

  it('puts out one key, the least recently used, for each key noted past 4096', () => {
    const cache = new BitsetCache(1_024);
    for (let i = 0; i < 4_097; i += 1) cache.lookup(`k${i}`, 1);
    expect(cache.lookup('k1', 1)).toBe(true);
    expect(cache.lookup('k0', 1)).toBe(false);
  });
});

describe('Postings', () => {
  it(`answers each term's slots exactly through compactions, a log and stale entries (seed ${SEED})`, () => {
    const random = createRandom(`${SEED}-postings`);
    const terms = 40;
    const held: Set<number>[] = [];
    const postings = new Postings();
    const holds = (slot: number, term: number): boolean => held[slot]!.has(term);
    const check = (): void => {
      for (let term = 0; term < terms; term += 1) {
        const bits = new Uint32Array(wordsFor(held.length));
        postings.setBits(term, bits, holds);
        expect(slotsOf(bits), `term ${term}`).toStrictEqual(held.flatMap((own, slot) => (own.has(term) ? [slot] : [])));
      }
    };
    for (let round = 0; round < 6; round += 1) {
      for (let i = 0; i < 300; i += 1) {
        const own = new Set(Array.from({ length: random.int(0, 4) }, () => random.int(0, terms - 1)));
        held.push(own);
        for (const term of own) postings.add(term, held.length - 1);
      }
      // Rewrites: terms dropped (stale entries) and taken (logged), some taken back again.
      for (let i = 0; i < 200; i += 1) {
        const slot = random.int(0, held.length - 1);
        const next = new Set(Array.from({ length: random.int(0, 4) }, () => random.int(0, terms - 1)));
        for (const term of held[slot]!) if (!next.has(term)) postings.drop();
        for (const term of next) if (!held[slot]!.has(term)) postings.add(term, slot);
        held[slot] = next;
      }
      check();
      if (round % 2 === 1) {
        postings.compact(held.length, terms, (slot, emit) => held[slot]!.forEach(emit));
        expect(postings.stale).toBe(0);
        check();
      }
    }
  });
  it('is clean with nothing logged or stale, and due once the log or the stale entries pass their share', () => {
    const postings = new Postings();
    expect([postings.clean, postings.due]).toStrictEqual([true, false]);
    postings.add(0, 0);
    expect([postings.clean, postings.due]).toStrictEqual([false, false]);
    postings.compact(1, 1, (_slot, emit) => emit(0));
    expect(postings.clean).toBe(true);
    postings.drop();
    expect([postings.clean, postings.due]).toStrictEqual([false, false]);
    // Up to a block of 262,144 entries the limit is 16,384; past it, a sixteenth of the block (20,000 of 320,000).
    for (const [block, limit] of [[0, 16_384], [320_000, 20_000]] as const) {
      const logged = new Postings();
      const stale = new Postings();
      for (const each of [logged, stale]) each.restore(new Uint32Array([0, block]), new Int32Array(block));
      for (let i = 0; i < limit; i += 1) {
        logged.add(0, i);
        stale.drop();
      }
      expect([logged.due, stale.due], `${limit} of ${block}`).toStrictEqual([false, false]);
      logged.add(0, limit);
      stale.drop();
      expect([logged.due, stale.due], `${limit + 1} of ${block}`).toStrictEqual([true, true]);
    }
  });

  const heldAtFirst = (): Set<number>[] => [new Set([0]), new Set([1]), new Set([0, 1]), new Set(), new Set([0])];

  it('sets the entries logged since a clean block was built, asking holds only about those, once each', () => {
    const held = heldAtFirst();
    const postings = new Postings();
    postings.compact(5, 2, (slot, emit) => held[slot]!.forEach(emit));
    const asked: string[] = [];
    const holds = (slot: number, term: number): boolean => {
      asked.push(`${slot}:${term}`);
      return held[slot]!.has(term);
    };
    const each = (term: number): number[] => {
      const slots: number[] = [];
      postings.forEach(term, (slot) => slots.push(slot), holds);
      return slots;
    };
    expect([each(0), each(1), asked]).toStrictEqual([[0, 2, 4], [1, 2], []]);
    held[3]!.add(0);
    postings.add(0, 3);
    const bits = new Uint32Array(1);
    postings.setBits(0, bits, holds);
    expect([slotsOf(bits), asked]).toStrictEqual([[0, 2, 3, 4], ['3:0']]);
    expect([each(0), each(1)]).toStrictEqual([[0, 2, 4, 3], [1, 2]]);
  });

  it('restores a block parts gave, with an empty log', () => {
    const held = heldAtFirst();
    const source = new Postings();
    source.compact(5, 2, (slot, emit) => held[slot]!.forEach(emit));
    const [offsets, slots] = source.parts();
    const restored = new Postings();
    restored.add(1, 4);
    restored.add(0, 3);
    restored.drop();
    restored.restore(offsets, slots);
    expect(restored.clean).toBe(true);
    held[3]!.add(1);
    restored.add(1, 3);
    const holds = (slot: number, term: number): boolean => held[slot]!.has(term);
    const slotsFor = (term: number): number[] => {
      const bits = new Uint32Array(1);
      restored.setBits(term, bits, holds);
      return slotsOf(bits);
    };
    expect([slotsFor(0), slotsFor(1)]).toStrictEqual([[0, 2, 4], [1, 2, 3]]);
  });
});

describe('TermDictionary', () => {
  it('gives each distinct term one code, exactly, through growth', () => {
    const dictionary = new TermDictionary();
    const terms = [...Array.from({ length: 5_000 }, (_, i) => `term-${i}`), 'ünder', 'u\u0308nder', '東京', '🎱', '', 'a'.repeat(300)];
    const codes = terms.map((term) => dictionary.code(term));
    expect(new Set(codes).size).toBe(terms.length);
    expect(terms.map((term) => dictionary.find(term))).toStrictEqual(codes);
    expect(terms.map((term) => dictionary.code(term))).toStrictEqual(codes);
    expect(dictionary.find('term-5000')).toBe(-1);
    expect(dictionary.find('Ünder')).toBe(-1);
  });
  it('folds printable ASCII itself and hands other text to fold', () => {
    const dictionary = new TermDictionary();
    const folded: string[] = [];
    const fold = (text: string): string => {
      folded.push(text);
      return foldText(text);
    };
    const ascii = ['AZaz', ' ~', 'Zebra Crossing~', 'A'.repeat(299) + 'Z'];
    expect(ascii.map((raw) => dictionary.codeFolded(raw, fold))).toStrictEqual(ascii.map((raw) => dictionary.code(raw.toLowerCase())));
    expect(folded).toStrictEqual([]);
    const other = ['Ünder', 'tab\there', '\u007f', 'ÄZ'];
    expect(other.map((raw) => dictionary.codeFolded(raw, fold))).toStrictEqual(other.map((raw) => dictionary.code(foldText(raw))));
    expect(folded).toStrictEqual(other);
  });

  it('tells long terms apart by their last bytes', () => {
    const dictionary = new TermDictionary();
    const terms = ['a'.repeat(300), 'a'.repeat(299) + 'b', '東'.repeat(100), '東'.repeat(99) + '京'];
    const codes = terms.map((term) => dictionary.code(term));
    expect(codes).toStrictEqual([0, 1, 2, 3]);
    expect(terms.map((term) => dictionary.find(term))).toStrictEqual(codes);
  });

  it('takes a term longer than its whole byte buffer', () => {
    const dictionary = new TermDictionary();
    const huge = 'h'.repeat(140_000);
    expect([dictionary.code('x'), dictionary.code(huge), dictionary.find('x'), dictionary.find(huge)]).toStrictEqual([0, 1, 0, 1]);
    expect(dictionary.parts()[0]).toHaveLength(140_001);
  });

  it('tells apart terms whose hashes collide', () => {
    // FNV-1a collisions: two terms of one length and one last byte; a term hashing to 0, which keeps 0 with a NUL appended.
    const dictionary = new TermDictionary();
    for (const [first, second] of [['t0075zxz', 't00epcdz'], ['3u25abs', '3u25abs\0']] as const) {
      const code = dictionary.code(first);
      expect(dictionary.find(second), second).toBe(-1);
      expect([dictionary.code(second), dictionary.find(first), dictionary.find(second)], second).toStrictEqual([code + 1, code, code + 1]);
    }
  });

  it('keeps its table at most three quarters full with one entry per term, and works again from its parts', () => {
    const dictionary = new TermDictionary();
    const terms = Array.from({ length: 769 }, (_, i) => `t${i}`);
    const codes = terms.slice(0, 768).map((term) => dictionary.code(term));
    expect(dictionary.parts()[3]).toHaveLength(1_024);
    codes.push(dictionary.code(terms[768]!));
    const [bytes, starts, hashes, table] = dictionary.parts();
    expect([table.length, table.filter((entry) => entry !== 0).length, starts.length, hashes.length]).toStrictEqual([2_048, 769, 770, 769]);
    const copy = TermDictionary.fromParts(bytes.slice(), starts.slice(), hashes.slice(), table.slice());
    expect(terms.map((term) => copy.find(term))).toStrictEqual(codes);
    expect([copy.size, copy.code('new'), copy.find('new')]).toStrictEqual([769, 769, 769]);
  });

  it('gives back spare room on trim, an eighth and 1 KB of text kept, and still finds every term', () => {
    const dictionary = new TermDictionary();
    const terms = Array.from({ length: 3_000 }, (_, i) => `term-${i}`);
    const codes = terms.map((term) => dictionary.code(term));
    dictionary.trim();
    const [bytes, starts, hashes] = dictionary.parts();
    const used = bytes.length;
    expect([bytes.buffer.byteLength, starts.buffer.byteLength, hashes.buffer.byteLength]).toStrictEqual([
      used + (used >>> 3) + 1_024,
      4 * (3_001 + (3_001 >>> 3)),
      4 * (3_000 + (3_000 >>> 3)),
    ]);
    expect(terms.map((term) => dictionary.find(term))).toStrictEqual(codes);
    expect(dictionary.code('after-trim')).toBe(3_000);
  });
});
