// The storefront index against a plain evaluation of the same filter language over the same
// products: random products (unicode, letter cases, shared values, rewrites) and random filters of
// every form must give the same pages and totals for every sort.
import { describe, expect, it } from 'vitest';
import type { FilterExpr, FilterField, FilterLiteral } from '../../src/catalog/filter/ast.ts';
import type { StorefrontSort } from '../../src/catalog/model.ts';
import { createRandom, type Random } from '../../src/catalog/seed/prng.ts';
import { StorefrontIndex, type StorefrontIndexRow, type StorefrontSearch } from '../../src/catalog/storefront-index.ts';
import { inArena } from '../../src/catalog/kernels.ts';
import { foldText, wordsOf } from '../../src/catalog/text.ts';

import { buildRow, pick, TAGS, TITLES } from '../support/storefront-index-rows.ts';

const SEED = process.env['FC_SEED'] ?? '20261124';
const SORTS: StorefrontSort[] = ['cursor:asc', 'cursor:desc', 'updated_at:asc', 'updated_at:desc', 'published_at:asc', 'published_at:desc'];
const STRING_FIELDS = ['shop_name', 'brand', 'product_type', 'title', 'slug', 'product_id', 'id'] as const;
const NUMBER_FIELDS = ['price_min', 'price_max', 'price_display', 'created_at', 'updated_at', 'product_created_at', 'product_published_at'] as const;



function stringValue(random: Random, field: (typeof STRING_FIELDS)[number] | 'tags', rows: StorefrontIndexRow[]): string {
  const row = pick(random, rows);
  const value = field === 'tags' ? (row.tags[0] ?? 'none') : row[field];
  return random.chance(0.5) ? value.toUpperCase() : value.toLowerCase();
}

function buildFilter(random: Random, rows: StorefrontIndexRow[], depth = 0): FilterExpr {
  const kind = depth >= 3 ? random.int(3, 5) : random.int(0, 5);
  switch (kind) {
    case 0:
      return { type: 'and', operands: [buildFilter(random, rows, depth + 1), buildFilter(random, rows, depth + 1)] };
    case 1:
      return { type: 'or', operands: [buildFilter(random, rows, depth + 1), buildFilter(random, rows, depth + 1)] };
    case 2:
      return { type: 'not', operand: buildFilter(random, rows, depth + 1) };
    case 3: {
      const field = pick(random, [...STRING_FIELDS, 'tags'] as const);
      return { type: 'compare', field, operator: random.chance(0.7) ? '=' : '!=', value: stringValue(random, field, rows) };
    }
    case 4: {
      const field = pick(random, [...NUMBER_FIELDS, 'cursor'] as const);
      const value = field === 'cursor' ? pick(random, rows).cursor : field.startsWith('price') ? random.int(0, 20) * 10 : random.int(0, 5) * 1000;
      return { type: 'compare', field, operator: pick(random, ['=', '!=', '<', '<=', '>', '>='] as const), value };
    }
    default: {
      if (random.chance(0.3)) return { type: 'compare', field: 'available', operator: pick(random, ['=', '!='] as const), value: random.chance(0.5) };
      const field = pick(random, ['shop_name', 'brand', 'tags'] as const);
      const values = Array.from({ length: random.int(1, 4) }, () => stringValue(random, field, rows));
      return { type: 'in', field, values, negated: random.chance(0.3) };
    }
  }
}

/** The filter language evaluated the plain way, one product at a time. */
function matches(row: StorefrontIndexRow, expr: FilterExpr): boolean {
  const equals = (field: FilterField, value: FilterLiteral): boolean => {
    if (field === 'tags') return row.tags.some((tag) => foldText(tag) === foldText(String(value)));
    const own = row[field as Exclude<FilterField, 'tags'>];
    return typeof own === 'string' ? foldText(own) === foldText(String(value)) : own === value;
  };
  switch (expr.type) {
    case 'and':
      return expr.operands.every((operand) => matches(row, operand));
    case 'or':
      return expr.operands.some((operand) => matches(row, operand));
    case 'not':
      return !matches(row, expr.operand);
    case 'in':
      return expr.values.some((value) => equals(expr.field, value)) !== expr.negated;
    case 'compare': {
      if (expr.operator === '=') return equals(expr.field, expr.value);
      if (expr.operator === '!=') return !equals(expr.field, expr.value);
      const own = row[expr.field as Exclude<FilterField, 'tags'>] as number;
      const value = expr.value as number;
      return expr.operator === '<' ? own < value : expr.operator === '<=' ? own <= value : expr.operator === '>' ? own > value : own >= value;
    }
  }
}

/** A row's words, once per row object (a rewrite is a new object). */
const rowWords = new WeakMap<StorefrontIndexRow, Set<string>>();
function wordsOfRow(row: StorefrontIndexRow): Set<string> {
  let words = rowWords.get(row);
  if (words === undefined) rowWords.set(row, (words = new Set(wordsOf([row.title, row.brand, row.product_type, ...row.tags].join(' ')))));
  return words;
}

function plainSearch(rows: StorefrontIndexRow[], search: StorefrontSearch): { cursors: number[]; total: number } {
  const words = wordsOf(search.text ?? '');
  const found = rows.filter((row) => {
    if (search.shopName !== undefined && foldText(row.shop_name) !== foldText(search.shopName)) return false;
    if (words.length > 0 && !words.every((word) => wordsOfRow(row).has(word))) return false;
    return search.filter === undefined || matches(row, search.filter);
  });
  const [key, direction] = search.sort.split(':') as ['cursor' | 'updated_at' | 'published_at', 'asc' | 'desc'];
  const field = key === 'published_at' ? 'product_published_at' : key;
  found.sort((a, b) => (a[field] - b[field] || a.cursor - b.cursor) * (direction === 'asc' ? 1 : -1));
  return { cursors: found.slice(search.offset, search.offset + search.limit).map((row) => row.cursor), total: found.length };
}

