// How the storefront index's cost grows with the catalog: for each size, the seed's storefront
// products in a StorefrontIndex in this process, then distinct searches (no two alike) of several
// kinds, one at a time, with p50 and p99 per kind. The index is what grows with the catalog; the
// rest of a request (routing, documents for one page, the envelope) does not, and is measured over
// HTTP by distinct-bench.ts. Reports; asserts nothing.
//
//   node bench/storefront-scale-bench.ts [--sizes 100000,300000,1000000] [--requests 2000] [--seed S]
import { parseArgs } from 'node:util';
import type { FilterExpr } from '../src/catalog/filter/ast.ts';
import { parseFilter } from '../src/catalog/filter/parse-filter.ts';
import type { StorefrontSort } from '../src/catalog/model.ts';
import { generateStorefrontProducts } from '../src/catalog/seed/generate-catalog.ts';
import { StorefrontIndex, type StorefrontIndexRow, type StorefrontSearch } from '../src/catalog/storefront-index.ts';
import { progress } from './lib/processes.ts';


export interface ScaleRow {
  size: number;
  loadSeconds: number;
  heapMiB: number;
  /** Typed arrays' memory, outside the heap. */
  arrayBuffersMiB: number;
  rssMiB: number;
  kinds: { kind: string; p50: number; p99: number; meanTotal: number }[];
}

const SORTS: StorefrontSort[] = ['cursor:asc', 'cursor:desc', 'updated_at:desc', 'published_at:desc'];
const TAGS = ['COLOR_BLACK', 'COLOR_WHITE', 'STYLE_RUNNER', 'SEASON_SS24', 'TOETYPE_ROUND', 'AUTO_LACES', 'HEELTYPE_FLAT'];
const WORDS = ['air', 'runner', 'black', 'low', 'retro', 'boot', 'white', 'max', 'classic', 'trail'];

/** Distinct searches of each kind; the i-th of a kind differs from every other. */
export const KINDS: Record<string, (i: number) => { filter?: string; text?: string; sort?: StorefrontSort }> = {
  'price_min >= X AND price_max <= Y AND available = true': (i) => ({ filter: `price_min >= ${20 + (i % 100)} AND price_max <= ${150 + Math.floor(i / 100) * 5} AND available = true` }),
  'the same, sorted by updated_at desc': (i) => ({ filter: `price_min >= ${20 + (i % 100)} AND price_max <= ${150 + Math.floor(i / 100) * 5} AND available = true`, sort: 'updated_at:desc' }),
  'tags IN (3) AND price_display < X': (i) => ({ filter: `tags IN [${[0, 1, 2].map((k) => TAGS[(i + k * 3) % TAGS.length]).join(', ')}] AND price_display < ${60 + i}` }),
  'text query of two words, any sort': (i) => ({ text: `${WORDS[i % WORDS.length]} ${WORDS[(i * 7 + 3) % WORDS.length]}`, sort: SORTS[i % SORTS.length]!, filter: `price_max > ${i % 300}` }),
  'NOT (brand = B) AND updated_at > T OR cursor < C': (i) => ({ filter: `NOT brand = Nike AND product_published_at > ${new Date(1_672_531_200_000 + (i % 20_000) * 3_600_000).toISOString()} OR cursor < ${17_000_000_000_000_000 + (i % 5_000) * 1024 * 50}` }),
};

