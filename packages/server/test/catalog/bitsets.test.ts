// The storefront index's set module on its own: bitset helpers, the range index and posting lists
// against plain evaluations, and the term dictionary's exactness.
import { describe, expect, it } from 'vitest';
import {
  BitsetCache,
  BitsetPool,
  complement,
  forEachSlot,
  narrow,
  popcount,
  Postings,
  RangeIndex,
  setBit,
  setRun,
  TermDictionary,
  wordsFor,
  type RangeOperator,
} from '../../src/catalog/bitsets.ts';
import { createRandom } from '../../src/catalog/seed/prng.ts';

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

  it('hands out cleared bitsets again once the search that took them has ended, while others are still in flight', () => {
    const pool = new BitsetPool();
    const first = pool.begin(64);
    const a = pool.take(true);
    setBit(a, 5);
    const second = pool.begin(64);
    const b = pool.take(false);
    pool.resume(first);
    const a2 = pool.take(false);
    pool.end(first);
    // The second search is still in flight: its bitset stays with it; the first's come back, cleared when asked.
    pool.resume(second);
    const reused = [pool.take(true), pool.take(true)];
    expect(reused).toContain(a);
    expect(reused).toContain(a2);
    expect(reused).not.toContain(b);
    expect(popcount(a)).toBe(0);
    const extra = pool.take(true);
    expect([a, a2, b]).not.toContain(extra);
    pool.end(second);
    const third = pool.begin(64);
    expect([a, a2, b, extra]).toContain(pool.take(true));
    pool.end(third);
    // Another size: nothing of the old size is handed out.
    const fourth = pool.begin(640);
    expect(pool.take(true)).toHaveLength(wordsFor(640));
    pool.end(fourth);
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
      column[moved] = random.chance(0.05) ? Number.NaN : random.int(-100, 100_100) / 100;
      index.set(moved, column[moved]!);
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

  it('grows with the column and keeps what it held', () => {
    const column = new Float64Array(100).map((_, slot) => slot);
    const index = RangeIndex.build(column, 50, 50);
    index.resize(100);
    for (let slot = 50; slot < 100; slot += 1) index.set(slot, slot);
    const result = universe(100);
    index.intersect(result, column, 100, '>=', 40);
    expect(slotsOf(result)).toStrictEqual(Array.from({ length: 60 }, (_, i) => 40 + i));
    // Built with room to spare: the slots past the column's end, in its last word and beyond, are written later.
    const roomy = RangeIndex.build(column, 50, 100);
    for (let slot = 50; slot < 100; slot += 1) roomy.set(slot, slot);
    for (const [operator, value, expected] of [['<', 55, 55], ['>=', 49, 51], ['<=', -1, 0], ['>', 98, 1]] as const) {
      const bits = universe(100);
      roomy.intersect(bits, column, 100, operator, value);
      expect(popcount(bits), `${operator} ${value}`).toBe(expected);
    }
    // A NaN written past the old capacity satisfies no comparison; one rewritten to a number does again.
    const grown = RangeIndex.build(column, 50, 50);
    grown.resize(100);
    for (let slot = 50; slot < 100; slot += 1) grown.set(slot, slot);
    column[80] = Number.NaN;
    grown.set(80, Number.NaN);
    column[10] = Number.NaN;
    grown.set(10, Number.NaN);
    for (const [operator, value, expected] of [['>=', 0, 98], ['<', 1e9, 98], ['>', 70, 28]] as const) {
      const bits = universe(100);
      grown.intersect(bits, column, 100, operator, value);
      expect(popcount(bits), `${operator} ${value}`).toBe(expected);
    }
    column[80] = 80;
    grown.set(80, 80);
    const bits = universe(100);
    grown.intersect(bits, column, 100, '>', 70);
    expect(popcount(bits)).toBe(29);
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
});
