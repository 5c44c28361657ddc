// Filter shapes over HTTP (issue 50): ten shapes of storefront filter, each as thousands of
// distinct filters built from the served catalog's own vocabulary (shops, brands, product types,
// tags, prices and instants of products sampled through the API), measured for each server CLI
// given (so a before and an after run in one process) on one database, each from a fresh start:
// (a) one at a time on one kept-alive connection (p50/p99, and the same client's p99 against a bare
// node:http server replaying the same answers: the client's and the transport's own tail), and
// (b) at 50 connections, in rounds alternated with the bare server replaying (a)'s answers in turn
// (the ratio).
// (a) and (b) send disjoint filters, and (b) sends none twice unless it outruns the shape's
// vocabulary (the table says how often each was sent). Every filter is checked by the service's own
// parser before the run and built around a sampled product it matches, so pages are rarely empty;
// answers other than 2xx are counted, never dropped. Reports; asserts nothing.
//
//   node bench/shapes-bench.ts --db sqlite:/tmp/sf.db|postgres://… [--cli A.ts,B.ts] [--seconds 6] [--rounds 2] [--connections 50] [--requests 300] [--filters 20000] [--shapes 1,5,9]
//       [--write-paths DIR]   (each shape's load paths and a key, for bench/in-process-bench.ts; nothing measured)
// The database must hold storefront products (`catalog seed --storefront-products N`, or
// `catalog import --kind storefront`); the bench creates its own key.
import type { StorefrontProduct, StorefrontProductList, StorefrontSort } from '@catalog/contract';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseFilter } from '../src/catalog/filter/parse-filter.ts';
import { createRandom, type Random } from '../src/catalog/seed/prng.ts';
import { silentLogger } from '../src/logger.ts';
import { openCatalogStores } from '../src/store/open-store.ts';
import type { RecordedResponse } from './lib/bare-http-server.ts';
import { load, type LoadResult } from './lib/distinct-workloads.ts';
import { get, getJson } from './lib/http-client.ts';
import { forkHelper, progress, SERVER_DIR, sleep, startServer, stopChild } from './lib/processes.ts';
import { percentile } from './lib/stats.ts';

/** One sampled product's fields that filters are built from; instants as epoch milliseconds. */
interface Sampled {
  shopName: string;
  brand: string;
  productType: string;
  /** Label tags only: the barcode-like numbers among the tags are one product's each. */
  tags: string[];
  priceMin: number;
  priceMax: number;
  priceDisplay: number;
  available: boolean;
  createdAt: number;
  updatedAt: number;
  productCreatedAt: number;
}

interface Vocabulary {
  products: Sampled[];
  shops: string[];
  brands: string[];
  tags: string[];
  /** Widest distance between two sampled `created_at` (and `updated_at`), at least a second. */
  createdSpanMs: number;
  updatedSpanMs: number;
}

interface Shape {
  name: string;
  sort?: StorefrontSort;
  /** Which sampled products a filter of this shape can be built around and still match. */
  anchors(product: Sampled): boolean;
  /** A filter that matches `anchor`, with values drawn by `random`. */
  filter(anchor: Sampled, vocabulary: Vocabulary, random: Random): string;
}

