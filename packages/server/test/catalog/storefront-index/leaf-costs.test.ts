// A leaf's column check against its index: both ways must select exactly the same slots, whatever
// the field, the operator, the letter case of the values and the rewrites the columns went through.
import { describe, expect, it } from 'vitest';
import type { FilterExpr, FilterLiteral } from '../../../src/catalog/filter/ast.ts';
import { createRandom, type Random } from '../../../src/catalog/seed/prng.ts';
import { forEachSlot } from '../../../src/catalog/storefront-index/bits.ts';
import { BitsetPool } from '../../../src/catalog/storefront-index/bitset-pool.ts';
import { StorefrontColumns } from '../../../src/catalog/storefront-index/columns.ts';
import { LeafBits } from '../../../src/catalog/storefront-index/leaf-bits.ts';
import { columnCheck, indexCost, wordCheck } from '../../../src/catalog/storefront-index/leaf-costs.ts';
import type { Leaf } from '../../../src/catalog/storefront-index/leaf-keys.ts';
import { compares } from '../../../src/catalog/storefront-index/ordering.ts';
import { SlotChanges } from '../../../src/catalog/storefront-index/slot-changes.ts';

import { BRANDS, buildRow, pick, SHOPS, TAGS, TITLES } from '../../support/storefront-index-rows.ts';
import { wordsOf } from '../../../src/catalog/text.ts';

const SEED = process.env['FC_SEED'] ?? '20261207';



function buildLeaf(random: Random): Leaf {
  const cased = (value: string): string => (random.chance(0.5) ? value.toUpperCase() : value.toLowerCase());
  const field = pick(random, ['shop_name', 'brand', 'tags', 'id', 'slug', 'price_min', 'updated_at'] as const);
  const value = (): FilterLiteral => {
    switch (field) {
      case 'shop_name':
        return cased(pick(random, [...SHOPS, 'Nowhere']));
      case 'brand':
        return cased(pick(random, [...BRANDS, 'Nobody']));
      case 'tags':
        return cased(pick(random, [...TAGS, 'none']));
      case 'id':
        return `p${random.int(0, 60)}`;
      case 'slug':
        return cased(pick(random, ['air-max', 'dunk', 'boot']));
      case 'price_min':
        return random.int(-1, 21) * 10;
      case 'updated_at':
        return random.int(-1, 6) * 1000;
    }
  };
  if (random.chance(0.4)) return { type: 'in', field, values: Array.from({ length: random.int(1, 3) }, value), negated: random.chance(0.3) };
  const numeric = field === 'price_min' || field === 'updated_at';
  const operator = pick(random, numeric ? (['=', '!=', '<', '<=', '>', '>='] as const) : (['=', '!='] as const));
  return { type: 'compare', field, operator, value: value() } as Extract<FilterExpr, { type: 'compare' }>;
}

function slotsOf(bits: Uint32Array): number[] {
  const slots: number[] = [];
  forEachSlot(bits, (slot) => slots.push(slot));
  return slots;
}

describe('leaf costs', () => {
  it(`checks each slot by its column exactly as the leaf's index selects it, through rewrites (seed ${SEED})`, () => {
    const random = createRandom(SEED);
    const columns = new StorefrontColumns();
    const pool = new BitsetPool();
    const bits = new LeafBits(columns, pool);
    let cursor = 1_000;
    for (let round = 0; round < 4; round += 1) {
      const fresh = Array.from({ length: 300 }, () => buildRow(random, (cursor += 8), `p${random.int(0, 50)}`));
      const rewritten = Array.from({ length: round === 0 ? 0 : 100 }, () => buildRow(random, 1_000 + 8 * random.int(1, columns.size), `p${random.int(0, 50)}`));
      const changes = new SlotChanges(columns.size);
      for (const row of [...fresh, ...rewritten]) columns.write(row, () => undefined, changes);
      columns.endWrite();
      const scope = pool.begin(columns.size);
      for (let i = 0; i < 200; i += 1) {
        const leaf = buildLeaf(random);
        const byColumn = columnCheck(columns, leaf);
        expect(byColumn, JSON.stringify(leaf)).toBeDefined();
        const checked = Array.from({ length: columns.size }, (_, slot) => slot).filter((slot) => byColumn!.check(slot));
        let expected: number[];
        if (leaf.type === 'compare' && !['=', '!='].includes(leaf.operator)) {
          const column = columns.numbers[leaf.field as 'price_min' | 'updated_at'].data;
          expected = Array.from({ length: columns.size }, (_, slot) => slot).filter((slot) => compares(column[slot]!, leaf.operator as '<', leaf.value as number));
          expect(indexCost(columns, leaf, 10)).toBeGreaterThan(0);
        } else {
          const values = leaf.type === 'in' ? leaf.values : [leaf.value];
          const negated = leaf.type === 'in' ? leaf.negated : leaf.operator === '!=';
          const made = bits.equals(leaf.field, values, scope);
          expected = slotsOf(negated ? bits.complement(made) : made);
        }
        expect(checked, JSON.stringify(leaf)).toStrictEqual(expected);
      }
      // Words: of titles, brands, product types and tags, and one no product has.
      for (const word of [...new Set(wordsOf([...TITLES, ...BRANDS, ...TAGS, 'shoes apparel nowhere'].join(' ')))]) {
        const check = wordCheck(columns, word);
        const checked = Array.from({ length: columns.size }, (_, slot) => slot).filter((slot) => check(slot));
        expect(checked, word).toStrictEqual(slotsOf(bits.wordBits(word, scope)));
      }
      pool.end(scope);
    }
  });
});
