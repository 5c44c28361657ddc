// The storefront listing's cost beside the transport's: distinct storefront filters at 50
// connections against one or more builds of the CLI (a "before" checkout beside this one), each
// beside a bare node:http server in a process of its own sending the same bytes (one listing page,
// recorded from the server, for any path). All run side by side and are loaded in turn, round
// after round. Reports; asserts nothing.
//
//   node bench/listing-bench.ts --db sqlite:/tmp/catalog.db|postgres://… [--cli name=path/to/cli/main.ts[@db=URL]|http://host:port …]
//     [--workload storefront|gtin] [--seconds 6] [--rounds 2] [--connections 50] [--cpu-prof DIR] [--no-bare]
// --workload gtin loads GET /v2/variants?gtin= with 2,000 distinct fragments instead (the bare
// server then replays one fragment's page); a target's @db= runs it on a database of its own (a
// schema the other build cannot read).
// The database must hold a seeded catalog (`catalog seed`). With --cpu-prof every server writes
// V8 CPU profiles (one per thread) into DIR/<cli>-<engine>/ when it stops (open it in Chrome DevTools or summarise it with
// `node bench/lib/cpu-profile-summary.ts FILE`).
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { silentLogger } from '../src/logger.ts';
import { openCatalogStores } from '../src/store/open-store.ts';
import { distinctFilters, gtinFragments, load, type LoadResult } from './lib/distinct-workloads.ts';
import { childEnv, progress, runCli, SERVER_DIR, startServer, stopChild } from './lib/processes.ts';

export interface ListingRow extends LoadResult {
  target: string;
  round: number;
  /** Requests/s ÷ the bare server's in the same round. */
  vsBare?: number;
}

/** A bare node:http server in a child process sending `body` for any path. */
async function startBare(body: Buffer): Promise<{ url: string; stop: () => Promise<void> }> {
  const file = join(tmpdir(), `listing-bench-body-${process.pid}.json`);
  writeFileSync(file, body);
  const child = spawn(process.execPath, [new URL(import.meta.url).pathname, '--bare', file], { env: childEnv(), stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
    child.once('exit', (code) => reject(new Error(`bare server exited with ${String(code)}`)));
  });
  return { url: `http://127.0.0.1:${port}`, stop: () => stopChild(child) };
}