const DAY_MS = 86_400_000;
const quote = (text: string): string => `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
const money = (value: number): string => Math.max(0, value).toFixed(2);
/** A distance of 0.01 to `max`, in cents. */
const cents = (random: Random, max: number): number => random.int(1, max * 100) / 100;
const instant = (ms: number): string => quote(new Date(ms).toISOString());
const available = (product: Sampled): boolean => product.available;
const anyProduct = (): boolean => true;

/** `count` distinct values of `pool` that are not in `except` (fewer if the pool has fewer). */
function pickDistinct(random: Random, pool: readonly string[], count: number, except: readonly string[] = []): string[] {
  const picked = new Set<string>();
  for (let attempt = 0; picked.size < count && attempt < count * 20; attempt += 1) {
    const value = random.pick(pool);
    if (!except.includes(value)) picked.add(value);
  }
  return [...picked];
}

export const SHAPES: readonly Shape[] = [
  {
    name: 'price_min >= X AND price_max <= Y AND available = true',
    anchors: available,
    filter: (p, _v, r) => `price_min >= ${money(p.priceMin - cents(r, 40))} AND price_max <= ${money(p.priceMax + cents(r, 80))} AND available = true`,
  },
  {
    name: 'tags IN [...] AND price_display < X',
    anchors: (p) => p.tags.length > 0,
    filter: (p, v, r) => {
      const own = r.pick(p.tags);
      const tags = [own, ...pickDistinct(r, v.tags, r.int(0, 2), [own])];
      return `tags IN [${tags.map(quote).join(', ')}] AND price_display < ${money(p.priceDisplay + cents(r, 100))}`;
    },
  },
  {
    name: 'product_type = T AND price_max >= X AND price_min <= Y',
    anchors: anyProduct,
    filter: (p, _v, r) => `product_type = ${quote(p.productType)} AND price_max >= ${money(p.priceMax - cents(r, 60))} AND price_min <= ${money(p.priceMin + cents(r, 60))}`,
  },
  {
    name: 'shop_name = S AND price_min > X',
    anchors: anyProduct,
    filter: (p, _v, r) => `shop_name = ${quote(p.shopName)} AND price_min > ${money(p.priceMin - cents(r, 80))}`,
  },
  {
    name: 'brand = B AND available = true',
    anchors: available,
    filter: (p) => `brand = ${quote(p.brand)} AND available = true`,
  },
  {
    name: '(brand = A OR brand = B) AND NOT tags IN [...] AND available = true',
    anchors: available,
    filter: (p, v, r) => {
      const other = pickDistinct(r, v.brands, 1, [p.brand])[0] ?? p.brand;
      const excluded = pickDistinct(r, v.tags, r.int(1, 3), p.tags);
      return `(brand = ${quote(p.brand)} OR brand = ${quote(other)}) AND NOT tags IN [${excluded.map(quote).join(', ')}] AND available = true`;
    },
  },
  {
    name: 'price_display > X AND price_display < Y, sorted by updated_at:desc',
    sort: 'updated_at:desc',
    anchors: anyProduct,
    filter: (p, _v, r) => `price_display > ${money(p.priceDisplay - cents(r, 30))} AND price_display < ${money(p.priceDisplay + cents(r, 30))}`,
  },
  {
    name: 'available = false AND product_created_at < D',
    anchors: (p) => !p.available,
    filter: (p, _v, r) => `available = false AND product_created_at < ${instant(p.productCreatedAt + r.int(1, 90 * DAY_MS))}`,
  },
  {
    name: 'shop_name IN [3 shops] AND updated_at > D',
    anchors: anyProduct,
    filter: (p, v, r) => {
      const shops = [p.shopName, ...pickDistinct(r, v.shops, 2, [p.shopName])];
      return `shop_name IN [${shops.map(quote).join(', ')}] AND updated_at > ${instant(p.updatedAt - r.int(1, Math.ceil(v.updatedSpanMs / 4)))}`;
    },
  },
  {
    name: 'created_at >= D1 AND created_at < D2 AND price_display <= X',
    anchors: anyProduct,
    filter: (p, v, r) => {
      const width = Math.ceil(v.createdSpanMs / 8);
      return `created_at >= ${instant(p.createdAt - r.int(0, width))} AND created_at < ${instant(p.createdAt + r.int(1, width))} AND price_display <= ${money(p.priceDisplay + cents(r, 100))}`;
    },
  },
];

const LIST_PATH = '/v3/storefront/products';
/** Pages of 100 products read to learn the vocabulary (fewer on a catalog with fewer products): enough to meet most shops and the commoner of the long tail's brands. */
const SAMPLE_WINDOWS = 300;

function listPath(filter: string, sort?: StorefrontSort): string {
  const params = new URLSearchParams({ filters: filter });
  if (sort !== undefined) params.set('sort', sort);
  params.set('limit', '20');
  return `${LIST_PATH}?${params}`;
}

function sampled(product: StorefrontProduct): Sampled {
  return {
    shopName: product.shop_name,
    brand: product.brand,
    productType: product.product_type,
    tags: product.tags.filter((tag) => !/^\d+$/u.test(tag)),
    priceMin: product.price_min,
    priceMax: product.price_max,
    priceDisplay: product.price_display,
    available: product.available,
    createdAt: Date.parse(product.created_at),
    updatedAt: Date.parse(product.updated_at),
    productCreatedAt: Date.parse(product.product_created_at),
  };
}

/**
 * Products read through the API in `windows` pages of 100, at cursors spread evenly from the
 * first to the last, so the service-assigned instants span the whole catalog. Cursor bounds are
 * written as the exact integer of a double, which the filter language accepts.
 */
async function sampleVocabulary(base: string, headers: Record<string, string>, windows: number): Promise<Vocabulary> {
  const edge = async (sort: StorefrontSort): Promise<number | undefined> => (await getJson<StorefrontProductList>(`${base}${LIST_PATH}?limit=1&sort=${sort}`, headers)).data[0]?.cursor;
  const first = await edge('cursor:asc');
  const last = await edge('cursor:desc');
  if (first === undefined || last === undefined) throw new Error('the catalog has no storefront products');
  const products: Sampled[] = [];
  for (let window = 0; window < windows; window += 1) {
    const from = BigInt(Math.floor(first + ((last - first) * window) / windows));
    const page = await getJson<StorefrontProductList>(`${base}${LIST_PATH}?${new URLSearchParams({ filters: `cursor >= ${from}`, limit: '100' })}`, headers);
    products.push(...page.data.map(sampled));
  }
  const span = (values: number[]): number => Math.max(1_000, Math.max(...values) - Math.min(...values));
  return {
    products,
    shops: [...new Set(products.map((p) => p.shopName))],
    brands: [...new Set(products.map((p) => p.brand))],
    tags: [...new Set(products.flatMap((p) => p.tags))],
    createdSpanMs: span(products.map((p) => p.createdAt)),
    updatedSpanMs: span(products.map((p) => p.updatedAt)),
  };
}

/** Up to `count` distinct filters of `shape` (fewer when its vocabulary has fewer), each accepted by the service's parser. */
function shapeFilters(shape: Shape, vocabulary: Vocabulary, count: number): string[] {
  const anchors = vocabulary.products.filter(shape.anchors);
  if (anchors.length === 0) throw new Error(`no sampled product can anchor "${shape.name}"`);
  const random = createRandom(`shapes-bench:${shape.name}`);
  const filters = new Set<string>();
  for (let attempt = 0; filters.size < count && attempt < count * 4; attempt += 1) filters.add(shape.filter(random.pick(anchors), vocabulary, random));
  for (const filter of filters) {
    try {
      parseFilter(filter);
    } catch (error) {
      throw new Error(`shape "${shape.name}" built an invalid filter ${filter}: ${(error as Error).message}`, { cause: error });
    }
  }
  return [...filters];
}

export interface ShapeRow {
  cli: string;
  db: string;
  products: number;
  shape: string;
  /** Distinct filters sent one at a time, and (disjoint from them) under load. */
  oneAtATimeFilters: number;
  loadFilters: number;
  /** One-at-a-time answers whose total was above 0, and their median total. */
  matched: number;
  medianTotal: number;
  p50: number;
  p99: number;
  /** The same client's p99 over the same paths against the bare server. */
  bareP99: number;
  oneAtATimeNon2xx: number;
  /** Answers other than 2xx of both phases by status (`{ "503": 2 }`); empty when there were none. */
  non2xxStatuses: Record<string, number>;
  /** Means over the load's rounds, and the highest round's p99. */
  rps: number;
  loadP99: number;
  /** Requests the load sent: above loadFilters, some filters were sent more than once. */
  sent: number;
  loadNon2xx: number;
  loadErrors: number;
  bareRps: number;
}

interface Answer {
  path: string;
  status: number;
  contentType: string;
  body: Buffer;
}

/** Each path requested after the previous answer ended, on one kept-alive connection: the sorted milliseconds, and the answers. */
async function oneAtATime(base: string, paths: readonly string[], headers: Record<string, string>): Promise<{ times: number[]; answers: Answer[] }> {
  const times: number[] = [];
  const answers: Answer[] = [];
  for (const path of paths) {
    const started = performance.now();
    const response = await get(`${base}${path}`, headers);
    times.push(performance.now() - started);
    answers.push({ path, ...response });
  }
  return { times: times.sort((a, b) => a - b), answers };
}

/** A bare node:http server in a process of its own answering each of `answers`' paths with its bytes, and any other path with the successful answers in turn. */
async function withBareServer<T>(answers: readonly Answer[], use: (url: string) => Promise<T>): Promise<T> {
  const recorded = (url: string, answer: Answer): RecordedResponse => ({ url, status: answer.status, contentType: answer.contentType, body: answer.body.toString('base64') });
  const routes = [...answers.map((answer) => recorded(answer.path, answer)), ...answers.filter((answer) => answer.status === 200).map((answer) => recorded('*', answer))];
  const file = join(tmpdir(), `shapes-bench-routes-${process.pid}.json`);
  writeFileSync(file, JSON.stringify(routes));
  const bare = await forkHelper<{ port: number }>(new URL('./lib/bare-http-server.ts', import.meta.url).pathname, [file]);
  try {
    return await use(`http://127.0.0.1:${bare.ready.port}`);
  } finally {
    await stopChild(bare.child);
    rmSync(file, { force: true });
  }
}

