// Distinct-URL throughput per operation, on a seeded catalog of either engine: no two requests of
// a run alike, so per-URL caches do not carry the figure. Beside each: the same operation repeating
// one URL (a cache hit), and for getProduct a bare node:http server sending one product's bytes
// for any path, all measured in this run with the same load. Reports; asserts nothing.
//
//   node bench/distinct-bench.ts --db sqlite:/tmp/catalog.db|postgres://… [--price-log URL] [--seconds 8] [--connections 50]
// The database must hold a seeded catalog (`catalog seed`); the bench creates its own key.
import autocannon from 'autocannon';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { silentLogger } from '../src/logger.ts';
import { openCatalogStores } from '../src/store/open-store.ts';
import { progress, SERVER_DIR, startServer } from './lib/processes.ts';

const { values } = parseArgs({ options: { db: { type: 'string' }, 'price-log': { type: 'string' }, seconds: { type: 'string' }, connections: { type: 'string' } } });
const db = values.db ?? 'sqlite:./data/catalog.db';
const seconds = Number(values.seconds ?? 8);
const connections = Number(values.connections ?? 50);

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
const filters = Array.from({ length: 5_000 }, (_, i) => `price_min >= ${20 + (i % 200)} AND price_max <= ${150 + Math.floor(i / 200) * 7} AND available = true`);

const cli = `${SERVER_DIR}/src/cli/main.ts`;
// A PostgreSQL catalog needs a price log named; the stream is not measured here.
const priceLog = values['price-log'] ?? (db.startsWith('sqlite:') ? db : `sqlite:${join(tmpdir(), `distinct-bench-${process.pid}.db`)}`);
const server = await startServer(cli, ['--db', db, '--price-log', priceLog, '--log-level', 'warn']);
const base = server.apiUrl;

interface Row {
  name: string;
  distinct: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

/** autocannon over `paths` in turn across all connections (each request the next path). */
async function load(url: string, paths: readonly string[], headers: Record<string, string>): Promise<Omit<Row, 'name' | 'distinct'>> {
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

const workloads: { name: string; paths: string[]; headers: Record<string, string> }[] = [
  { name: 'getProduct', paths: productIds.map((id) => `/v2/products/${id}`), headers: { authorization: key } },
  { name: 'searchVariants by SKU', paths: skus.map((sku) => `/v2/variants?sku=${encodeURIComponent(sku)}`), headers: { authorization: key } },
  { name: 'searchVariants by GTIN fragment', paths: fragments.map((fragment) => `/v2/variants?gtin=${fragment}`), headers: { authorization: key } },
  { name: 'listStorefrontProducts, 3-leaf filter', paths: filters.map((filter) => `/v3/storefront/products?${new URLSearchParams({ filters: filter })}`), headers: { authorization: key } },
  { name: 'listTopBrands', paths: ['/v2/brands'], headers: { authorization: key } },
  { name: 'countGtins', paths: ['/gtin/count'], headers: { authorization: `Bearer ${key}` } },
];

const rows: Row[] = [];
// Warm the storefront index and the aggregates, as a running server would be.
await fetch(`${base}${workloads[3]!.paths[0]}`, { headers: workloads[3]!.headers });
for (const workload of workloads) {
  progress(`distinct: ${workload.name}`);
  rows.push({ name: workload.name, distinct: workload.paths.length, ...(await load(base, workload.paths, workload.headers)) });
  if (workload.paths.length > 1) rows.push({ name: `${workload.name} (one URL: cache hit)`, distinct: 1, ...(await load(base, [workload.paths[0]!], workload.headers)) });
}

// The bare reference: one product's exact bytes for any path.
const body = Buffer.from(await (await fetch(`${base}${workloads[0]!.paths[0]}`, { headers: workloads[0]!.headers })).text());
const bare = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length, 'x-request-id': 'bare' });
  res.end(body);
});
await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
const bareRow = { name: 'bare node:http, same bytes as getProduct', distinct: productIds.length, ...(await load(`http://127.0.0.1:${(bare.address() as AddressInfo).port}`, workloads[0]!.paths, {})) };
rows.push(bareRow);
bare.close();
await server.stop();

const getProduct = rows[0]!;
process.stdout.write(
  [
    `db ${db}; ${connections} connections; ${seconds} s each; ${productIds.length} products, ${skus.length} SKUs, ${fragments.length} fragments, ${filters.length} filters`,
    '| workload | distinct URLs | req/s | p50 ms | p99 ms | non-2xx |',
    '|---|---|---|---|---|---|',
    ...rows.map((row) => `| ${row.name} | ${row.distinct} | ${Math.round(row.rps)} | ${row.p50} | ${row.p99} | ${row.non2xx} |`),
    `getProduct over distinct ids vs bare: ${(getProduct.rps / bareRow.rps).toFixed(2)}x`,
  ].join('\n') + '\n',
);
