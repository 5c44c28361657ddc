// What a write costs the storefront index and the searches after it (issue 50: structures kept
// through writes). In one process per checkout given: N synthetic storefront products in a
// StorefrontIndex, prepared; a fixed set of searches (brand, shop, tag and two-price-bound ANDs)
// run until their leaves are kept and their pair table built; then, K times, a write batch (two
// thirds rewrites of random products, one third new products) and the same searches again, between
// requests' idle work as a server turns its event loop. Reports the write's time, the searches'
// time after it (a structure a write drops is rebuilt by them), and the leaf cache's and the pair
// tables' counters. Asserts nothing.
//
//   node bench/index-writes-bench.ts [--roots /work/before,/work/after] [--size 1000000] [--batches 1,100] [--writes 60]
// A root is a checkout (its packages/server/src is imported); the default is this one.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { FilterExpr } from '../src/catalog/filter/ast.ts';
import { createRandom, type Random } from '../src/catalog/seed/prng.ts';
import type { StorefrontIndexRow, StorefrontSearch } from '../src/catalog/storefront-index.ts';
import { SERVER_DIR } from './lib/processes.ts';

const SHOPS = ['Sneaker Hub', 'Kicks Lab', 'Sneakerbox Zürich', 'Solebox', 'Footpatrol', 'Overkill'];
const BRANDS = ['Nike', 'adidas', 'New Balance', 'Asics', 'Puma', 'Salomon', 'Hoka', 'On'];
const TAGS = ['COLOR_Black', 'COLOR_White', 'SEASON_SS24', 'STYLE_Runner', 'TOETYPE_Round', 'AUTO_Laces'];

function rowOf(random: Random, cursor: number, id: string): StorefrontIndexRow {
  const pick = <T>(values: readonly T[]): T => values[random.int(0, values.length - 1)]!;
  return {
    cursor,
    id,
    product_id: `p${random.int(1, 100_000)}`,
    shop_name: pick(SHOPS),
    brand: pick(BRANDS),
    product_type: pick(['Shoes', 'Apparel', 'Accessories']),
    title: `${pick(BRANDS)} ${pick(['Air', 'Gel', 'Trail', 'Classic'])} ${random.int(1, 99)}`,
    slug: id,
    price_min: random.int(0, 100_000) / 100,
    price_max: random.int(0, 100_000) / 100,
    price_display: random.int(0, 100_000) / 100,
    available: random.chance(0.6),
    created_at: 1_672_531_200_000 + random.int(0, 1_000_000_000),
    updated_at: 1_672_531_200_000 + random.int(0, 1_000_000_000),
    product_created_at: 1_672_531_200_000 + random.int(0, 1_000_000_000),
    product_published_at: 1_672_531_200_000 + random.int(0, 1_000_000_000),
    tags: Array.from({ length: random.int(0, 3) }, () => pick(TAGS)),
  };
}

interface Result {
  root: string;
  size: number;
  batch: number;
  writeP50: number;
  writeP90: number;
  searchesP50: number;
  searchesP90: number;
  leafHits: number;
  leafLookups: number;
  pairBuilds: number;
}