const isSuccess = (status: number): boolean => status >= 200 && status < 300;

function countStatuses(counts: readonly Record<string, number>[]): Record<string, number> {
  const total: Record<string, number> = {};
  for (const count of counts) for (const [status, n] of Object.entries(count)) total[status] = (total[status] ?? 0) + n;
  return total;
}

/**
 * The shape's load on the service and on the bare server in alternated rounds (service first, then
 * bare first), so that a machine busier in one half of the measurement weighs on both alike. The
 * service's rounds continue through the load's filters where the previous round stopped.
 */
async function alternatedLoads(base: string, bareUrl: string, headers: Record<string, string>, paths: readonly string[], options: { seconds: number; connections: number; rounds: number }) {
  const ours: LoadResult[] = [];
  const bare: LoadResult[] = [];
  let offset = 0;
  for (let round = 0; round < options.rounds; round += 1) {
    for (const target of round % 2 === 0 ? ['ours', 'bare'] : ['bare', 'ours']) {
      if (target === 'bare') {
        bare.push(await load(bareUrl, paths, {}, options.seconds, options.connections));
        continue;
      }
      const at = offset % paths.length;
      const result = await load(base, [...paths.slice(at), ...paths.slice(0, at)], headers, options.seconds, options.connections);
      offset += result.sent;
      ours.push(result);
    }
  }
  const mean = (results: readonly LoadResult[]): number => results.reduce((sum, result) => sum + result.rps, 0) / results.length;
  const sum = (results: readonly LoadResult[], field: 'sent' | 'non2xx' | 'errors'): number => results.reduce((total, result) => total + result[field], 0);
  return {
    rps: mean(ours),
    loadP99: Math.max(...ours.map((result) => result.p99)),
    sent: sum(ours, 'sent'),
    loadNon2xx: sum(ours, 'non2xx'),
    loadErrors: sum(ours, 'errors'),
    loadStatuses: ours.map((result) => result.non2xxStatuses),
    bareRps: mean(bare),
  };
}

