// This checkout's server beside another revision's (a worktree of it, installed) and a bare
// node:http server sending the same bytes, on one seeded catalog, in one run: getProduct over
// distinct ids and over one id (a cache hit), and storefront listings over distinct filters.
// Rounds alternate the servers' order so that a noisy machine weighs on each alike. Reports the
// ratios; asserts nothing.
//
//   git worktree add /tmp/baseline <rev> && (cd /tmp/baseline && pnpm install)
//   node bench/revision-bench.ts --db sqlite:/tmp/catalog.db|postgres://… --baseline /tmp/baseline [--baseline-db URL] [--seconds 8] [--rounds 2] [--connections 50]
// The database must hold a seeded catalog of at least 20,000 products (`catalog seed --products 25000`).
// A revision whose migrations are older than this checkout's refuses the database once this one
// has migrated it: give the baseline a copy of its own made before (`--baseline-db`, the same seed).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { silentLogger } from '../src/logger.ts';
import { openCatalogStores } from '../src/store/open-store.ts';
import { distinctFilters, load, type LoadResult } from './lib/distinct-workloads.ts';
import { progress, runCli, SERVER_DIR, startServer } from './lib/processes.ts';

const { values } = parseArgs({
  options: {
    db: { type: 'string' },
    baseline: { type: 'string' },
    'baseline-db': { type: 'string' },
    seconds: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '2' },
    connections: { type: 'string', default: '50' },
  },
});
const db = values.db ?? 'sqlite:./data/catalog.db';
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const connections = Number(values.connections);

const stores = await openCatalogStores(db, silentLogger);
const sample = await stores.catalog.sampleVariants(40_000);
await stores.close();
const productIds = [...new Set(sample.map((variant) => variant.product_id))].slice(0, 20_000);
const filters = distinctFilters(5_000).map((filter) => `/v3/storefront/products?${new URLSearchParams({ filters: filter })}`);
const priceLog = db.startsWith('sqlite:') ? db : `sqlite:${join(tmpdir(), `revision-bench-${process.pid}.db`)}`;
const argsFor = (url: string): string[] => ['--db', url, '--price-log', url.startsWith('sqlite:') ? url : priceLog, '--log-level', 'warn'];

const servers: { name: string; url: string; key: string; stop(): Promise<void> }[] = [];
const revisions = [['this checkout', join(SERVER_DIR, '..', '..'), db], ...(values.baseline === undefined ? [] : [['baseline', values.baseline, values['baseline-db'] ?? db]])] as const;
for (const [name, root, url] of revisions) {
  const cli = join(root, 'packages/server/src/cli/main.ts');
  // Each revision makes its key with its own CLI: this checkout's stores would migrate the other's database.
  const key = (await runCli(cli, ['keys', 'create', '--db', url, '--plan', 'pro'])).stdout.trim().split('\n').at(-1) ?? '';
  const started = await startServer(cli, argsFor(url));
  servers.push({ name, url: started.apiUrl, key, stop: started.stop });
}
const headers = { authorization: servers[0]!.key };
const productPaths = productIds.map((id) => `/v2/products/${id}`);
const body = Buffer.from(await (await fetch(`${servers[0]!.url}${productPaths[0]}`, { headers })).text());
const bare = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length, 'x-request-id': 'bare' });
  res.end(body);
});
await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
const targets = [...servers, { name: 'bare node:http', url: `http://127.0.0.1:${(bare.address() as AddressInfo).port}`, key: '', stop: async () => void bare.close() }];
for (const server of servers) await fetch(`${server.url}${filters[0]}`, { headers: { authorization: server.key } });

const workloads = [
  { name: `getProduct, ${productPaths.length} distinct ids`, paths: productPaths },
  { name: 'getProduct, one id (cache hit)', paths: productPaths.slice(0, 1) },
  { name: `listStorefrontProducts, ${filters.length} distinct filters`, paths: filters },
];
const results = new Map<string, LoadResult[]>();
for (let round = 0; round < rounds; round += 1) {
  for (const workload of workloads) {
    // The bare server answers getProduct's bytes only: it stands beside the getProduct rows.
    const here = targets.filter((target) => target.name !== 'bare node:http' || workload.name.startsWith('getProduct'));
    const order = round % 2 === 0 ? here : [...here].reverse();
    for (const target of order) {
      progress(`round ${round + 1}/${rounds}: ${workload.name} on ${target.name}`);
      const result = await load(target.url, workload.paths, target.key === '' ? {} : { authorization: target.key }, seconds, connections);
      const id = `${workload.name}\u0000${target.name}`;
      results.set(id, [...(results.get(id) ?? []), result]);
    }
  }
}
for (const target of targets) await target.stop();

const rps = (workload: string, target: string): number => {
  const runs = results.get(`${workload}\u0000${target}`) ?? [];
  return runs.reduce((sum, run) => sum + run.rps, 0) / Math.max(1, runs.length);
};
const lines = [`db ${db.replace(/\/\/[^@/]*@/u, '//')}; ${connections} connections; ${seconds} s × ${rounds} rounds`, '', '| workload | server | req/s | p99 ms | ÷ bare | ÷ baseline |', '| --- | --- | --- | --- | --- | --- |'];
for (const workload of workloads) {
  for (const target of targets) {
    const runs = results.get(`${workload.name}\u0000${target.name}`);
    if (runs === undefined) continue;
    const mine = rps(workload.name, target.name);
    const bareRps = rps(workload.name, 'bare node:http');
    const baselineRps = rps(workload.name, 'baseline');
    const p99 = Math.max(...runs.map((run) => run.p99));
    lines.push(`| ${workload.name} | ${target.name} | ${Math.round(mine)} | ${p99} | ${bareRps > 0 ? (mine / bareRps).toFixed(2) + '×' : ''} | ${baselineRps > 0 ? (mine / baselineRps).toFixed(2) + '×' : ''} |`);
  }
}
process.stdout.write(`${lines.join('\n')}\n`);
