// The storefront at market size through `catalog serve`: for each server CLI given (so an older
// build can be measured beside this one in the same run), on one seeded storefront database, the
// seconds from spawn to /readyz 200, the RSS once ready, distinct searches of each kind of the
// scale bench one at a time over HTTP (p50/p99, and the same client's p99 against a bare server
// replaying one answer's bytes: the client's and the transport's own tail), then distinct 3-leaf
// filters at 50 connections beside a bare node:http server replaying the same bytes, twice: filters
// whose leaves repeat across requests (5,000 filters from 100 lower and 50 upper price bounds, as a
// form offers them: the leaf cache's case) and filters whose every range value is new (its miss
// case). Reports; asserts nothing.
//
//   node bench/market-bench.ts --db sqlite:/tmp/sf.db|postgres://… [--cli A.ts,B.ts] [--requests 300] [--seconds 6] [--connections 50]
// The database must hold storefront products (`catalog seed --storefront-products N`, or
// `catalog import --kind storefront`); the bench creates its own key.
import autocannon from 'autocannon';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { silentLogger } from '../src/logger.ts';
import { openCatalogStores } from '../src/store/open-store.ts';
import { progress, readRssKib, SERVER_DIR, sleep, startServer } from './lib/processes.ts';
import { KINDS } from './storefront-scale-bench.ts';

export interface MarketRow {
  cli: string;
  db: string;
  products: number;
  readySeconds: number;
  readyRssMiB: number;
  /** One at a time: p50 and p99 ms, and the p99 of the same client against a bare server replaying the first answer's bytes. */
  kinds: { kind: string; p50: number; p99: number; bareP99?: number }[];
  filterRps: number;
  filterP99: number;
  /** Answers other than 2xx during the filter load (a 503 is cheap: it must not count as served). */
  filterNon2xx: number;
  bareRps: number;
  /** The same load with every range value new (no leaf used twice), and its bare server. */
  distinctRps: number;
  distinctP99: number;
  distinctNon2xx: number;
  distinctBareRps: number;
  afterLoadRssMiB: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function pathOf(spec: ReturnType<(typeof KINDS)[string]>): string {
  const params = new URLSearchParams();
  if (spec.text !== undefined) params.set('query', spec.text);
  if (spec.filter !== undefined) params.set('filters', spec.filter);
  if (spec.sort !== undefined) params.set('sort', spec.sort);
  params.set('limit', '20');
  return `/v3/storefront/products?${params}`;
}

async function load(url: string, paths: readonly string[], headers: Record<string, string>, seconds: number, connections: number): Promise<{ rps: number; p99: number; non2xx: number }> {
  let next = 0;
  const result = await autocannon({ url, connections, duration: seconds, headers, requests: [{ setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length]! }) }] });
  return { rps: result.requests.average, p99: result.latency.p99, non2xx: result.non2xx };
}

export async function runMarketBench(options: { db: string; cli: string; requests: number; seconds: number; connections: number }): Promise<MarketRow> {
  const { db, cli } = options;
  const stores = await openCatalogStores(db, silentLogger);
  const key = await stores.keys.createKey('pro', 'market bench');
  await stores.close();
  const priceLog = `sqlite:${join(tmpdir(), `market-bench-prices-${process.pid}.db`)}`;
  const started = performance.now();
  const server = await startServer(cli, ['--db', db, '--price-log', priceLog, '--log-level', 'warn'], 1_800_000);
  try {
    const base = server.apiUrl;
    for (;;) {
      const status = await fetch(`${base}/readyz`).then((response) => response.status, () => 0);
      if (status === 200) break;
      await sleep(50);
    }
    const readySeconds = (performance.now() - started) / 1000;
    const readyRssMiB = readRssKib(server.pid) / 1024;
    const headers = { authorization: key };
    const first = (await (await fetch(`${base}${pathOf({})}`, { headers })).json()) as { meta?: { total?: number } };
    const products = first.meta?.total ?? Number.NaN;
    progress(`market ${cli} ${db.split(':')[0]}: ready in ${readySeconds.toFixed(1)} s, ${products} products, RSS ${readyRssMiB.toFixed(0)} MiB`);
    const kinds: MarketRow['kinds'] = [];
    for (const [kind, make] of Object.entries(KINDS)) {
      const paths = Array.from({ length: options.requests }, (_, i) => pathOf(make(i)));
      const times = await oneAtATime(base, paths, headers);
      const bare = await withBareServer(base, paths[0]!, headers, (url) => oneAtATime(url, paths, {}));
      kinds.push({ kind, p50: percentile(times, 50), p99: percentile(times, 99), bareP99: percentile(bare, 99) });
      progress(`market: ${kind}: p50 ${percentile(times, 50).toFixed(2)} ms, p99 ${percentile(times, 99).toFixed(2)} ms (bare p99 ${percentile(bare, 99).toFixed(2)} ms)`);
    }
    const paths = Array.from({ length: 5_000 }, (_, i) => pathOf({ filter: `price_min >= ${20 + (i % 100)} AND price_max <= ${150 + Math.floor(i / 100) * 5} AND available = true` }));
    const filters = await load(base, paths, headers, options.seconds, options.connections);
    const bareRun = await bareLoad(base, paths, headers, options);
    // Bounds with a fraction no other request repeats: 200,000 of them, more than a run sends.
    const distinctPaths = Array.from({ length: 200_000 }, (_, i) => pathOf({ filter: `price_min >= ${20 + (i % 100) + i / 1_000_000} AND price_max <= ${150 + (Math.floor(i / 100) % 50) * 5 + i / 1_000_000} AND available = true` }));
    const distinct = await load(base, distinctPaths, headers, options.seconds, options.connections);
    const distinctBare = await bareLoad(base, distinctPaths, headers, options);
    const afterLoadRssMiB = readRssKib(server.pid) / 1024;
    return {
      cli,
      db: db.replace(/\/\/[^@/]*@/u, '//'),
      products,
      readySeconds,
      readyRssMiB,
      kinds,
      filterRps: filters.rps,
      filterP99: filters.p99,
      filterNon2xx: filters.non2xx,
      bareRps: bareRun.rps,
      distinctRps: distinct.rps,
      distinctP99: distinct.p99,
      distinctNon2xx: distinct.non2xx,
      distinctBareRps: distinctBare.rps,
      afterLoadRssMiB,
    };
  } finally {
    await server.stop();
  }
}