export async function runListingBench(options: {
  db: string;
  /** A target's own database (another schema version, say), else `db`. */
  clis: { name: string; path: string; db?: string }[];
  /** `storefront`: 5,000 distinct filters; `gtin`: 2,000 distinct GTIN fragments. */
  workload: 'storefront' | 'gtin';
  seconds: number;
  rounds: number;
  connections: number;
  cpuProfileDir?: string;
  /** Skips the bare server (when only the targets' profile matters). */
  noBare?: boolean;
}): Promise<ListingRow[]> {
  const stores = await openCatalogStores(options.db, silentLogger);
  const keys = new Map([[options.db, await stores.keys.createKey('pro', 'listing bench')]]);
  const paths =
    options.workload === 'gtin'
      ? gtinFragments(await stores.catalog.sampleVariants(20_000), 2_000).map((fragment) => `/v2/variants?gtin=${fragment}`)
      : distinctFilters(5_000).map((filter) => `/v3/storefront/products?${new URLSearchParams({ filters: filter })}`);
  await stores.close();
  // A target's own database gets its key from that target's CLI, which leaves its schema as it is.
  for (const cli of options.clis) {
    if (cli.db === undefined || keys.has(cli.db)) continue;
    const created = await runCli(cli.path, ['keys', 'create', '--plan', 'pro', '--db', cli.db]);
    keys.set(cli.db, created.stdout.trim().split('\n').at(-1)!);
  }
  const engine = options.db.split(':')[0];
  const priceLog = options.db.startsWith('sqlite:') ? options.db : `sqlite:${join(tmpdir(), `listing-bench-${process.pid}.db`)}`;
  // Every target runs for the whole bench and is loaded in turn, round after round, so each round
  // compares them under the same background load.
  const targets: { name: string; url: string; headers: Record<string, string>; stop: () => Promise<void> }[] = [];
  try {
    for (const cli of options.clis) {
      if (options.cpuProfileDir !== undefined) process.env['NODE_OPTIONS'] = `--cpu-prof --cpu-prof-dir=${join(options.cpuProfileDir, `${cli.name}-${engine}`)}`;
      // A URL names a server already running (started by hand, under a profiler, say).
      const server = cli.path.startsWith('http')
        ? { apiUrl: cli.path, stop: async () => {} }
        : await startServer(cli.path, ['--db', cli.db ?? options.db, '--price-log', priceLog, '--log-level', 'warn']);
      delete process.env['NODE_OPTIONS'];
      const headers = { authorization: keys.get(cli.db ?? options.db)! };
      targets.push({ name: cli.name, url: server.apiUrl, headers, stop: server.stop });
      // Warm the storefront index, as a running server would be.
      for (let i = 0; i < 20; i += 1) await fetch(`${server.apiUrl}${paths[i]}`, { headers });
    }
    const body = Buffer.from(await (await fetch(`${targets[0]!.url}${paths[0]}`, { headers: targets[0]!.headers })).arrayBuffer());
    if (options.noBare !== true) {
      const bare = await startBare(body);
      targets.push({ name: `bare node:http, ${body.length} B`, url: bare.url, headers: {}, stop: bare.stop });
    }
    const rows: ListingRow[] = [];
    for (let round = 1; round <= options.rounds; round += 1) {
      const roundRows: ListingRow[] = [];
      for (const target of targets) {
        progress(`listing (${engine}) round ${round}: ${target.name}`);
        roundRows.push({ target: target.name, round, ...(await load(target.url, paths, target.headers, options.seconds, options.connections)) });
      }
      const bareRow = roundRows.find((row) => row.target.startsWith('bare'));
      if (bareRow !== undefined) for (const row of roundRows) if (row !== bareRow) row.vsBare = row.rps / bareRow.rps;
      rows.push(...roundRows);
    }
    return rows;
  } finally {
    for (const target of targets) await target.stop();
  }
}

export function renderListing(db: string, rows: readonly ListingRow[]): string {
  return [
    `db ${db.replace(/\/\/[^@/]*@/u, '//')}`,
    '| target | round | req/s | p50 ms | p99 ms | non-2xx | ÷ bare |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row.target} | ${row.round} | ${Math.round(row.rps)} | ${row.p50} | ${row.p99} | ${row.non2xx} | ${row.vsBare === undefined ? '' : `${row.vsBare.toFixed(2)}×`} |`),
  ].join('\n');
}

const { values } = parseArgs({
  options: {
    bare: { type: 'string' },
    db: { type: 'string' },
    cli: { type: 'string', multiple: true },
    seconds: { type: 'string' },
    rounds: { type: 'string' },
    connections: { type: 'string' },
    'cpu-prof': { type: 'string' },
    'no-bare': { type: 'boolean' },
    workload: { type: 'string' },
  },
});
if (values.bare !== undefined) {
  const { readFileSync } = await import('node:fs');
  const body = readFileSync(values.bare);
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length, 'x-request-id': 'bare' }).end(body);
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
  process.once('SIGTERM', () => server.close(() => process.exit(0)));
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const db = values.db ?? 'sqlite:./data/catalog.db';
  const clis = (values.cli ?? [`this=${SERVER_DIR}/src/cli/main.ts`]).map((entry) => {
    const at = entry.indexOf('=');
    const [path, ownDb] = (at === -1 ? entry : entry.slice(at + 1)).split('@db=') as [string, string | undefined];
    return { name: at === -1 ? entry : entry.slice(0, at), path, ...(ownDb === undefined ? {} : { db: ownDb }) };
  });
  const rows = await runListingBench({
    db,
    clis,
    seconds: Number(values.seconds ?? 6),
    rounds: Number(values.rounds ?? 2),
    connections: Number(values.connections ?? 50),
    workload: values.workload === 'gtin' ? 'gtin' : 'storefront',
    ...(values['cpu-prof'] === undefined ? {} : { cpuProfileDir: values['cpu-prof'] }),
    noBare: values['no-bare'] === true,
  });
  process.stdout.write(`${renderListing(db, rows)}\n`);
}
