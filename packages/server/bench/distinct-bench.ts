// Distinct-URL throughput per operation, on a seeded catalog of either engine: no two requests of
// a run alike, so per-URL caches do not carry the figure. Beside each: the same operation repeating
// one URL (a cache hit), and for getProduct a bare node:http server sending one product's bytes
// for any path, all measured in this run with the same load. Reports; asserts nothing.
//
//   node bench/distinct-bench.ts --db sqlite:/tmp/catalog.db|postgres://… [--price-log URL] [--seconds 8] [--connections 50]
// The database must hold a seeded catalog (`catalog seed`); the bench creates its own key.
// `pnpm bench` runs it as its `distinct` section (runDistinctBench), on SQLite and PostgreSQL.
import autocannon from 'autocannon';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { silentLogger } from '../src/logger.ts';
import { openCatalogStores } from '../src/store/open-store.ts';
import { progress, SERVER_DIR, startServer } from './lib/processes.ts';

export interface DistinctRow {
  name: string;
  /** Distinct URLs the workload cycles through: 1 is a cache hit. */
  distinct: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

export interface DistinctResult {
  db: string;
  seconds: number;
  connections: number;
  rows: DistinctRow[];
  /** getProduct over distinct ids ÷ the bare server over the same paths. */
  getProductVsBare: number;
}

/** autocannon over `paths` in turn across all connections (each request the next path). */
export async function load(url: string, paths: readonly string[], headers: Record<string, string>, seconds: number, connections: number): Promise<Omit<DistinctRow, 'name' | 'distinct'>> {
  let next = 0;
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    headers,
    requests: [{ setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length]! }) }],
  });
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx };
}

export async function runDistinctBench(options: { db: string; priceLog?: string; cli?: string; seconds: number; connections: number }): Promise<DistinctResult> {
  const { db, seconds, connections } = options;
  const stores = await openCatalogStores(db, silentLogger);
  const key = await stores.keys.createKey('pro', 'distinct bench');
  const sample = await stores.catalog.sampleVariants(20_000);
  await stores.close();
  const productIds = [...new Set(sample.map((variant) => variant.product_id))];
  const skus = [...new Set(sample.map((variant) => variant.sku))];
  let seed = 7;
  const random = (n: number): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed % n;
  };
  const fragments = Array.from({ length: 5_000 }, () => {
    const gtin = sample[random(sample.length)]!.gtin;
    const length = 4 + random(5);
    const start = random(Math.max(1, gtin.length - length + 1));
    return gtin.slice(start, start + length);
  });
  // X below Y in every filter, so pages are full rather than empty.
  const filters = Array.from({ length: 5_000 }, (_, i) => `price_min >= ${20 + (i % 100)} AND price_max <= ${150 + Math.floor(i / 100) * 5} AND available = true`);

  const cli = options.cli ?? `${SERVER_DIR}/src/cli/main.ts`;
  // A PostgreSQL catalog needs a price log named; the stream is not measured here.
  const priceLog = options.priceLog ?? (db.startsWith('sqlite:') ? db : `sqlite:${join(tmpdir(), `distinct-bench-${process.pid}.db`)}`);
  const server = await startServer(cli, ['--db', db, '--price-log', priceLog, '--log-level', 'warn']);
  try {
    const base = server.apiUrl;
    const auth = { authorization: key };
    const workloads: { name: string; paths: string[]; headers: Record<string, string> }[] = [
      { name: 'getProduct', paths: productIds.map((id) => `/v2/products/${id}`), headers: auth },
      { name: 'searchVariants by SKU', paths: skus.map((sku) => `/v2/variants?sku=${encodeURIComponent(sku)}`), headers: auth },
      { name: 'searchVariants by GTIN fragment', paths: fragments.map((fragment) => `/v2/variants?gtin=${fragment}`), headers: auth },
      { name: 'listStorefrontProducts, 3-leaf filter', paths: filters.map((filter) => `/v3/storefront/products?${new URLSearchParams({ filters: filter })}`), headers: auth },
      { name: 'listTopBrands', paths: ['/v2/brands'], headers: auth },
      { name: 'countGtins', paths: ['/gtin/count'], headers: { authorization: `Bearer ${key}` } },
    ];
    const rows: DistinctRow[] = [];
    // Warm the storefront index and the aggregates, as a running server would be.
    await fetch(`${base}${workloads[3]!.paths[0]}`, { headers: workloads[3]!.headers });
    for (const workload of workloads) {
      progress(`distinct (${db.split(':')[0]}): ${workload.name}`);
      rows.push({ name: workload.name, distinct: workload.paths.length, ...(await load(base, workload.paths, workload.headers, seconds, connections)) });
      if (workload.paths.length > 1) {
        rows.push({ name: `${workload.name} (one URL: cache hit)`, distinct: 1, ...(await load(base, [workload.paths[0]!], workload.headers, seconds, connections)) });
      }
    }
    // The bare reference: one product's exact bytes for any path.
    const body = Buffer.from(await (await fetch(`${base}${workloads[0]!.paths[0]}`, { headers: workloads[0]!.headers })).text());
    const bare = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length, 'x-request-id': 'bare' });
      res.end(body);
    });
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
    const bareRow = { name: 'bare node:http, same bytes as getProduct', distinct: productIds.length, ...(await load(`http://127.0.0.1:${(bare.address() as AddressInfo).port}`, workloads[0]!.paths, {}, seconds, connections)) };
    rows.push(bareRow);
    bare.close();
    return { db: db.replace(/\/\/[^@/]*@/u, '//'), seconds, connections, rows, getProductVsBare: rows[0]!.rps / bareRow.rps };
  } finally {
    await server.stop();
  }
}

export function renderDistinct(result: DistinctResult): string {
  return [
    '| workload | distinct URLs | req/s | p50 ms | p99 ms | non-2xx |',
    '| --- | --- | --- | --- | --- | --- |',
    ...result.rows.map((row) => `| ${row.name} | ${row.distinct} | ${Math.round(row.rps)} | ${row.p50} | ${row.p99} | ${row.non2xx} |`),
    '',
    `getProduct over distinct ids ÷ bare: ${result.getProductVsBare.toFixed(2)}×`,
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { db: { type: 'string' }, 'price-log': { type: 'string' }, seconds: { type: 'string' }, connections: { type: 'string' } } });
  const result = await runDistinctBench({
    db: values.db ?? 'sqlite:./data/catalog.db',
    ...(values['price-log'] === undefined ? {} : { priceLog: values['price-log'] }),
    seconds: Number(values.seconds ?? 8),
    connections: Number(values.connections ?? 50),
  });
  process.stdout.write(`db ${result.db}; ${result.connections} connections; ${result.seconds} s each\n${renderDistinct(result)}\n`);
}