async function measureShape(base: string, headers: Record<string, string>, paths: { oneAtATime: string[]; load: string[] }, options: { seconds: number; connections: number; rounds: number }) {
  const served = await oneAtATime(base, paths.oneAtATime, headers);
  const { bareTimes, loadResults } = await withBareServer(served.answers, async (bareUrl) => ({
    bareTimes: (await oneAtATime(bareUrl, paths.oneAtATime, {})).times,
    loadResults: await alternatedLoads(base, bareUrl, headers, paths.load, options),
  }));
  const { loadStatuses, ...loads } = loadResults;
  const totals = served.answers
    .filter((answer) => answer.status === 200)
    .map((answer) => (JSON.parse(answer.body.toString('utf8')) as StorefrontProductList).meta.total)
    .sort((a, b) => a - b);
  return {
    oneAtATimeFilters: paths.oneAtATime.length,
    loadFilters: paths.load.length,
    matched: totals.filter((total) => total > 0).length,
    medianTotal: percentile(totals, 50),
    p50: percentile(served.times, 50),
    p99: percentile(served.times, 99),
    bareP99: percentile(bareTimes, 99),
    oneAtATimeNon2xx: served.answers.filter((answer) => !isSuccess(answer.status)).length,
    non2xxStatuses: countStatuses([...served.answers.filter((answer) => !isSuccess(answer.status)).map((answer) => ({ [answer.status]: 1 })), ...loadStatuses]),
    ...loads,
  };
}