async function measure(root: string, size: number, batch: number, writes: number): Promise<Result> {
  const { StorefrontIndex } = (await import(join(root, 'packages/server/src/catalog/storefront-index.ts'))) as typeof import('../src/catalog/storefront-index.ts');
  const random = createRandom('index-writes');
  const index = new StorefrontIndex();
  let cursor = 17_000_000_000_000_000;
  for (let done = 0; done < size; done += 50_000) index.upsert(Array.from({ length: Math.min(50_000, size - done) }, (_, i) => rowOf(random, (cursor += 1024), `sp${done + i}`)));
  index.prepare();
  const first = 17_000_000_000_000_000 + 1024;
  const compare = (field: string, operator: string, value: unknown): never => ({ type: 'compare', field, operator, value }) as never;
  const and = (...operands: never[]): FilterExpr => ({ type: 'and', operands });
  const searches: StorefrontSearch[] = [
    ...BRANDS.map((brand) => ({ sort: 'cursor:asc' as const, offset: 0, limit: 20, filter: and(compare('brand', '=', brand), compare('available', '=', true)) })),
    ...SHOPS.map((shop) => ({ sort: 'updated_at:desc' as const, offset: 0, limit: 20, filter: and(compare('shop_name', '=', shop), compare('price_min', '>', 300)) })),
    ...TAGS.map((tag) => ({ sort: 'cursor:asc' as const, offset: 0, limit: 20, filter: and(compare('tags', '=', tag), compare('price_display', '<', 500)) })),
    ...[100, 250, 400, 550, 700, 850].map((low) => ({ sort: 'cursor:asc' as const, offset: 0, limit: 20, filter: and(compare('price_min', '>=', low), compare('price_max', '<=', low + 120), compare('available', '=', true)) })),
  ];
  const runAll = async (): Promise<number> => {
    const started = performance.now();
    for (const search of searches) await index.search(search);
    return performance.now() - started;
  };
  for (let warm = 0; warm < 4; warm += 1) {
    await runAll();
    await index.idle();
  }
  const before = { leaf: index.leafCacheStats.leaf, builds: index.pairCountStats.builds };
  const writeMs: number[] = [];
  const searchMs: number[] = [];
  for (let k = 0; k < writes; k += 1) {
    const rows = Array.from({ length: batch }, (_, b) => ((k * batch + b) % 3 === 2 ? rowOf(random, (cursor += 1024), `sn${k}-${b}`) : rowOf(random, first + 1024 * random.int(0, size - 1), `sr${k}-${b}`)));
    const started = performance.now();
    index.upsert(rows);
    writeMs.push(performance.now() - started);
    searchMs.push(await runAll());
    await index.idle();
  }
  const at = (values: number[], q: number): number => [...values].sort((a, b) => a - b)[Math.floor(values.length * q)]!;
  const leaf = index.leafCacheStats.leaf;
  return {
    root,
    size,
    batch,
    writeP50: at(writeMs, 0.5),
    writeP90: at(writeMs, 0.9),
    searchesP50: at(searchMs, 0.5),
    searchesP90: at(searchMs, 0.9),
    leafHits: leaf.hits - before.leaf.hits,
    leafLookups: leaf.lookups - before.leaf.lookups,
    pairBuilds: index.pairCountStats.builds - before.builds,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { roots: { type: 'string' }, size: { type: 'string', default: '1000000' }, batches: { type: 'string', default: '1,100' }, writes: { type: 'string', default: '60' }, one: { type: 'string' } } });
  const size = Number(values.size);
  const writes = Number(values.writes);
  if (values.one !== undefined) {
    const [root, batch] = JSON.parse(values.one) as [string, number];
    process.stdout.write(JSON.stringify(await measure(root, size, batch, writes)));
  } else {
    const roots = (values.roots ?? join(SERVER_DIR, '..', '..')).split(',');
    console.log(`| checkout | products | rows per write | write p50 / p90 ms | the 26 searches after it p50 / p90 ms | leaf hits / look-ups after writes | pair tables built after writes |`);
    console.log('| --- | --- | --- | --- | --- | --- | --- |');
    for (const batch of values.batches.split(',').map(Number)) {
      for (const root of roots) {
        // Each in a process of its own: a fresh heap and arena per checkout.
        const child = spawnSync(process.execPath, ['--max-old-space-size=8000', process.argv[1]!, '--size', String(size), '--writes', String(writes), '--one', JSON.stringify([root, batch])], { encoding: 'utf8', maxBuffer: 1 << 20 });
        if (child.status !== 0) throw new Error(`${root}: ${child.stderr}`);
        const r = JSON.parse(child.stdout) as Result;
        console.log(`| ${r.root} | ${r.size.toLocaleString('en')} | ${r.batch} | ${r.writeP50.toFixed(2)} / ${r.writeP90.toFixed(2)} | ${r.searchesP50.toFixed(2)} / ${r.searchesP90.toFixed(2)} | ${r.leafHits} / ${r.leafLookups} | ${r.pairBuilds} |`);
      }
    }
  }
}