/**
 * Milliseconds of each request to `paths`, one at a time on one kept-alive connection, as sorted
 * times. node:http rather than fetch: fetch's own allocations (streams, promises per request) put
 * pauses of several ms into this process's tail. What is left of the client's own tail shows in
 * its p99 against a bare server.
 */
async function oneAtATime(base: string, paths: readonly string[], headers: Record<string, string>): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  try {
    for (const path of paths) {
      const t0 = performance.now();
      const status = await new Promise<number>((resolve, reject) => {
        http
          .get(`${base}${path}`, { agent, headers }, (response) => {
            response.on('data', () => undefined);
            response.on('end', () => resolve(response.statusCode ?? 0));
            response.on('error', reject);
          })
          .on('error', reject);
      });
      times.push(performance.now() - t0);
      if (status !== 200) throw new Error(`${path}: status ${status}`);
    }
  } finally {
    agent.destroy();
  }
  return times.sort((a, b) => a - b);
}

/** Runs `use` against a bare node:http server answering every request with the bytes the service answered to `path`. */
async function withBareServer<T>(base: string, path: string, headers: Record<string, string>, use: (url: string) => Promise<T>): Promise<T> {
  const body = Buffer.from(await (await fetch(`${base}${path}`, { headers })).arrayBuffer());
  const bare = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length, 'x-request-id': 'bare' });
    response.end(body);
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  try {
    return await use(`http://127.0.0.1:${(bare.address() as AddressInfo).port}`);
  } finally {
    bare.close();
  }
}

function bareLoad(base: string, paths: readonly string[], headers: Record<string, string>, options: { seconds: number; connections: number }): Promise<{ rps: number }> {
  return withBareServer(base, paths[0]!, headers, (url) => load(url, paths, {}, options.seconds, options.connections));
}

export function renderMarket(rows: readonly MarketRow[]): string {
  const kinds = Object.keys(KINDS);
  // Results written before a figure was measured (a carried-over section) lack it.
  const fixed = (value: number | undefined, digits: number): string => (value === undefined ? '–' : value.toFixed(digits));
  return [
    `| server | db | products | /readyz s | RSS ready MiB | RSS after the loads MiB | ${kinds.map((kind) => `${kind} p50 / p99 ms (bare p99)`).join(' | ')} | 3-leaf filter, leaves shared, at 50 conn. req/s (p99 ms; non-2xx) | bare same bytes req/s | ratio | 3-leaf filter, every value new: req/s (p99 ms; non-2xx) | bare req/s | ratio |`,
    `| --- | --- | --- | --- | --- | --- | ${kinds.map(() => '---').join(' | ')} | --- | --- | --- | --- | --- | --- |`,
    ...rows.map(
      (row) =>
        `| ${row.cli} | ${row.db} | ${row.products.toLocaleString('en')} | ${row.readySeconds.toFixed(1)} | ${row.readyRssMiB.toFixed(0)} | ${fixed(row.afterLoadRssMiB, 0)} | ${row.kinds.map((kind) => `${kind.p50.toFixed(2)} / ${kind.p99.toFixed(2)} (${fixed(kind.bareP99, 2)})`).join(' | ')} | ${Math.round(row.filterRps)} (${row.filterP99}; ${row.filterNon2xx}) | ${Math.round(row.bareRps)} | ${(row.filterRps / row.bareRps).toFixed(2)}× | ${Math.round(row.distinctRps)} (${row.distinctP99}; ${row.distinctNon2xx}) | ${Math.round(row.distinctBareRps)} | ${(row.distinctRps / row.distinctBareRps).toFixed(2)}× |`,
    ),
  ].join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: { db: { type: 'string' }, cli: { type: 'string' }, requests: { type: 'string' }, seconds: { type: 'string' }, connections: { type: 'string' } },
  });
  const rows: MarketRow[] = [];
  for (const db of (values.db ?? 'sqlite:./data/catalog.db').split(',')) {
    for (const cli of (values.cli ?? `${SERVER_DIR}/src/cli/main.ts`).split(',')) {
      rows.push(await runMarketBench({ db, cli, requests: Number(values.requests ?? 300), seconds: Number(values.seconds ?? 6), connections: Number(values.connections ?? 50) }));
    }
  }
  process.stdout.write(`${renderMarket(rows)}\n`);
}