export async function startReady(cli: string, db: string): Promise<{ base: string; stop(): Promise<void> }> {
  const priceLog = join(tmpdir(), `shapes-bench-prices-${process.pid}.db`);
  const server = await startServer(cli, ['--db', db, '--price-log', `sqlite:${priceLog}`, '--log-level', 'warn'], 1_800_000);
  const stop = async (): Promise<void> => {
    await server.stop();
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${priceLog}${suffix}`, { force: true });
  };
  const deadline = performance.now() + 1_800_000;
  while (performance.now() < deadline) {
    const status = await fetch(`${server.apiUrl}/readyz`).then((response) => response.status, () => 0);
    if (status === 200) return { base: server.apiUrl, stop };
    await sleep(50);
  }
  await stop();
  throw new Error(`${cli} on ${db.split(':')[0]} was not ready within 30 minutes`);
}

export interface ShapesOptions {
  db: string;
  /** Server CLIs measured one after the other on the same filters; the first also samples the vocabulary. */
  clis: readonly string[];
  requests: number;
  /** Distinct filters per shape for the load. */
  filters: number;
  /** Seconds of each load round; the service and the bare server get `rounds` each, alternated. */
  seconds: number;
  rounds: number;
  connections: number;
  /** 1-based numbers of the shapes to run (default all). */
  shapes?: readonly number[];
  /**
   * Write each shape's load paths to `<dir>/shape-<n>.paths` and the key to `<dir>/key`, for
   * bench/in-process-bench.ts, and measure nothing.
   */
  writePaths?: string;
}

export async function runShapesBench(options: ShapesOptions): Promise<ShapeRow[]> {
  const { db } = options;
  const stores = await openCatalogStores(db, silentLogger);
  const key = await stores.keys.createKey('pro', 'shapes bench');
  await stores.close();
  const headers = { authorization: key };
  const shapes = SHAPES.filter((_shape, index) => options.shapes === undefined || options.shapes.includes(index + 1));
  const engine = db.split(':')[0];

  const sampler = await startReady(options.clis[0]!, db);
  let vocabulary: Vocabulary;
  let products: number;
  try {
    products = (await getJson<StorefrontProductList>(`${sampler.base}${LIST_PATH}?limit=1`, headers)).meta.total;
    vocabulary = await sampleVocabulary(sampler.base, headers, Math.min(SAMPLE_WINDOWS, Math.ceil(products / 100)));
  } finally {
    await sampler.stop();
  }
  progress(`shapes ${engine}: ${products} products; sampled ${vocabulary.products.length}: ${vocabulary.shops.length} shops, ${vocabulary.brands.length} brands, ${vocabulary.tags.length} tags`);
  // Each shape's first few filters warm the server's code paths; no measured request sends them.
  const warmUpPerShape = 20;
  const workloads = shapes.map((shape) => {
    const paths = shapeFilters(shape, vocabulary, warmUpPerShape + options.requests + options.filters).map((filter) => listPath(filter, shape.sort));
    const measured = paths.slice(warmUpPerShape);
    return { shape, warmUp: paths.slice(0, warmUpPerShape), oneAtATime: measured.slice(0, options.requests), load: measured.slice(options.requests) };
  });
  const warmUp = workloads.flatMap((workload) => workload.warmUp);
  if (options.writePaths !== undefined) {
    mkdirSync(options.writePaths, { recursive: true });
    writeFileSync(join(options.writePaths, 'key'), `${key}\n`);
    for (const workload of workloads) writeFileSync(join(options.writePaths, `shape-${SHAPES.indexOf(workload.shape) + 1}.paths`), `${workload.load.join('\n')}\n`);
    return [];
  }

  const rows: ShapeRow[] = [];
  for (const cli of options.clis) {
    const server = await startReady(cli, db);
    try {
      await oneAtATime(server.base, warmUp, headers);
      for (const workload of workloads) {
        const row: ShapeRow = { cli, db: db.replace(/\/\/[^@/]*@/u, '//'), products, shape: `${SHAPES.indexOf(workload.shape) + 1}. ${workload.shape.name}`, ...(await measureShape(server.base, headers, workload, options)) };
        progress(
          `shapes ${engine}: ${row.shape}: p50 ${row.p50.toFixed(2)} / p99 ${row.p99.toFixed(2)} ms (bare p99 ${row.bareP99.toFixed(2)}), ${Math.round(row.rps)} req/s vs bare ${Math.round(row.bareRps)} (${(row.rps / row.bareRps).toFixed(2)}×), ` +
            `matched ${row.matched}/${row.oneAtATimeFilters}, non-2xx ${row.oneAtATimeNon2xx + row.loadNon2xx} ${JSON.stringify(row.non2xxStatuses)}, errors ${row.loadErrors}`,
        );
        rows.push(row);
      }
    } finally {
      await server.stop();
    }
  }
  return rows;
}

/** The checkout a CLI belongs to, for the table. */
const checkout = (cli: string): string => cli.replace(/\/packages\/server\/src\/cli\/main\.ts$/u, '');

export function renderShapes(rows: readonly ShapeRow[]): string {
  // Rows written before statuses were recorded lack them.
  const statuses = (counts: Record<string, number> | undefined): string => {
    const entries = Object.entries(counts ?? {});
    return entries.length === 0 ? '' : `: ${entries.map(([status, n]) => `${n} × ${status}`).join(', ')}`;
  };
  const fixed = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : '–');
  return [
    '| shape | db | server | products | filters: one at a time + load (sent per load filter) | one at a time: matched (median total) | one at a time p50 / p99 ms | bare p99 ms | at 50 conn. req/s (p99 ms) | bare same bytes req/s | ratio | non-2xx (connection errors) |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (row) =>
        `| ${row.shape} | ${row.db.split(':')[0] === 'sqlite' ? 'SQLite' : 'PostgreSQL'} | ${checkout(row.cli)} | ${row.products.toLocaleString('en')} | ${row.oneAtATimeFilters} + ${row.loadFilters.toLocaleString('en')} (${fixed(row.sent / row.loadFilters, 2)}) | ${row.matched}/${row.oneAtATimeFilters} (${row.medianTotal.toLocaleString('en')}) | ${fixed(row.p50, 2)} / ${fixed(row.p99, 2)} | ${fixed(row.bareP99, 2)} | ${Math.round(row.rps)} (${row.loadP99}) | ${Math.round(row.bareRps)} | ${fixed(row.rps / row.bareRps, 2)}× | ${row.oneAtATimeNon2xx + row.loadNon2xx}${statuses(row.non2xxStatuses)} (${row.loadErrors}) |`,
    ),
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      db: { type: 'string' },
      cli: { type: 'string' },
      requests: { type: 'string', default: '300' },
      filters: { type: 'string', default: '20000' },
      seconds: { type: 'string', default: '6' },
      rounds: { type: 'string', default: '2' },
      connections: { type: 'string', default: '50' },
      shapes: { type: 'string' },
      'write-paths': { type: 'string' },
    },
  });
  const rows: ShapeRow[] = [];
  for (const db of (values.db ?? 'sqlite:./data/catalog.db').split(',')) {
    rows.push(
      ...(await runShapesBench({
        db,
        clis: (values.cli ?? join(SERVER_DIR, 'src', 'cli', 'main.ts')).split(','),
        requests: Number(values.requests),
        filters: Number(values.filters),
        seconds: Number(values.seconds),
        rounds: Number(values.rounds),
        connections: Number(values.connections),
        ...(values.shapes === undefined ? {} : { shapes: values.shapes.split(',').map(Number) }),
        ...(values['write-paths'] === undefined ? {} : { writePaths: values['write-paths'] }),
      })),
    );
  }
  process.stdout.write(`${renderShapes(rows)}\n`);
}
