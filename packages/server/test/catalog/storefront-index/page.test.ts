// The page walk in cursor order against a plain walk of every slot: matches in clusters with long
// runs of empty words between them (as a date bound leaves them), read from arena bitsets (which a
// kernel skips through) and ordinary ones, ascending and descending, flipped or not, with extras.
import { describe, expect, it } from 'vitest';
import { arenaCopy, wordsFor } from '../../../src/catalog/storefront-index/bits.ts';
import type { StorefrontColumns } from '../../../src/catalog/storefront-index/columns.ts';
import { pageOf } from '../../../src/catalog/storefront-index/page.ts';
import { createRandom } from '../../../src/catalog/seed/prng.ts';
import type { StorefrontSort } from '../../../src/catalog/model.ts';

const SEED = process.env['FC_SEED'] ?? '20261207';

describe('pageOf in cursor order', () => {
  it(`pages clustered matches far apart exactly, whichever way it skips the empty words between them (seed ${SEED})`, () => {
    const random = createRandom(SEED);
    for (let round = 0; round < 60; round += 1) {
      const size = random.int(1, 6_000);
      const words = wordsFor(size);
      const cursor = Float64Array.from({ length: size }, (_, slot) => 1_000 + slot * 3);
      const columns = { size, cursor: { data: cursor } } as unknown as StorefrontColumns;
      // One to three sources; the first holds clusters of slots, the others most slots.
      const sources = Array.from({ length: random.int(1, 3) }, (_, k) => {
        const bits = new Uint32Array(words);
        for (let slot = 0; slot < size; slot += 1) if (k > 0 && random.chance(0.9)) bits[slot >>> 5]! |= 1 << (slot & 31);
        return bits;
      });
      for (let cluster = random.int(0, 6); cluster > 0; cluster -= 1) {
        const start = random.int(0, size - 1);
        for (let slot = start; slot < Math.min(size, start + random.int(1, 70)); slot += 1) if (random.chance(0.5)) sources[0]![slot >>> 5]! |= 1 << (slot & 31);
      }
      // A flipped source is stored inverted: read flipped, it holds what it held before, and the
      // last word's slots past the end, which the walk must not take.
      const flips = sources.map((_, k) => (k > 0 && random.chance(0.5) ? -1 : 0));
      for (const [k, bits] of sources.entries()) {
        if (flips[k] !== -1) continue;
        for (let w = 0; w < words; w += 1) bits[w] = ~bits[w]!;
        if ((size & 31) !== 0) bits[words - 1]! &= (1 << (size & 31)) - 1;
      }
      const matches = (slot: number): boolean => sources.every((bits, k) => (((bits[slot >>> 5]! ^ flips[k]!) >>> (slot & 31)) & 1) === 1);
      const extras = Int32Array.from(new Set(Array.from({ length: random.int(0, 3) }, () => random.int(0, size - 1))).values()).filter((slot) => !matches(slot));
      const expected = Array.from({ length: size }, (_, slot) => slot).filter((slot) => matches(slot) || extras.includes(slot));
      for (const sort of ['cursor:asc', 'cursor:desc'] as StorefrontSort[]) {
        const ordered = sort === 'cursor:asc' ? expected : expected.toReversed();
        for (const [offset, limit] of [
          [0, 20],
          [random.int(0, 40), random.int(1, 30)],
        ] as const) {
          const want = ordered.slice(offset, offset + limit).map((slot) => cursor[slot]!);
          const what = `round ${round}: ${sources.length} sources of ${size} slots, ${sort}, offset ${offset}, limit ${limit}`;
          for (const from of [sources, sources.map(arenaCopy)]) {
            // Counted by the walk when there are no extras (which a caller counts with the rest).
            const counted = extras.length === 0 ? undefined : expected.length;
            const page = pageOf(columns, (position) => position, { sort, offset, limit }, from, counted, flips, extras);
            expect(page, what).toStrictEqual({ cursors: want, total: expected.length });
          }
        }
      }
    }
  });
});
