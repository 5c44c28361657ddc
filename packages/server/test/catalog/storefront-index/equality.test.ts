// Equalities answered without a pass over every slot: a hashed column's look-up (hash-lookup.ts)
// and a number column's equality as two range passes, against a plain evaluation, through
// rewrites that change the values, additions past the look-up's rebuild, and IN lists.
import { describe, expect, it } from 'vitest';
import type { FilterExpr } from '../../../src/catalog/filter/ast.ts';
import { createRandom } from '../../../src/catalog/seed/prng.ts';
import { StorefrontIndex, type StorefrontIndexRow } from '../../../src/catalog/storefront-index.ts';
import { HashLookup } from '../../../src/catalog/storefront-index/hash-lookup.ts';
import { hashOf } from '../../../src/catalog/storefront-index/hash.ts';
import { foldText } from '../../../src/catalog/text.ts';
import { buildRow, pick } from '../../support/storefront-index-rows.ts';

const SEED = process.env['FC_SEED'] ?? '20261207';

describe('HashLookup', () => {
  it(`finds every slot of a hash, ascending, as slots are added and their hashes rewritten (seed ${SEED})`, () => {
    const random = createRandom(SEED);
    // A few common values (long chains) among many distinct ones.
    const value = (): string => (random.chance(0.3) ? `common-${random.int(0, 3)}` : `v-${random.int(0, 5_000)}`);
    let size = 300;
    let hashes = new Uint32Array(2 * 8_192);
    const put = (slot: number, text: string): void => {
      const [low, high] = hashOf(text);
      hashes[2 * slot] = low;
      hashes[2 * slot + 1] = high;
    };
    for (let slot = 0; slot < size; slot += 1) put(slot, value());
    const lookup = HashLookup.build(hashes, size, size);
    for (let round = 0; round < 40; round += 1) {
      for (let k = 0; k < 25; k += 1) {
        const slot = random.int(0, size - 1);
        const previous = hashes[2 * slot]!;
        put(slot, value());
        lookup.move(slot, previous, hashes[2 * slot]!);
      }
      const added = random.int(0, 120);
      if (lookup.capacity < size + added) lookup.resize(size + added);
      for (let k = 0; k < added; k += 1) {
        put(size, value());
        lookup.move(size, undefined, hashes[2 * size]!);
        size += 1;
      }
      if (size > hashes.length / 2 - 200) hashes = Uint32Array.from([...hashes, ...new Uint32Array(hashes.length)]);
      for (let k = 0; k < 30; k += 1) {
        const [low, high] = hashOf(random.chance(0.5) ? value() : `absent-${k}`);
        const found: number[] = [];
        lookup.forEach(hashes, low, high, (slot) => found.push(slot));
        const expected = Array.from({ length: size }, (_, slot) => slot).filter((slot) => hashes[2 * slot] === low && hashes[2 * slot + 1] === high);
        expect(found).toStrictEqual(expected);
        expect(lookup.chainLength(low)).toBeGreaterThanOrEqual(expected.length);
      }
    }
  });

  it('refuses to move a slot out of a chain it is not in', () => {
    const hashes = new Uint32Array([1, 1, 2, 2]);
    const lookup = HashLookup.build(hashes, 2, 2);
    expect(() => lookup.move(0, 2, 2)).toThrow(/not in the chain/);
  });
});

function plain(rows: readonly StorefrontIndexRow[], filter: FilterExpr): number[] {
  const equals = (row: StorefrontIndexRow, field: string, value: unknown): boolean => {
    const own = row[field as keyof StorefrontIndexRow];
    return typeof own === 'string' ? foldText(own) === foldText(String(value)) : own === value;
  };
  const matches = (row: StorefrontIndexRow, node: FilterExpr): boolean => {
    if (node.type === 'and') return node.operands.every((operand) => matches(row, operand));
    if (node.type === 'in') return node.values.some((value) => equals(row, node.field, value)) !== node.negated;
    if (node.type === 'compare' && node.operator === '=') return equals(row, node.field, node.value);
    if (node.type === 'compare' && node.operator === '!=') return !equals(row, node.field, node.value);
    if (node.type === 'compare') return (row[node.field as 'price_min'] as number) > (node.value as number);
    throw new Error(`not used here: ${node.type}`);
  };
  return rows.filter((row) => matches(row, filter)).map((row) => row.cursor);
}

describe('StorefrontIndex equalities', () => {
  it(`answers equalities and IN lists on hashed and number columns like a plain evaluation, through rewrites and growth (seed ${SEED})`, async () => {
    const random = createRandom(SEED);
    const index = new StorefrontIndex();
    let rows: StorefrontIndexRow[] = [];
    let cursor = 17_000_000_000_000_000;
    for (let round = 0; round < 5; round += 1) {
      // Enough new products each round that the catalog outgrows the look-ups built in earlier rounds.
      const fresh = Array.from({ length: 200 * 2 ** round }, () => buildRow(random, (cursor += 1024), `sp-${random.int(0, 1_000_000)}`));
      const rewritten = rows.filter(() => random.chance(0.1)).map((row) => buildRow(random, row.cursor, random.chance(0.5) ? row.id : `sp-${random.int(0, 1_000_000)}`));
      index.upsert([...rewritten, ...fresh]);
      const byCursor = new Map(rows.map((row) => [row.cursor, row]));
      for (const row of [...rewritten, ...fresh]) byCursor.set(row.cursor, row);
      rows = [...byCursor.values()].sort((a, b) => a.cursor - b.cursor);
      for (let i = 0; i < 25; i += 1) {
        const row = pick(random, rows);
        const field = pick(random, ['id', 'product_id', 'title', 'slug', 'price_min', 'price_display', 'updated_at'] as const);
        const value = (): string | number => {
          const own = pick(random, rows)[field];
          return typeof own === 'string' && random.chance(0.5) ? own.toUpperCase() : own;
        };
        const filters: FilterExpr[] = [
          { type: 'compare', field, operator: '=', value: row[field] },
          { type: 'compare', field, operator: '!=', value: value() },
          { type: 'in', field, values: [value(), value(), row[field], 'absent'], negated: false },
          { type: 'and', operands: [{ type: 'compare', field, operator: '=', value: value() }, { type: 'compare', field: 'price_max', operator: '>', value: random.int(0, 20) * 10 }] },
        ];
        for (const filter of filters) {
          const page = await index.search({ filter, sort: 'cursor:asc', offset: 0, limit: 100_000 });
          expect(page.cursors, JSON.stringify(filter)).toStrictEqual(plain(rows, filter));
          expect(page.total).toBe(page.cursors.length);
        }
      }
    }
  });
});