function indexRow(product: ReturnType<typeof generateStorefrontProducts> extends Iterable<infer T> ? T : never, cursor: number): StorefrontIndexRow {
  const published = Date.parse(product.product_published_at);
  return {
    cursor,
    id: product.id,
    product_id: product.product_id,
    shop_name: product.shop_name,
    brand: product.brand,
    product_type: product.product_type,
    title: product.title,
    slug: product.slug,
    price_min: product.price_min,
    price_max: product.price_max,
    price_display: product.price_display,
    available: product.available,
    created_at: published + 1_000,
    updated_at: published + (cursor % 997) * 60_000,
    product_created_at: Date.parse(product.product_created_at),
    product_published_at: published,
    tags: product.tags,
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export async function measureScale(size: number, requests = 2_000, seed = '7'): Promise<ScaleRow> {
  const started = performance.now();
  const index = new StorefrontIndex();
  let cursor = 17_000_000_000_000_000;
  let batch: StorefrontIndexRow[] = [];
  let done = 0;
  // Catalog products are twice the storefront's: the seed makes N/2 storefront products.
  for (const product of generateStorefrontProducts({ products: size * 2, seed })) {
    batch.push(indexRow(product, (cursor += 1024)));
    if (batch.length === 10_000) {
      index.upsert(batch);
      done += batch.length;
      batch = [];
      if (done % 100_000 === 0) progress(`storefront scale: loading ${done}/${size}`);
    }
  }
  index.upsert(batch);
  // As the server does at start (IndexedCatalogStore.warm).
  index.prepare();
  const loadSeconds = (performance.now() - started) / 1000;
  globalThis.gc?.();
  const memory = process.memoryUsage();
  const heapMiB = memory.heapUsed / 2 ** 20;
  const arrayBuffersMiB = memory.arrayBuffers / 2 ** 20;
  const rssMiB = memory.rss / 2 ** 20;
  const kinds: ScaleRow['kinds'] = [];
  for (const [kind, make] of Object.entries(KINDS)) {
    const searches: StorefrontSearch[] = Array.from({ length: requests }, (_, i) => {
      const spec = make(i);
      return {
        sort: spec.sort ?? 'cursor:asc',
        offset: 0,
        limit: 20,
        ...(spec.text === undefined ? {} : { text: spec.text }),
        ...(spec.filter === undefined ? {} : { filter: parseFilter(spec.filter) as FilterExpr }),
      };
    });
    // A first search of each sort builds what the kind needs once (sort orders, range indexes), as
    // the first requests after start would.
    for (const sort of SORTS) await index.search({ ...searches[0]!, sort });
    const times: number[] = [];
    let totals = 0;
    for (const search of searches) {
      const t0 = performance.now();
      const { total } = await index.search(search);
      times.push(performance.now() - t0);
      totals += total;
    }
    times.sort((a, b) => a - b);
    kinds.push({ kind, p50: percentile(times, 50), p99: percentile(times, 99), meanTotal: Math.round(totals / searches.length) });
    progress(`storefront scale: ${size} ${kind}: p50 ${percentile(times, 50).toFixed(2)} ms, p99 ${percentile(times, 99).toFixed(2)} ms`);
  }
  return { size, loadSeconds, heapMiB, arrayBuffersMiB, rssMiB, kinds };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { sizes: { type: 'string' }, requests: { type: 'string' }, seed: { type: 'string' } } });
  const sizes = (values.sizes ?? '100000,300000,1000000').split(',').map(Number);
  const rows: ScaleRow[] = [];
  for (const size of sizes) rows.push(await measureScale(size, Number(values.requests ?? 2_000), values.seed ?? '7'));
  process.stdout.write(`| search kind | ${rows.map((row) => `${row.size.toLocaleString('en')} p50 / p99 ms`).join(' | ')} |\n`);
  process.stdout.write(`| --- | ${rows.map(() => '---').join(' | ')} |\n`);
  for (const kind of Object.keys(KINDS)) {
    process.stdout.write(`| ${kind} | ${rows.map((row) => { const k = row.kinds.find((entry) => entry.kind === kind)!; return `${k.p50.toFixed(2)} / ${k.p99.toFixed(2)} (${k.meanTotal.toLocaleString('en')} matches)`; }).join(' | ')} |\n`);
  }
  process.stdout.write(`| load s, heap + array buffers MiB, RSS MiB | ${rows.map((row) => `${row.loadSeconds.toFixed(1)}, ${row.heapMiB.toFixed(0)} + ${row.arrayBuffersMiB.toFixed(0)}, ${row.rssMiB.toFixed(0)}`).join(' | ')} |\n`);
}