describe('StorefrontIndex', () => {
  it(`answers random filters, queries, shops, sorts and pages like a plain evaluation (seed ${SEED})`, async () => {
    const random = createRandom(SEED);
    const index = new StorefrontIndex();
    let rows: StorefrontIndexRow[] = [];
    let cursor = 17_000_000_000_000_000;
    for (let round = 0; round < 4; round += 1) {
      // New products, then rewrites of existing ones (same cursor, new values).
      const fresh = Array.from({ length: 150 }, () => buildRow(random, (cursor += 1024), random.uuid()));
      const rewritten = rows.filter(() => random.chance(0.2)).map((row) => buildRow(random, row.cursor, row.id));
      index.upsert([...rewritten, ...fresh]);
      // Built ahead once (as a server does at start), then kept by the later writes.
      if (round === 1) index.prepare();
      const byCursor = new Map(rows.map((row) => [row.cursor, row]));
      for (const row of [...rewritten, ...fresh]) byCursor.set(row.cursor, row);
      rows = [...byCursor.values()].sort((a, b) => a.cursor - b.cursor);

      for (let i = 0; i < 150; i += 1) {
        const search: StorefrontSearch = { sort: pick(random, SORTS), offset: random.int(0, 3) * 10, limit: random.int(1, 30) };
        if (random.chance(0.7)) search.filter = buildFilter(random, rows);
        if (random.chance(0.2)) search.shopName = stringValue(random, 'shop_name', rows);
        if (random.chance(0.2)) search.text = pick(random, ['air', 'AIR max', 'ça', 'ca va', 'UNDER', 'ünder', '🎱', 'sao', 'nike dunk', '--']);
        expect(await index.search(search), JSON.stringify(search)).toStrictEqual(plainSearch(rows, search));
      }
    }
    expect(index.size).toBe(rows.length);
  });

  it(`answers range filters exactly over many distinct values, as products are added and rewritten (seed ${SEED})`, async () => {
    // Enough products and distinct values for the range leaves' buckets to matter: values on a
    // bucket's bound, inside one, beyond every bound, and rewrites that move products across bounds.
    const random = createRandom(`${SEED}-ranges`);
    const index = new StorefrontIndex();
    let rows: StorefrontIndexRow[] = [];
    let cursor = 17_000_000_000_000_000;
    const wide = (row: StorefrontIndexRow): StorefrontIndexRow => ({
      ...row,
      price_min: random.int(0, 200_000) / 100,
      price_max: random.chance(0.1) ? 99.99 : random.int(0, 200_000) / 100,
      updated_at: 1_700_000_000_000 + random.int(0, 10_000_000),
    });
    for (let round = 0; round < 4; round += 1) {
      const fresh = Array.from({ length: 1_500 }, () => wide(buildRow(random, (cursor += 1024), random.uuid())));
      const rewritten = rows.filter(() => random.chance(0.1)).map((row) => wide(buildRow(random, row.cursor, row.id)));
      index.upsert([...rewritten, ...fresh]);
      const byCursor = new Map(rows.map((row) => [row.cursor, row]));
      for (const row of [...rewritten, ...fresh]) byCursor.set(row.cursor, row);
      rows = [...byCursor.values()].sort((a, b) => a.cursor - b.cursor);
      for (let i = 0; i < 40; i += 1) {
        const leaf = (): FilterExpr => {
          const field = pick(random, ['price_min', 'price_max', 'updated_at', 'cursor'] as const);
          const row = pick(random, rows);
          const anyValue = field === 'updated_at' ? 1_700_000_000_000 + random.int(-10, 10_000_010) : random.int(-10, 200_010) / 100;
          const value = random.chance(0.5) || field === 'cursor' ? row[field] : anyValue;
          return { type: 'compare', field, operator: pick(random, ['<', '<=', '>', '>='] as const), value };
        };
        const filter: FilterExpr = random.chance(0.5) ? leaf() : { type: pick(random, ['and', 'or'] as const), operands: [leaf(), leaf(), { type: 'not', operand: leaf() }] };
        const search: StorefrontSearch = { sort: pick(random, SORTS), offset: random.int(0, 2) * 20, limit: 20, filter };
        expect(await index.search(search), JSON.stringify(search)).toStrictEqual(plainSearch(rows, search));
      }
    }
  });

  it(`keeps sorted pages exact when large writes wait to be merged and smaller ones rewrite the same products meanwhile (seed ${SEED})`, async () => {
    // Large batches set their slots aside until a sort next reads the orders; a small batch that
    // follows (here rewriting some of the same products) must join them, not move slots whose
    // places in the orders are stale. Batches of a few hundred over 8,000 products take the
    // merge's binary-search path, the batch of 6,000 its walk.
    const random = createRandom(`${SEED}-orders`);
    const index = new StorefrontIndex();
    let cursor = 17_000_000_000_000_000;
    const spread = (row: StorefrontIndexRow): StorefrontIndexRow => ({ ...row, updated_at: random.int(0, 400) * 1000, product_published_at: random.int(0, 400) * 1000 });
    let rows = Array.from({ length: 8_000 }, () => spread(buildRow(random, (cursor += 1024), random.uuid())));
    index.upsert(rows);
    index.prepare();
    const apply = (batch: StorefrontIndexRow[]): void => {
      index.upsert(batch);
      const byCursor = new Map(rows.map((row) => [row.cursor, row]));
      for (const row of batch) byCursor.set(row.cursor, row);
      rows = [...byCursor.values()].sort((a, b) => a.cursor - b.cursor);
    };
    for (const large of [300, 400, 6_000]) {
      const rewritten = Array.from({ length: large }, () => pick(random, rows)).map((row) => spread(buildRow(random, row.cursor, row.id)));
      const fresh = Array.from({ length: 20 }, () => spread(buildRow(random, (cursor += 1024), random.uuid())));
      apply([...new Map([...rewritten, ...fresh].map((row) => [row.cursor, row])).values()]);
      // Unsorted reads meanwhile do not merge; the small batch rewrites products of the large one.
      const unsorted: StorefrontSearch = { sort: 'cursor:desc', offset: 0, limit: 20, filter: { type: 'compare', field: 'updated_at', operator: '>=', value: 200_000 } };
      expect(await index.search(unsorted)).toStrictEqual(plainSearch(rows, unsorted));
      apply(rewritten.slice(0, 10).map((row) => spread(buildRow(random, row.cursor, row.id))));
      for (const sort of SORTS.filter((sort) => !sort.startsWith('cursor'))) {
        for (const offset of [0, 3_980]) {
          const search: StorefrontSearch = { sort, offset, limit: 20 };
          expect(await index.search(search), JSON.stringify(search)).toStrictEqual(plainSearch(rows, search));
        }
      }
    }
  });

  it('answers a range over a bucket that a rewritten product has left, and one it has joined', async () => {
    const random = createRandom('moves');
    const index = new StorefrontIndex();
    const rows = Array.from({ length: 2_000 }, (_, i) => ({ ...buildRow(random, 17_000_000_000_000_000 + (i + 1) * 1024, `p${i}`), price_min: i }));
    index.upsert(rows);
    const above = async (value: number): Promise<number> =>
      (await index.search({ sort: 'cursor:asc', offset: 0, limit: 1, filter: { type: 'compare', field: 'price_min', operator: '>', value } })).total;
    for (const [moved, to] of [[100, 5_000], [900, 950], [1_500, -1]] as const) {
      // The bucket of `moved` is sorted by the first search; the rewrite takes the product out of it.
      await above(moved + 0.5);
      index.upsert([{ ...rows[moved]!, price_min: to }]);
      rows[moved] = { ...rows[moved]!, price_min: to };
      expect(await above(moved + 0.5)).toBe(rows.filter((row) => row.price_min > moved + 0.5).length);
    }
  });

  it(`answers searches that run side by side, each yielding at every step, like a plain evaluation (seed ${SEED})`, async () => {
    // Interleaved searches share the bitset pool: each must get back only the bitsets it took.
    const random = createRandom(`${SEED}-interleaved`);
    const index = new StorefrontIndex();
    const rows = Array.from({ length: 3_000 }, (_, i) => buildRow(random, 17_000_000_000_000_000 + (i + 1) * 1024, random.uuid()));
    index.upsert(rows);
    index.prepare();
    for (let round = 0; round < 5; round += 1) {
      const searches = Array.from({ length: 12 }, (): StorefrontSearch => ({ sort: pick(random, SORTS), offset: 0, limit: 50, filter: buildFilter(random, rows) }));
      const answers = await Promise.all(searches.map((search) => index.search(search, 0)));
      searches.forEach((search, i) => expect(answers[i], JSON.stringify(search)).toStrictEqual(plainSearch(rows, search)));
    }
  });

  for (const sliceMs of [undefined, 0]) {
    it(`answers filters used again and again like a plain evaluation: leaves kept, forgotten on a write, never kept from a search written to meanwhile${sliceMs === 0 ? ', every keep made between searches (no slice left to make one in)' : ''} (seed ${SEED})`, async () => {
      // The leaf cache admits a leaf on its second use: each filter runs three times (noted,
      // admitted, read), then again while a write lands between the steps of searches that yield at
      // every step (they answer for the index as written, and must not keep what they made before it).
      // A keep that costs work the search does not do is made by the search where it fits in its
      // slice, else between searches; what was asked for before a write must not be made after it.
      const random = createRandom(`${SEED}-leaf-cache`);
      const index = new StorefrontIndex();
      let rows = Array.from({ length: 2_000 }, (_, i) => buildRow(random, 17_000_000_000_000_000 + (i + 1) * 1024, `k${i}`));
      index.upsert(rows);
      index.prepare();
      const searches = Array.from({ length: 20 }, (): StorefrontSearch => {
        const search: StorefrontSearch = { sort: pick(random, SORTS), offset: 0, limit: 20, filter: buildFilter(random, rows) };
        if (random.chance(0.3)) search.text = pick(random, ['air', 'dunk', 'ünder', 'nike']);
        if (random.chance(0.2)) search.shopName = stringValue(random, 'shop_name', rows);
        return search;
      });
      for (let round = 0; round < 4; round += 1) {
        for (let repeat = 0; repeat < 3; repeat += 1) {
          for (const search of searches) expect(await index.search(search, sliceMs), JSON.stringify(search)).toStrictEqual(plainSearch(rows, search));
          // A server turns its event loop between requests: what waits to be made is made there.
          await index.idle();
        }
        const pending = searches.map((search) => index.search(search, 0));
        // A search whose leaves are all kept is answered at once, without yielding: before the write
        // below, and for the index as it was. The others yield at their first leaf.
        const settled = new Set<number>();
        pending.forEach((answer, i) => void answer.then(() => settled.add(i)));
        for (let turn = 0; turn < 10; turn += 1) await Promise.resolve();
        const answeredAtOnce = new Set(settled);
        const before = rows;
        // Rewrites and new products (the bitsets grow by some words).
        const rewritten = rows.filter(() => random.chance(0.2)).map((row) => buildRow(random, row.cursor, row.id));
        const last = rows[rows.length - 1]!.cursor;
        const fresh = Array.from({ length: 100 }, (_, i) => buildRow(random, last + (i + 1) * 1024, `k${round}-${i}`));
        index.upsert([...rewritten, ...fresh]);
        const byCursor = new Map(rows.map((row) => [row.cursor, row]));
        for (const row of [...rewritten, ...fresh]) byCursor.set(row.cursor, row);
        rows = [...byCursor.values()];
        const answers = await Promise.all(pending);
        searches.forEach((search, i) => expect(answers[i], JSON.stringify(search)).toStrictEqual(plainSearch(answeredAtOnce.has(i) ? before : rows, search)));
        // Some yielded, and answered for the index as written meanwhile.
        expect(answeredAtOnce.size).toBeLessThan(searches.length);
      }
      // The cache was used (a test of it that never hit would pass without it).
      expect(index.leafCacheStats.leaf.hits).toBeGreaterThan(100);
      if (sliceMs === 0) expect(index.laterStats.made).toBeGreaterThan(10);
      expect(index.laterStats.failed).toBe(0);
    });
  }

  it(`answers filters used again and again like a plain evaluation while single products and small batches are written between them, from what the leaf cache and the pair tables kept and followed (seed ${SEED})`, async () => {
    const random = createRandom(`${SEED}-interleaved`);
    const index = new StorefrontIndex();
    const spread = (row: StorefrontIndexRow): StorefrontIndexRow => ({ ...row, price_min: random.int(0, 100_000) / 100, price_max: random.int(0, 100_000) / 100 });
    let rows = Array.from({ length: 3_000 }, (_, i) => spread(buildRow(random, 17_000_000_000_000_000 + (i + 1) * 1024, `w${i}`)));
    index.upsert(rows);
    index.prepare();
    const available: FilterExpr = { type: 'compare', field: 'available', operator: '=', value: true };
    const range = (field: 'price_min' | 'price_max'): FilterExpr => ({ type: 'compare', field, operator: pick(random, ['<', '<=', '>', '>='] as const), value: random.int(0, 100_000) / 100 });
    const searches = Array.from({ length: 30 }, (_, i): StorefrontSearch => {
      // A third of them ANDs of two price ranges (the pair tables' shape), the rest any filter.
      const filter: FilterExpr = i % 3 === 0 ? { type: 'and', operands: random.chance(0.5) ? [range('price_min'), range('price_max'), available] : [range('price_max'), range('price_min')] } : buildFilter(random, rows);
      const search: StorefrontSearch = { sort: pick(random, SORTS), offset: random.int(0, 2) * 10, limit: 20, filter };
      if (i % 3 !== 0 && random.chance(0.3)) search.text = pick(random, ['air', 'dunk', 'ünder', 'nike']);
      if (i % 3 !== 0 && random.chance(0.2)) search.shopName = stringValue(random, 'shop_name', rows);
      return search;
    });
    let cursor = rows[rows.length - 1]!.cursor;
    const statsAt = (): [number, number] => [index.leafCacheStats.leaf.hits + index.leafCacheStats.bucket.hits, index.pairCountStats.counted];
    let warm: [number, number] = [0, 0];
    for (let round = 0; round < 12; round += 1) {
      if (round === 3) warm = statsAt();
      for (const search of searches) {
        expect(await index.search(search), `round ${round}: ${JSON.stringify(search)}`).toStrictEqual(plainSearch(rows, search));
        await index.idle();
        // A write between two searches: one product rewritten or added, or a few of both.
        const kind = random.int(0, 2);
        const rewrite = (): StorefrontIndexRow => {
          const row = pick(random, rows);
          return random.chance(0.5) ? spread(buildRow(random, row.cursor, row.id)) : { ...row, available: !row.available, price_min: random.chance(0.5) ? row.price_min : random.int(0, 100_000) / 100 };
        };
        const batch = kind === 0 ? [rewrite()] : kind === 1 ? [spread(buildRow(random, (cursor += 1024), `w+${cursor}`))] : [...Array.from({ length: random.int(1, 8) }, rewrite), ...Array.from({ length: random.int(0, 8) }, () => spread(buildRow(random, (cursor += 1024), `w+${cursor}`)))];
        index.upsert(batch);
        const byCursor = new Map(rows.map((row) => [row.cursor, row]));
        for (const row of batch) byCursor.set(row.cursor, row);
        rows = [...byCursor.values()];
      }
    }
    // After the first rounds, what was kept served searches though a write came between every two.
    const [hits, counted] = statsAt();
    expect(hits - warm[0]).toBeGreaterThan(100);
    expect(counted - warm[1]).toBeGreaterThan(50);
    // Each pair's table built once, then followed.
    expect(index.pairCountStats.builds).toBe(1);
    expect(index.pairCountStats.failures).toBe(0);
    expect(index.laterStats.failed).toBe(0);
  });

  it(`keeps a pair table whose build products were written during, following them once it is built (seed ${SEED})`, async () => {
    const random = createRandom(`${SEED}-build-writes`);
    const index = new StorefrontIndex();
    const spread = (row: StorefrontIndexRow): StorefrontIndexRow => ({ ...row, price_min: random.int(0, 100_000) / 100, price_max: random.int(0, 100_000) / 100 });
    // Enough products that the build takes several slices, with writes landing between them.
    const rows = Array.from({ length: 150_000 }, (_, i) => spread(buildRow(random, 17_000_000_000_000_000 + (i + 1) * 1024, `b${i}`)));
    index.upsert(rows);
    index.prepare();
    const search = (): StorefrontSearch => ({
      sort: 'cursor:asc',
      offset: 0,
      limit: 10,
      filter: { type: 'and', operands: [{ type: 'compare', field: 'price_min', operator: '>=', value: random.int(0, 100_000) / 100 }, { type: 'compare', field: 'price_max', operator: '<', value: random.int(0, 100_000) / 100 }] },
    });
    // Two uses start the build.
    for (let use = 0; use < 2; use += 1) {
      const first = search();
      expect(await index.search(first)).toStrictEqual(plainSearch(rows, first));
    }
    let cursor = rows[rows.length - 1]!.cursor;
    let writes = 0;
    // Each row's place in `rows`, so a write costs the test O(1): a slow machine gets more turns of the build, and more writes.
    const placeOf = new Map(rows.map((row, i) => [row.cursor, i]));
    const idle = index.idle().then(() => 'idle');
    for (;;) {
      const raced = await Promise.race([idle, new Promise((resolve) => setImmediate(() => resolve('turn')))]);
      if (raced === 'idle') break;
      const batch = [...Array.from({ length: 3 }, () => spread(pick(random, rows))), spread(buildRow(random, (cursor += 1024), `b+${cursor}`))];
      index.upsert(batch);
      writes += 1;
      for (const row of batch) {
        const place = placeOf.get(row.cursor);
        if (place === undefined) {
          placeOf.set(row.cursor, rows.length);
          rows.push(row);
        } else rows[place] = row;
      }
    }
    expect(writes).toBeGreaterThan(2);
    expect(index.pairCountStats.builds).toBe(1);
    for (let i = 0; i < 30; i += 1) {
      const next = search();
      expect(await index.search(next), JSON.stringify(next)).toStrictEqual(plainSearch(rows, next));
    }
    expect(index.pairCountStats.counted).toBe(30);
  });

  it(`answers range leaves with bounds never used before from the kept buckets around them, exactly, through rewrites (seed ${SEED})`, async () => {
    // Every bound is new (no leaf is used twice), but they fall in a few buckets: from a bucket's
    // second use the slots below it are kept, and later leaves read them instead of the digits.
    const random = createRandom(`${SEED}-buckets`);
    const index = new StorefrontIndex();
    // More products than the range index has buckets: a bucket holds several values, and a bound inside it
    // keeps some of its members and not others.
    let rows = Array.from({ length: 20_000 }, (_, i) => ({ ...buildRow(random, 17_000_000_000_000_000 + (i + 1) * 1024, `b${i}`), price_min: random.int(0, 100_000) / 100, price_max: random.int(0, 100_000) / 100 }));
    index.upsert(rows);
    index.prepare();
    let fraction = 0;
    let leaves = 0;
    for (let round = 0; round < 3; round += 1) {
      for (let i = 0; i < 40; i += 1) {
        // Bounds near 250 and 750: a couple of buckets each, a bound never seen before every time.
        const near = (around: number): number => around + random.int(-25, 25) / 100 + (fraction += 1e-6);
        const leaf = (field: 'price_min' | 'price_max', around: number): FilterExpr => ({ type: 'compare', field, operator: pick(random, ['<', '<=', '>', '>='] as const), value: near(around) });
        const available: FilterExpr = { type: 'compare', field: 'available', operator: '=', value: true };
        const filter: FilterExpr = pick(random, [
          leaf('price_min', 250),
          { type: 'and', operands: [leaf('price_min', 250), leaf('price_max', 750)] },
          { type: 'and', operands: [leaf('price_min', 250), leaf('price_max', 750), available] },
          // Two leaves over one column, their buckets' members overlapping (`available = true`
          // twice: with one, the one-column count answers with no bucket).
          { type: 'and', operands: [leaf('price_min', 250), leaf('price_min', 250), available, available] },
        ]);
        leaves += filter.type === 'and' ? 2 : 1;
        const search: StorefrontSearch = { sort: pick(random, SORTS), offset: random.int(0, 100), limit: 20, filter };
        expect(await index.search(search), JSON.stringify(search)).toStrictEqual(plainSearch(rows, search));
        await index.idle();
      }
      // Products move across those buckets: the kept ones are of the old index and go.
      const rewritten = rows.filter(() => random.chance(0.1)).map((row) => ({ ...row, price_min: random.int(24_000, 26_000) / 100, price_max: random.int(74_000, 76_000) / 100 }));
      index.upsert(rewritten);
      const byCursor = new Map(rows.map((row) => [row.cursor, row]));
      for (const row of rewritten) byCursor.set(row.cursor, row);
      rows = [...byCursor.values()];
    }
    expect(index.leafCacheStats.leaf.hits).toBe(0);
    expect(index.leafCacheStats.bucket.hits).toBeGreaterThan(50);
    // Most were answered from one kept bucket per leaf and its members, in place, where the
    // leaf's own pass looks up two (the bucket and the next).
    expect(index.leafCacheStats.bucket.lookups).toBeLessThan(1.5 * leaves);
  });

  it(`counts ANDs of two range leaves (and available) by the pair's counts once built, exactly, through rewrites and additions they follow (seed ${SEED})`, async () => {
    const random = createRandom(`${SEED}-pairs`);
    const index = new StorefrontIndex();
    let rows = Array.from({ length: 20_000 }, (_, i) => ({ ...buildRow(random, 17_000_000_000_000_000 + (i + 1) * 1024, `p${i}`), price_min: random.int(0, 100_000) / 100, price_max: random.int(0, 100_000) / 100, updated_at: random.int(0, 1_000_000) }));
    index.upsert(rows);
    index.prepare();
    let fraction = 0;
    for (let round = 0; round < 3; round += 1) {
      const countedBefore = index.pairCountStats.counted;
      for (let i = 0; i < 60; i += 1) {
        const near = (around: number): number => around + random.int(-25, 25) / 100 + (fraction += 1e-6);
        const leaf = (field: 'price_min' | 'price_max' | 'updated_at', around: number): FilterExpr => ({ type: 'compare', field, operator: pick(random, ['<', '<=', '>', '>='] as const), value: field === 'updated_at' ? Math.round(around * 1000) : near(around) });
        const available: FilterExpr = { type: 'compare', field: 'available', operator: '=', value: true };
        const operands = pick(random, [
          [leaf('price_min', 250), leaf('price_max', 750)],
          [leaf('price_max', 750), leaf('price_min', 250), available],
          [available, leaf('updated_at', 500), leaf('price_min', 250)],
          // Several bounds on a column: an interval, counted by inclusion and exclusion.
          [leaf('price_min', 250), leaf('price_min', 252), leaf('price_max', 750)],
          [leaf('price_max', 750), leaf('price_min', 250), leaf('price_max', 749), leaf('price_min', 251), available],
          // Not the pair's shape: one column twice, or a third leaf other than available.
          [leaf('price_min', 250), leaf('price_min', 260), available],
          [leaf('price_min', 250), leaf('price_max', 750), { type: 'compare', field: 'available', operator: '=', value: false } as FilterExpr],
        ]);
        const search: StorefrontSearch = { sort: pick(random, SORTS), offset: random.int(0, 100), limit: 20, filter: { type: 'and', operands } };
        expect(await index.search(search), JSON.stringify(search)).toStrictEqual(plainSearch(rows, search));
        // The build runs between other work: let it.
        if (i % 10 === 9) await index.idle();
      }
      expect(index.pairCountStats.counted, `round ${round}`).toBeGreaterThan(countedBefore + 10);
      // Products move across buckets, and new ones come: the tables follow them, in batches and one by one.
      const rewritten = rows.filter(() => random.chance(0.1)).map((row) => ({ ...row, price_min: random.int(24_000, 26_000) / 100, price_max: random.int(74_000, 76_000) / 100, available: !row.available }));
      const last = rows[rows.length - 1]!.cursor;
      const fresh = Array.from({ length: 200 }, (_, i) => ({ ...buildRow(random, last + (i + 1) * 1024, `p${round}-${i}`), price_min: random.int(0, 100_000) / 100, price_max: random.int(0, 100_000) / 100, updated_at: random.int(0, 1_000_000) }));
      index.upsert(rewritten.slice(0, 100));
      for (const row of rewritten.slice(100, 150)) index.upsert([row]);
      index.upsert([...rewritten.slice(150, 250), ...fresh.slice(0, 100)]);
      for (const row of fresh.slice(100)) index.upsert([row]);
      const byCursor = new Map(rows.map((row) => [row.cursor, row]));
      for (const row of [...rewritten.slice(0, 250), ...fresh]) byCursor.set(row.cursor, row);
      rows = [...byCursor.values()];
    }
    // One build per pair of columns: the writes are followed, nothing is rebuilt.
    expect(index.pairCountStats.builds).toBe(2);
    // Most pages walked with no bitset; the rest (a selective filter, a deep page) by the bitsets.
    expect(index.pairCountStats.scanned).toBeGreaterThan(index.pairCountStats.counted / 2);
    expect(index.pairCountStats.failures).toBe(0);
    // A thousand new products in one batch: followed (placed in one sweep).
    const last = rows[rows.length - 1]!.cursor;
    const many = Array.from({ length: 1_000 }, (_, i) => ({ ...buildRow(random, last + (i + 1) * 1024, `pm${i}`), price_min: random.int(0, 100_000) / 100, price_max: random.int(0, 100_000) / 100 }));
    index.upsert(many);
    rows = [...rows, ...many];
    const search = (): StorefrontSearch => ({ sort: pick(random, SORTS), offset: 0, limit: 20, filter: { type: 'and', operands: [{ type: 'compare', field: 'price_min', operator: '>', value: random.int(0, 1_000) }, { type: 'compare', field: 'price_max', operator: '<', value: random.int(0, 1_000) }] } });
    for (let i = 0; i < 10; i += 1) {
      const next = search();
      expect(await index.search(next), JSON.stringify(next)).toStrictEqual(plainSearch(rows, next));
    }
    expect(index.pairCountStats.builds).toBe(2);
    // A batch whose rewrites move further between buckets than following is worth: the tables go
    // stale and are built again, exact.
    const moved = rows.filter(() => random.chance(0.15)).map((row) => ({ ...row, price_min: random.int(0, 100_000) / 100, price_max: random.int(0, 100_000) / 100 }));
    index.upsert(moved);
    const movedByCursor = new Map(rows.map((row) => [row.cursor, row]));
    for (const row of moved) movedByCursor.set(row.cursor, row);
    rows = [...movedByCursor.values()];
    for (let i = 0; i < 30; i += 1) {
      const next = search();
      expect(await index.search(next), JSON.stringify(next)).toStrictEqual(plainSearch(rows, next));
      if (i % 10 === 9) await index.idle();
    }
    expect(index.pairCountStats.builds).toBe(3);
  });

  it(`answers the price range from its table once built, its pages walked with no bitset or from the bitsets where the walk would be long, exactly (seed ${SEED})`, async () => {
    const random = createRandom(`${SEED}-prepared`);
    const index = new StorefrontIndex();
    // Prices bunched: a bound at either end selects a few products, or nearly all.
    const rows = Array.from({ length: 30_000 }, (_, i) => ({ ...buildRow(random, 17_000_000_000_000_000 + (i + 1) * 1024, `q${i}`), price_min: random.int(0, 100_000) / 100, price_max: i < 20_000 ? random.int(0, 100_000) / 100 : 2_000 + i / 100, updated_at: random.int(0, 1_000_000) }));
    index.upsert(rows);
    index.prepare();
    // Two uses of the pair start its table's build, between searches.
    for (const value of [100, 200]) {
      const filter: FilterExpr = { type: 'and', operands: [{ type: 'compare', field: 'price_min', operator: '>=', value }, { type: 'compare', field: 'price_max', operator: '<=', value: 900 }] };
      const search: StorefrontSearch = { sort: 'cursor:asc', offset: 0, limit: 10, filter };
      expect(await index.search(search)).toStrictEqual(plainSearch(rows, search));
    }
    await index.idle();
    expect(index.pairCountStats.builds).toBe(1);
    expect(index.pairCountStats.counted).toBe(0);
    for (let i = 0; i < 120; i += 1) {
      const available: FilterExpr = { type: 'compare', field: 'available', operator: '=', value: true };
      const low: FilterExpr = { type: 'compare', field: 'price_min', operator: pick(random, ['>', '>='] as const), value: random.chance(0.2) ? 999.9 : random.int(0, 100_000) / 100 };
      const high: FilterExpr = { type: 'compare', field: 'price_max', operator: pick(random, ['<', '<='] as const), value: random.chance(0.2) ? 2_000 + random.int(19_000, 29_999) / 100 : random.int(0, 100_000) / 100 };
      const operands = random.chance(0.5) ? [low, high, available] : [high, low];
      const search: StorefrontSearch = { sort: pick(random, SORTS), offset: random.chance(0.1) ? random.int(0, 40_000) : random.int(0, 100), limit: random.int(0, 50), filter: { type: 'and', operands } };
      expect(await index.search(search), JSON.stringify(search)).toStrictEqual(plainSearch(rows, search));
    }
    // Every search was counted by the pair's table: no other build was needed.
    expect(index.pairCountStats.counted).toBe(120);
    expect(index.pairCountStats.builds).toBe(1);
    expect(index.pairCountStats.scanned).toBeGreaterThan(30);
    expect(index.pairCountStats.scanned).toBeLessThan(120);
  });

  it('keeps no leaf from a search that began before a write, though it uses the leaf twice after it', async () => {
    const random = createRandom('stale-keep');
    let rows = Array.from({ length: 100 }, (_, i) => ({ ...buildRow(random, 17_000_000_000_000_000 + (i + 1) * 1024, `s${i}`), price_min: i }));
    const index = new StorefrontIndex();
    index.upsert(rows);
    const leaf: FilterExpr = { type: 'compare', field: 'price_min', operator: '>=', value: 50 };
    const twice: StorefrontSearch = { sort: 'cursor:asc', offset: 0, limit: 5, filter: { type: 'or', operands: [leaf, leaf] } };
    // Begun before the write, it resumes after it (yielding at every step), uses the leaf a second
    // time with bitsets of the size it began on, then starts again.
    const stale = index.search(twice, 0);
    const fresh = Array.from({ length: 100 }, (_, i) => ({ ...buildRow(random, 17_000_000_000_000_000 + (101 + i) * 1024, `t${i}`), price_min: 100 + i }));
    index.upsert(fresh);
    rows = [...rows, ...fresh];
    expect(await stale).toStrictEqual(plainSearch(rows, twice));
    const once: StorefrontSearch = { ...twice, filter: leaf };
    expect(await index.search(once)).toStrictEqual(plainSearch(rows, once));
    expect(await index.search(once)).toStrictEqual(plainSearch(rows, once));
  });

  it('answers tags and words exactly while rewrites pile up stale entries and compaction runs', async () => {
    const random = createRandom(`${SEED}-compaction`);
    const index = new StorefrontIndex();
    let rows = Array.from({ length: 200 }, (_, i) => buildRow(random, 17_000_000_000_000_000 + (i + 1) * 1024, `c${i}`));
    index.upsert(rows);
    for (let round = 0; round < 12; round += 1) {
      // Every product's tags and title change each round: each round leaves hundreds of entries stale.
      rows = rows.map((row) => ({ ...row, tags: [pick(random, TAGS), `ROUND_${round}_${random.int(0, 9)}`], title: `${pick(random, TITLES)} r${round}` }));
      index.upsert(rows);
      for (const tag of [...TAGS, `ROUND_${round}_3`, `ROUND_${Math.max(0, round - 1)}_3`]) {
        const search: StorefrontSearch = { sort: 'cursor:asc', offset: 0, limit: 500, filter: { type: 'compare', field: 'tags', operator: '=', value: tag } };
        expect(await index.search(search), tag).toStrictEqual(plainSearch(rows, search));
      }
      const text: StorefrontSearch = { sort: 'cursor:asc', offset: 0, limit: 500, text: `r${round}` };
      expect(await index.search(text)).toStrictEqual(plainSearch(rows, text));
    }
  });

  it('matches shop names and tags in any letter case, non-ASCII included', async () => {
    const index = new StorefrontIndex();
    const row = buildRow(createRandom('one'), 17_000_000_000_001_024, 'a');
    index.upsert([{ ...row, shop_name: 'Ünderground', tags: ['COLOR_Schwarz'] }]);
    expect((await index.search({ sort: 'cursor:asc', offset: 0, limit: 10, shopName: 'üNDERGROUND' })).total).toBe(1);
    expect((await index.search({ sort: 'cursor:asc', offset: 0, limit: 10, filter: { type: 'compare', field: 'tags', operator: '=', value: 'color_schwarz' } })).total).toBe(1);
  });

  it('lets other work run while a costly filter is evaluated, and answers for the index as written meanwhile', async () => {
    const random = createRandom('slices');
    const index = new StorefrontIndex();
    let cursor = 17_000_000_000_000_000;
    const rows = Array.from({ length: 2_000 }, () => buildRow(random, (cursor += 1024), random.uuid()));
    index.upsert(rows);
    // Bounds on two columns: not an AND a range index counts alone (one column), nor a pair table's (two leaves).
    const leaves: FilterExpr[] = Array.from({ length: 90 }, (_, i) => ({ type: 'compare', field: i % 2 === 0 ? 'price_min' : 'price_max', operator: '>=', value: -i }));
    const filter: FilterExpr = { type: 'and', operands: leaves };
    // Other work: a task queued behind every turn the search yields (a timer of 1 ms could miss a
    // search that yields 90 times within that millisecond).
    let ranMeanwhile = 0;
    let ticking = true;
    const tick = (): void => {
      ranMeanwhile += 1;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    // Slices of 0 ms: the search yields before every leaf.
    const searching = index.search({ sort: 'cursor:asc', offset: 0, limit: 5, filter }, 0);
    // A product written while the search is under way, matching the filter, is in its answer.
    // Written after a few leaves: without starting again, their bitsets would lack it.
    setImmediate(() => setImmediate(() => setImmediate(() => index.upsert([{ ...buildRow(random, (cursor += 1024), 'late'), price_min: 10_000 }]))));
    const answer = await searching;
    ticking = false;
    const all = [...rows, { ...rows[0]!, cursor, price_min: 10_000 }];
    expect(answer.total).toBe(all.length);
    expect(ranMeanwhile).toBeGreaterThan(0);
  });

  it(`counts ANDs of bounds on one number column (and available) by its range index, exactly, through rewrites that move products between buckets or change their availability, and additions (seed ${SEED})`, async () => {
    const random = createRandom(`${SEED}:one-column`);
    let cursor = 17_000_000_000_000_000;
    const fresh = (n: number): StorefrontIndexRow[] => Array.from({ length: n }, () => ({ ...buildRow(random, (cursor += 1024), random.uuid()), price_display: random.int(0, 5000) / 10, updated_at: random.int(0, 2000) * 1000 }));
    let rows = fresh(6_000);
    const index = new StorefrontIndex();
    index.upsert(rows);
    index.prepare();
    const operators = ['<', '<=', '>', '>='] as const;
    // Bounds on a column no sort orders by, and on the two that sorts order by (whose pages, in
    // their own column's order, are one run of the order).
    const fields = ['price_display', 'updated_at', 'product_published_at'] as const;
    const bound = (field: (typeof fields)[number]): FilterExpr => {
      const value = random.chance(0.2) ? pick(random, rows)[field] : field === 'price_display' ? random.int(-10, 5010) / 10 : random.int(-1, 2001) * 1000 + pick(random, [0, 500]);
      return { type: 'compare', field, operator: pick(random, operators), value };
    };
    for (let round = 0; round < 3; round += 1) {
      // The first count asks for the column's bucket members (again once the range index is
      // rebuilt), made between requests: from then on counted.
      for (const field of fields) {
        const first: StorefrontSearch = { sort: 'cursor:asc', offset: 0, limit: 1, filter: { type: 'compare', field, operator: '<', value: 1 } };
        expect(await index.search(first)).toStrictEqual(plainSearch(rows, first));
      }
      await index.idle();
      for (let i = 0; i < 100; i += 1) {
        const field = pick(random, fields);
        const bounds = Array.from({ length: random.int(1, 3) }, () => bound(field));
        // Counted by the buckets' counts of available slots, on either side.
        if (random.chance(0.4)) bounds.splice(random.int(0, bounds.length), 0, { type: 'compare', field: 'available', operator: pick(random, ['=', '!='] as const), value: random.chance(0.5) });
        const search: StorefrontSearch = { sort: pick(random, SORTS), offset: random.int(0, 2) * 7, limit: random.int(1, 20), filter: bounds.length === 1 ? bounds[0]! : { type: 'and', operands: bounds } };
        expect(await index.search(search), JSON.stringify(search)).toStrictEqual(plainSearch(rows, search));
      }
      // Rewrites (new prices: other buckets; some the same) and new products past the index's build.
      const rewritten = rows.filter(() => random.chance(0.05)).map((row) => ({
        ...row,
        price_display: random.chance(0.2) ? row.price_display : random.int(0, 5000) / 10,
        updated_at: random.chance(0.5) ? row.updated_at : random.int(0, 2000) * 1000,
        available: random.chance(0.5) ? row.available : !row.available,
      }));
      const added = fresh(round === 1 ? 7_000 : 300);
      index.upsert([...rewritten, ...added]);
      const byCursor = new Map(rows.map((row) => [row.cursor, row]));
      for (const row of [...rewritten, ...added]) byCursor.set(row.cursor, row);
      rows = [...byCursor.values()].sort((a, b) => a.cursor - b.cursor);
    }
  });

  it('makes a column\'s bucket members of the column as it is when the task runs, after writes that grew it into a new array', async () => {
    const random = createRandom(`${SEED}:members-late`);
    let cursor = 17_000_000_000_000_000;
    const fresh = (n: number): StorefrontIndexRow[] => Array.from({ length: n }, () => ({ ...buildRow(random, (cursor += 1024), random.uuid()), price_display: random.int(0, 5000) / 10 }));
    let rows = fresh(3_000);
    const index = new StorefrontIndex();
    index.upsert(rows);
    // Built and trimmed to the products held: the next products move the column to a larger array.
    index.prepare();
    const bounded = (value: number, operator: '<' | '>='): StorefrontSearch => ({ sort: 'cursor:asc', offset: 0, limit: 5, filter: { type: 'compare', field: 'price_display', operator, value } });
    // The first count asks for the members, to be made between requests; writes come first.
    expect(await index.search(bounded(100, '<'))).toStrictEqual(plainSearch(rows, bounded(100, '<')));
    const added = fresh(1_000);
    const rewritten = rows.slice(0, 500).map((row) => ({ ...row, price_display: random.int(0, 5000) / 10 }));
    index.upsert([...rewritten, ...added]);
    rows = [...rewritten, ...rows.slice(500), ...added];
    await index.idle();
    for (let i = 0; i < 60; i += 1) {
      const search = bounded(random.int(0, 5000) / 10, pick(random, ['<', '>='] as const));
      expect(await index.search(search), JSON.stringify(search)).toStrictEqual(plainSearch(rows, search));
    }
    // Products that leave their bucket and come back (listed in it twice) count once.
    const there = rows.slice(0, 50);
    index.upsert(there.map((row) => ({ ...row, price_display: row.price_display < 250 ? 499 : 1 })));
    index.upsert(there);
    for (let i = 0; i < 30; i += 1) {
      // Bounds in those products' own buckets: the members a count checks one by one.
      const search = bounded(pick(random, there).price_display + 0.05, pick(random, ['<', '>='] as const));
      expect(await index.search(search), JSON.stringify(search)).toStrictEqual(plainSearch(rows, search));
    }
  });

  it(`answers a search led by short posting lists from those lists alone, like a plain evaluation, through rewrites (seed ${SEED})`, async () => {
    // Many products of common brands, shops and tags, and a few of rare ones: a search led by a
    // rare one costs its few entries, not a pass over the catalog.
    const random = createRandom(`${SEED}:sparse`);
    const rare = (kind: string, n: number): string => `${kind} Rare ${n}`;
    const rareRow = (row: StorefrontIndexRow): StorefrontIndexRow => {
      const n = random.int(0, 9);
      return { ...row, brand: random.chance(0.5) ? rare('Brand', n) : row.brand, shop_name: random.chance(0.5) ? rare('Shop', n) : row.shop_name, tags: random.chance(0.5) ? [...row.tags, rare('Tag', n)] : row.tags };
    };
    let cursor = 17_000_000_000_000_000;
    let rows = Array.from({ length: 12_000 }, (_, i) => {
      const row = buildRow(random, (cursor += 1024), `s${i}`);
      return random.chance(0.003) ? rareRow(row) : row;
    });
    const index = new StorefrontIndex();
    index.upsert(rows);
    index.prepare();
    const leading = (): FilterExpr => {
      const n = random.int(0, 9);
      switch (random.int(0, 3)) {
        case 0:
          return { type: 'compare', field: 'brand', operator: '=', value: rare('BRAND', n) };
        case 1:
          return { type: 'or', operands: [{ type: 'compare', field: 'brand', operator: '=', value: rare('Brand', n) }, { type: 'in', field: 'shop_name', values: [rare('Shop', (n + 1) % 10)], negated: false }] };
        case 2:
          return { type: 'in', field: 'tags', values: [rare('Tag', n), rare('tag', (n + 3) % 10)], negated: false };
        default:
          return { type: 'in', field: 'shop_name', values: [rare('Shop', n), 'Kicks Lab'], negated: false };
      }
    };
    for (let round = 0; round < 3; round += 1) {
      const before = index.sparseAnswers;
      let searches = 0;
      for (let i = 0; i < 120; i += 1) {
        const search: StorefrontSearch = { sort: pick(random, SORTS), offset: random.int(0, 2) * 3, limit: random.int(1, 10) };
        const lead = leading();
        search.filter = random.chance(0.6) ? { type: 'and', operands: [lead, buildFilter(random, rows)] } : lead;
        if (random.chance(0.2)) search.shopName = random.chance(0.5) ? rare('Shop', random.int(0, 9)) : 'Sneaker Hub';
        if (random.chance(0.2)) search.text = pick(random, ['air', 'nike dunk', 'ünder']);
        expect(await index.search(search), JSON.stringify(search)).toStrictEqual(plainSearch(rows, search));
        searches += 1;
      }
      // Many went the sparse way (the others have an operand it cannot check, or checks estimated
      // to cost more than the dense floor on a catalog this small).
      expect(index.sparseAnswers - before).toBeGreaterThan(searches / 10);
      // Rewrites move products into and out of the rare values (logged and stale posting entries).
      const rewritten = rows.filter(() => random.chance(0.005)).map((row) => (random.chance(0.5) ? rareRow(buildRow(random, row.cursor, row.id)) : buildRow(random, row.cursor, row.id)));
      index.upsert(rewritten);
      const byCursor = new Map(rows.map((row) => [row.cursor, row]));
      for (const row of rewritten) byCursor.set(row.cursor, row);
      rows = [...byCursor.values()];
    }
  });

  it('refuses a new cursor below one it already holds', () => {
    const index = new StorefrontIndex();
    const random = createRandom('order');
    index.upsert([buildRow(random, 17_000_000_000_002_048, 'b')]);
    expect(() => index.upsert([buildRow(random, 17_000_000_000_001_024, 'a')])).toThrow(/ascending cursors/u);
  });
});

describe('StorefrontIndex, edges of the data and of the cache', () => {
  const at = (i: number): number => 17_000_000_000_000_000 + (i + 1) * 1024;
  // Words shared by several tags, brands and types; tags of one word; a tag named like the first
  // brand word; ids that share one half of their 64-bit hash (p2pg/p151x the low, pext/pl30 the high).
  const crafted = (): StorefrontIndexRow[] => {
    const random = createRandom('crafted');
    const base = (i: number, fields: Partial<StorefrontIndexRow>): StorefrontIndexRow => ({ ...buildRow(random, at(i), `r${i}`), ...fields });
    return [
      base(0, { brand: 'Nike', product_type: 'Running Shoes', tags: ['NIKE', 'COLOR_Black', 'color_black'], id: 'p2pg', slug: 'ÄÖÜ', price_min: 10 }),
      base(1, { brand: 'Nike', product_type: 'Shoes', tags: ['Sale'], id: 'p151x', slug: 'a_b', price_min: 20 }),
      base(2, { brand: 'New Balance', product_type: 'Trail Running', tags: ['STYLE_Black', 'Ünique'], id: 'pext', slug: 'a?b', price_min: 30, shop_name: 'Kicks Lab' }),
      base(3, { brand: 'New Era', product_type: 'Caps', tags: [], id: 'pl30', slug: 'XYZ', price_min: 40, shop_name: 'Kicks Lab', title: 'Plain' }),
      base(4, { brand: 'Adidas', product_type: 'Shoes', tags: ['sale', 'season_ss24'], id: 'k1', slug: 'äöü-2', price_min: 50 }),
    ];
  };
  const page = (extra: Partial<StorefrontSearch>): StorefrontSearch => ({ sort: 'cursor:asc', offset: 0, limit: 100, ...extra });
  const compare = (field: FilterField, operator: '=' | '!=' | '<' | '<=' | '>' | '>=', value: FilterLiteral): FilterExpr => ({ type: 'compare', field, operator, value } as FilterExpr);
  const within = (field: FilterField, values: FilterLiteral[], negated = false): FilterExpr => ({ type: 'in', field, values, negated });
  const and = (...operands: FilterExpr[]): FilterExpr => ({ type: 'and', operands });
  const searches = (rows: StorefrontIndexRow[]): StorefrontSearch[] => [
    ...['nike', 'black', 'color', 'sale', 'unique', 'running', 'new', 'balance', 'era', 'kicks', 'lab', 'caps', 'season'].map((text) => page({ text })),
    page({ filter: compare('tags', '=', 'nike') }),
    page({ filter: compare('tags', '=', 'Color_Black') }),
    page({ filter: within('tags', ['sale', 'style_black']) }),
    page({ filter: within('price_min', [20, 40]) }),
    page({ filter: within('id', ['p2pg', 'PEXT']) }),
    ...['p2pg', 'p151x', 'pext', 'pl30', 'K1'].map((id) => page({ filter: compare('id', '=', id) })),
    ...['äöü', 'A_B', 'a?b', 'xyz'].map((slug) => page({ filter: compare('slug', '=', slug) })),
    // The same leaves narrowing a result in place (second operand of an AND).
    // (Upper case: leaves of their own, on their first use, as `id = 'p2pg'` above is not.)
    ...['P2PG', 'PL30', 'k1'].map((id) => page({ filter: and(compare('price_min', '>=', 0), compare('id', '=', id)) })),
    page({ text: 'shoes', filter: within('price_min', [10, 50]) }),
    page({ text: 'shoes', filter: within('id', ['P151X', 'K1']) }),
    page({ filter: and(compare('price_min', '>=', 0), within('id', ['p151x', 'pext'])) }),
    page({ filter: and(compare('price_min', '>=', 0), within('price_min', [10, 50])) }),
    page({ filter: and(compare('price_min', '>=', 0), compare('slug', '!=', 'a_b')) }),
    page({ filter: and({ type: 'or', operands: [compare('brand', '=', 'nike'), compare('brand', '=', 'adidas')] }, and(compare('price_min', '>', 10), compare('tags', '=', 'sale'))) }),
    page({ filter: within('available', [true, false]) }),
    page({ filter: within('cursor', [rows[0]!.cursor, rows[2]!.cursor, 5]) }),
  ];

  it('answers words of tags, brands and product types, and hashed and multi-value leaves, like a plain evaluation, before and after a snapshot', async () => {
    const rows = crafted();
    const index = new StorefrontIndex();
    // Any iterable, not only arrays.
    index.upsert(rows.slice(0, 3).values());
    index.upsert(rows.slice(3));
    for (const search of searches(rows)) expect(await index.search(search), JSON.stringify(search)).toStrictEqual(plainSearch(rows, search));
    // A snapshot taken with every write still in the posting lists' logs.
    const fresh = new StorefrontIndex();
    fresh.upsert(rows);
    const restored = StorefrontIndex.fromState(fresh.state());
    for (const search of searches(rows)) expect(await restored.search(search), JSON.stringify(search)).toStrictEqual(plainSearch(rows, search));
    const more = [...rows, { ...rows[2]!, cursor: at(9), id: 'r9', tags: ['COLOR_Black', 'Sale'] }];
    restored.upsert(more.slice(rows.length));
    for (const search of searches(more)) expect(await restored.search(search), JSON.stringify(search)).toStrictEqual(plainSearch(more, search));
  });

  it('forgets tags and brands a rewrite took away, once the posting lists were compacted', async () => {
    const rows = crafted();
    const index = new StorefrontIndex();
    index.upsert(rows);
    index.prepare();
    const rewritten = rows.map((row, i) => (i === 0 ? { ...row, tags: ['Plain'], brand: 'Puma' } : row));
    index.upsert([rewritten[0]!]);
    for (const search of [page({ filter: compare('tags', '=', 'nike') }), page({ filter: compare('brand', '=', 'Nike') }), page({ text: 'black' }), page({ text: 'puma' })]) {
      expect(await index.search(search), JSON.stringify(search)).toStrictEqual(plainSearch(rewritten, search));
    }
  });

  it('takes a new cursor above negative ones, zero included', async () => {
    const random = createRandom('negative');
    const index = new StorefrontIndex();
    index.upsert([{ ...buildRow(random, -5, 'a'), price_min: 1 }]);
    index.upsert([{ ...buildRow(random, 0, 'b'), price_min: 2 }]);
    expect(index.size).toBe(2);
    expect(await index.search(page({}))).toStrictEqual({ cursors: [-5, 0], total: 2 });
  });

  it('refuses a state whose arrays are out of order or left over', () => {
    const index = new StorefrontIndex();
    index.upsert(crafted());
    const state = index.state();
    const swapped = [...state.arrays];
    [swapped[0], swapped[8]] = [swapped[8]!, swapped[0]!];
    expect(() => StorefrontIndex.fromState({ ...state, arrays: swapped })).toThrow('storefront index state: arrays out of order');
    expect(() => StorefrontIndex.fromState({ ...state, arrays: [...state.arrays, new Int32Array(1)] })).toThrow('storefront index state: arrays left over');
  });

  it('counts the stale entries of rewritten tag and title lists in its state, and drops them once they outweigh the live ones', async () => {
    // One product with 63 distinct tags (one given twice) and a title of 63 words: each list is 64
    // entries. Rewritten with one tag and one word other each time, after r rewrites 64 r entries
    // are stale; they are dropped once 64 r > 64 (r + 1) / 2 + 4096, that is from the 130th rewrite.
    // A rewrite with the same terms (new prices, say) leaves the lists as they are.
    const random = createRandom('garbage');
    const version = (first: string): StorefrontIndexRow => {
      const words = [first, ...Array.from({ length: 62 }, (_, i) => `w${i + 1}`)];
      return { ...buildRow(random, at(0), 'g'), tags: [...words.map((word) => `tag_${word}`), `TAG_${first.toUpperCase()}`], title: words.join(' ') };
    };
    const [a, b] = [version('w0'), version('v0')];
    const index = new StorefrontIndex();
    index.upsert([a]);
    const lists = (): { garbage: [number, number]; used: [number, number] } => {
      const state = index.state();
      return { garbage: state.garbage, used: [state.arrays[16]!.length, state.arrays[18]!.length] };
    };
    expect(lists()).toStrictEqual({ garbage: [0, 0], used: [64, 64] });
    index.upsert([{ ...a, price_min: a.price_min + 1 }]);
    expect(lists()).toStrictEqual({ garbage: [0, 0], used: [64, 64] });
    index.upsert([b]);
    expect(lists()).toStrictEqual({ garbage: [64, 64], used: [128, 128] });
    index.upsert(Array.from({ length: 128 }, (_, i) => (i % 2 === 0 ? a : b)));
    expect(lists()).toStrictEqual({ garbage: [129 * 64, 129 * 64], used: [130 * 64, 130 * 64] });
    index.upsert([a]);
    expect(lists()).toStrictEqual({ garbage: [0, 0], used: [64, 64] });
    expect(await index.search({ text: 'w0', sort: 'cursor:asc', offset: 0, limit: 20 })).toStrictEqual({ cursors: [a.cursor], total: 1 });
    expect(await index.search({ text: 'v0', sort: 'cursor:asc', offset: 0, limit: 20 })).toStrictEqual({ cursors: [], total: 0 });
  });

  it('gives back the room its columns and term buffers grew into, and keeps one tag kind per term', async () => {
    // Rows of new title words past the first 1,024 and 2,048 terms, and new tags after them.
    const random = createRandom('room');
    const words = (prefix: string, n: number): string => Array.from({ length: n }, (_, i) => `${prefix}${i}`).join(' ');
    const plain = (i: number, fields: Partial<StorefrontIndexRow>): StorefrontIndexRow => ({ ...buildRow(random, at(i), `t${i}`), brand: 'b', product_type: 't', tags: [], title: 'w0', ...fields });
    const rows = [plain(0, { title: words('w', 1021) }), plain(1, { tags: ['Alpha_Beta'] }), plain(2, { title: words('x', 1100) }), plain(3, { tags: ['Gamma'] })];
    for (let i = 4; i < 1_500; i += 1) rows.push(plain(i, {}));
    // A tag whose words are new terms past the tag kinds' first 1,024: one kind per term even then.
    const first = new StorefrontIndex();
    for (const row of rows.slice(0, 2)) first.upsert([row]);
    const early = first.state().arrays;
    expect(early[20]!.length).toBe(early[23]!.length);
    const index = new StorefrontIndex();
    for (const row of rows.slice(0, 4)) index.upsert([row]);
    index.upsert(rows.slice(4));
    for (const text of ['gamma', 'alpha', 'beta']) expect(await index.search(page({ text })), text).toStrictEqual(plainSearch(rows, page({ text })));
    index.prepare();
    const { size, arrays } = index.state();
    const room = (length: number): number => Math.max(1024, length + (length >>> 3));
    const slots = (array: ArrayBufferView & { BYTES_PER_ELEMENT: number }): number => array.buffer.byteLength / array.BYTES_PER_ELEMENT;
    const capacity = slots(arrays[0] as Float64Array);
    expect(capacity).toBeLessThanOrEqual(room(size));
    // Every per-product column has room for the same number of products as the cursors.
    for (const column of [...arrays.slice(1, 8), ...arrays.slice(9, 12), arrays[17]!, arrays[19]!]) expect(slots(column)).toBe(capacity);
    for (const hashes of arrays.slice(12, 16)) expect(slots(hashes)).toBe(2 * capacity);
    // `available` lives in the kernels' arena (a view into its memory): there, the index keeps exactly its words.
    expect(inArena(arrays[8] as Uint32Array)).toBe(true);
    // Tag and title lists, the term bytes and the tag kinds: at most an eighth more than they hold.
    for (const held of [arrays[16]!, arrays[18]!, arrays[20]!, arrays[22]!, arrays[23]!]) expect(slots(held)).toBeLessThanOrEqual(room(held.length));
    expect(arrays[21]!.buffer.byteLength).toBeLessThanOrEqual(arrays[21]!.length + (arrays[21]!.length >>> 3) + 1024);
    expect(arrays[20]!.length).toBe(arrays[23]!.length);
  });

  it('lists each tag once under each of its other words in its state', () => {
    const index = new StorefrontIndex();
    const rows = crafted();
    index.upsert(rows);
    index.upsert(rows);
    const { tagsByWord } = index.state();
    const expected = new Map<string, Set<string>>();
    for (const tag of new Set(rows.flatMap((row) => row.tags.map(foldText)))) {
      for (const word of new Set(wordsOf(tag))) if (word !== tag) expected.set(word, (expected.get(word) ?? new Set()).add(tag));
    }
    expect(tagsByWord.length).toBe(expected.size);
    expect(tagsByWord.map(([, tags]) => tags.length).sort()).toStrictEqual([...expected.values()].map((tags) => tags.size).sort());
    for (const [word, tags] of tagsByWord) {
      expect(Number.isInteger(word)).toBe(true);
      expect(tags.every(Number.isInteger) && new Set(tags).size === tags.length).toBe(true);
    }
  });

  it('publishes one leaf-cache look-up per keyed leaf use, none for available and cursor leaves, and skips leaves once a result is empty', async () => {
    const rows = crafted();
    const index = new StorefrontIndex();
    index.upsert(rows);
    const tally = async (search: StorefrontSearch): Promise<{ hits: number; lookups: number }> => {
      // A server turns its event loop between requests: what waits to be kept is made there.
      await index.idle();
      const before = index.leafCacheStats.leaf;
      expect(await index.search(search), JSON.stringify(search)).toStrictEqual(plainSearch(rows, search));
      const after = index.leafCacheStats.leaf;
      return { hits: after.hits - before.hits, lookups: after.lookups - before.lookups };
    };
    const keyed = page({ filter: and(within('brand', ['Nike', 'Adidas']), compare('available', '=', true), compare('cursor', '>=', rows[1]!.cursor), compare('price_min', '>', 15), compare('id', '!=', 'k1')) });
    // Noted, kept, then read: three look-ups each time (brand, price_min, id), hits from the third use.
    expect(await tally(keyed)).toStrictEqual({ hits: 0, lookups: 3 });
    expect(await tally(keyed)).toStrictEqual({ hits: 0, lookups: 3 });
    expect(await tally(keyed)).toStrictEqual({ hits: 3, lookups: 3 });
    // A write keeps what is kept (each bitset follows the product written): still read.
    rows[0] = { ...rows[0]!, price_min: 16, id: 'k1' };
    index.upsert([rows[0]]);
    expect(await tally(keyed)).toStrictEqual({ hits: 3, lookups: 3 });
    // Empty results end the work: an unknown word, an unknown shop, an empty first operand, an
    // empty nested AND.
    expect(await tally(page({ text: 'nothing nike sale', filter: compare('price_min', '>', 0) }))).toStrictEqual({ hits: 0, lookups: 1 });
    // An unknown shop or brand leads with no posting entry: answered from those lists, no leaf looked up.
    const sparseBefore = index.sparseAnswers;
    expect(await tally(page({ shopName: 'Nowhere', filter: compare('price_min', '>', 0) }))).toStrictEqual({ hits: 0, lookups: 0 });
    expect(await tally(page({ filter: and(compare('brand', '=', 'Nobody'), compare('price_min', '>', 1), compare('slug', '=', 'xyz')) }))).toStrictEqual({ hits: 0, lookups: 0 });
    expect(index.sparseAnswers - sparseBefore).toBe(2);
    // Led by no posting list: the dense path, which stops at the empty cursor range before any keyed leaf.
    expect(await tally(page({ filter: and(compare('slug', '=', 'xyz'), compare('price_min', '>', 1), compare('cursor', '>', at(1_000_000))) }))).toStrictEqual({ hits: 0, lookups: 0 });
    const nested = and({ type: 'or', operands: [compare('id', '=', 'p2pg'), compare('id', '=', 'pl30')] }, and(compare('brand', '=', 'Adidas'), compare('tags', '=', 'sale')));
    expect(await tally(page({ filter: nested }))).toStrictEqual({ hits: 0, lookups: 3 });
    // A leaf that narrows in place on its first use is kept whole on its second and read on its third.
    const narrowed = page({ filter: and(compare('brand', '=', 'Nike'), compare('slug', '=', 'a_b'), compare('price_min', '<=', 20), within('id', ['p151x', 'k1'])) });
    expect(await tally(narrowed)).toStrictEqual({ hits: 0, lookups: 4 });
    expect(await tally(narrowed)).toStrictEqual({ hits: 0, lookups: 4 });
    expect(await tally(narrowed)).toStrictEqual({ hits: 4, lookups: 4 });
  });

  it('answers at once a search whose words, shop and AND operands are all kept, more than three of them', async () => {
    const rows = crafted().map((row, i) => (i === 0 ? { ...row, available: true } : row));
    const index = new StorefrontIndex();
    index.upsert(rows);
    // The first product matches every part: no part is skipped on an empty result.
    const search = page({ text: 'running shoes', shopName: rows[0]!.shop_name, filter: and(within('brand', ['Nike', 'New Balance']), compare('available', '=', true), compare('price_min', '>=', 10), compare('tags', '!=', 'sale')) });
    // Noted, admitted (keeps made between searches), then every part is at hand.
    for (let use = 0; use < 2; use += 1) {
      expect(await index.search(search)).toStrictEqual(plainSearch(rows, search));
      await index.idle();
    }
    const hits = index.leafCacheStats.leaf.hits;
    let answered = false;
    const pending = index.search(search, 0).then((answer) => ((answered = true), answer));
    await Promise.resolve();
    await Promise.resolve();
    expect(answered).toBe(true);
    expect(await pending).toStrictEqual(plainSearch(rows, search));
    // Two words, the shop and three keyed leaves, each read once.
    expect(index.leafCacheStats.leaf.hits - hits).toBe(6);
  });

  it('answers an AND whose kept leaf other searches put out of the cache, and reused, while it yielded', async () => {
    const rows = crafted();
    const index = new StorefrontIndex();
    index.upsert(rows);
    const nike = compare('brand', '=', 'Nike');
    // Noted, then kept: from now on the AND below reads it as a ready operand, after its range leaf.
    await index.search(page({ filter: nike }));
    await index.search(page({ filter: nike }));
    const search = page({ filter: and(nike, compare('price_min', '>', 15)) });
    // Slices of no time: it yields at its range leaf, before it reads the kept leaf.
    const yielding = index.search(search, 0);
    // Meanwhile (searches that never yield, so all of this runs before it resumes): over 4,096 new
    // keys put the leaf out; then another leaf kept takes its bitset.
    const whole = Number.POSITIVE_INFINITY;
    await Promise.all(Array.from({ length: 4_200 }, (_, i) => index.search(page({ filter: compare('id', '=', `none${i}`) }), whole)));
    const other = page({ filter: compare('slug', '=', 'XYZ') });
    await index.search(other, whole);
    await index.search(other, whole);
    expect(await yielding).toStrictEqual(plainSearch(rows, search));
    expect(await index.search(other)).toStrictEqual(plainSearch(rows, other));
  });

  it('keeps the slots under a range bound’s bucket and the next from their second use, counted as bucket look-ups, and then answers from the one it needs', async () => {
    const random = createRandom(`${SEED}-bucket-tally`);
    const rows = Array.from({ length: 3_000 }, (_, i) => ({ ...buildRow(random, at(i), random.uuid()), price_min: i / 10 }));
    const index = new StorefrontIndex();
    index.upsert(rows);
    // Three bounds never seen before, in one bucket: the first notes the two buckets, the second
    // keeps them; the third is answered from the slots under its bucket and the bucket's own
    // members, with no look-up of the next bucket. Each leaf is looked up once. (With `available
    // = true` twice, whose bitset is at hand: a bound alone, or with one equality on `available`,
    // is counted by the range index with no bitset.)
    const bounded = (value: number): StorefrontSearch => page({ filter: and(compare('price_min', '<', value), compare('available', '=', true), compare('available', '=', true)) });
    for (const value of [150.01, 150.02, 150.03]) {
      const search = bounded(value);
      expect(await index.search(search)).toStrictEqual(plainSearch(rows, search));
      await index.idle();
    }
    expect(index.leafCacheStats).toStrictEqual({ leaf: { hits: 0, lookups: 3 }, bucket: { hits: 1, lookups: 5 } });
    // A leaf used again from there is kept whole on its second use, made from those parts, and
    // read on its third.
    const again = bounded(150.03);
    for (let use = 0; use < 2; use += 1) {
      expect(await index.search(again)).toStrictEqual(plainSearch(rows, again));
      await index.idle();
    }
    expect(index.leafCacheStats).toStrictEqual({ leaf: { hits: 1, lookups: 5 }, bucket: { hits: 2, lookups: 6 } });
  });

  it('looks up only the slots under the bucket of a bound in the last bucket: there is no next one', async () => {
    const random = createRandom(`${SEED}-last-bucket`);
    const rows = Array.from({ length: 3_000 }, (_, i) => ({ ...buildRow(random, at(i), random.uuid()), price_min: i / 10 }));
    const index = new StorefrontIndex();
    index.upsert(rows);
    for (const value of [299.91, 299.92, 299.93]) {
      // `available = true` twice: not the one-column count's shape (see above).
      const search = page({ filter: and(compare('price_min', '<', value), compare('available', '=', true), compare('available', '=', true)) });
      expect(await index.search(search)).toStrictEqual(plainSearch(rows, search));
      await index.idle();
    }
    expect(index.leafCacheStats.bucket).toStrictEqual({ hits: 1, lookups: 3 });
  });

  it('does not count the look-ups of a search written to before it used the cache, only those of its new start', async () => {
    const rows = crafted();
    const index = new StorefrontIndex();
    index.upsert(rows);
    const search = page({ filter: { type: 'or', operands: [compare('brand', '=', 'Nike'), compare('price_min', '>', 35), compare('tags', '=', 'sale')] } });
    const before = index.leafCacheStats.leaf.lookups;
    // Slices of 0 ms: it yields before its first leaf, and the write lands then.
    const pending = index.search(search, 0);
    const more = [...rows, { ...rows[0]!, cursor: at(9), id: 'late' }];
    index.upsert(more.slice(rows.length));
    expect(await pending).toStrictEqual(plainSearch(more, search));
    expect(index.leafCacheStats.leaf.lookups - before).toBe(3);
  });

  it('does not yield before it has worked a slice: a write scheduled meanwhile is not in its answer', async () => {
    const rows = crafted();
    const index = new StorefrontIndex();
    index.upsert(rows);
    const search = page({ filter: { type: 'or', operands: [compare('brand', '=', 'Nike'), compare('price_min', '>', 35)] } });
    const pending = index.search(search, 500);
    setImmediate(() => index.upsert([{ ...rows[0]!, cursor: at(9), id: 'late' }]));
    expect(await pending).toStrictEqual(plainSearch(rows, search));
  });
});
