// `pnpm bench`: seeds (or reuses) a synthetic catalog, drives the server through its CLI and
// measures it side by side with the limits (bare node:http) and the peers (Prism) in one run.
// It reports; it asserts nothing. Progress on stderr, the Markdown table on stdout, the record in
// bench/results/<YYYY-MM-DD>.{json,md} (`-quick` suffix for --quick runs).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { CatalogVariant } from '@catalog/contract';
import pg from 'pg';
import { runDistinctBench } from './distinct-bench.ts';
import { runHttpBench, type HttpOperation } from './http-bench.ts';
import { runImportBench } from './import-bench.ts';
import { closeClient, getJson } from './lib/http-client.ts';
import { progress, runCli, SERVER_DIR, startServer, type RunningServer } from './lib/processes.ts';
import { runPagingBench } from './paging-bench.ts';
import { describeMachine, parseScriptTable, renderMarkdown, writeResults, type BenchResults, type ScriptTable } from './results.ts';
import { runSearchBench } from './search-bench.ts';
import { runStreamBench, SCALE_SCENARIO } from './stream-bench.ts';
import { measureScale } from './storefront-scale-bench.ts';
import { runMarketBench } from './market-bench.ts';
import { runShapesBench } from './shapes-bench.ts';

const SECTIONS = ['http', 'distinct', 'scale', 'market', 'shapes', 'search', 'paging', 'stream', 'watch', 'prices', 'import'] as const;
type Section = (typeof SECTIONS)[number];

const BENCH_DIR = fileURLToPath(new URL('.', import.meta.url));

function usage(): string {
  return `usage: pnpm bench [--quick] [--products N] [--only ${SECTIONS.join(',')}] [--duration S]
  --products N      catalog size to seed (default 100000, about 1,000,000 variants; --quick: 5000)
  --quick           small catalog and short runs: a smoke run, written to results/<date>-quick.*
  --only LIST       comma-separated sections (default all)
  --duration S      seconds per measured HTTP round and per stream scenario
  --rounds N        alternated HTTP rounds (a, b, c per round; default 3, --quick 2)
  --connections N   autocannon connections (default 50)
  --seed S          seed passed to \`catalog seed\`
  --cli PATH        the server CLI (default src/cli/main.ts)
  --redis URL       Redis for the stream's Redis rows (default redis://127.0.0.1:6379/15)
  --postgres URL    PostgreSQL server for the distinct and import sections' PostgreSQL rows, as
                    postgres://user@host:port (default postgres://postgres@127.0.0.1:5432);
                    \`none\` leaves them out. The bench creates its own databases there
  --scale-sizes L   storefront sizes of the scale section (default 100000,300000,1000000;
                    --quick 10000,30000)
  --market-sizes L  storefront-only catalogs the market section serves (default 1000000; --quick
                    20000), each seeded once with --storefront-products into bench/.cache
  --shapes-sizes L  storefront-only catalogs the shapes section serves, seeded like the market
                    section's (default 1000000; --quick 20000): ten filter shapes, distinct
                    filters from the catalog's vocabulary, one at a time and at --connections
  --subscribers L   stream subscriber counts (default 10,1000,5000; --quick 10,100,500); the
                    smallest isolates the price log's hop from the fan-out
  --rates L         stream events per second (default 10,100); without --quick, --subscribers
                    or --rates the grid gains the scale scenario, 10000 subscribers × 10/s
  --import-variants N  variants in the import file (default 1000000; --quick 50000)
  watch, prices     bench/watch-bench.ts and bench/product-prices-bench.ts, run as they are
                    (watch: --duration as the stream's, --quick at 5% of the subscribers;
                    prices: --duration and --connections as distinct's, --postgres, --quick
                    500 products); their tables are kept with ratios to their references
  --render FILE     measure nothing: rewrite FILE.json's Markdown table (and the README's) from it
`;
}

function positiveInt(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer, got "${raw}"`);
  return value;
}

function list(name: string, raw: string | undefined, fallback: number[]): number[] {
  return raw === undefined ? fallback : raw.split(',').map((part) => positiveInt(name, part.trim(), 0));
}

function parseFlags(argv: string[]) {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      products: { type: 'string' },
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      duration: { type: 'string' },
      rounds: { type: 'string' },
      connections: { type: 'string' },
      seed: { type: 'string' },
      cli: { type: 'string' },
      redis: { type: 'string' },
      postgres: { type: 'string' },
      'scale-sizes': { type: 'string' },
      'market-sizes': { type: 'string' },
      'shapes-sizes': { type: 'string' },
      subscribers: { type: 'string' },
      rates: { type: 'string' },
      'import-variants': { type: 'string' },
      help: { type: 'boolean', default: false },
      render: { type: 'string' },
    },
  });
  const quick = values.quick;
  const only = values.only === undefined ? [...SECTIONS] : values.only.split(',').map((s) => s.trim());
  for (const section of only) {
    if (!(SECTIONS as readonly string[]).includes(section)) throw new Error(`--only: unknown section "${section}" (known: ${SECTIONS.join(', ')})`);
  }
  const duration = values.duration === undefined ? undefined : positiveInt('duration', values.duration, 1);
  return {
    help: values.help,
    render: values.render,
    quick,
    only: new Set(only as Section[]),
    products: positiveInt('products', values.products, quick ? 5_000 : 100_000),
    seed: values.seed,
    cli: values.cli ?? join(SERVER_DIR, 'src', 'cli', 'main.ts'),
    redisUrl: values.redis ?? 'redis://127.0.0.1:6379/15',
    postgresUrl: values.postgres === 'none' ? undefined : (values.postgres ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/u, ''),
    scaleSizes: list('scale-sizes', values['scale-sizes'], quick ? [10_000, 30_000] : [100_000, 300_000, 1_000_000]),
    marketSizes: list('market-sizes', values['market-sizes'], quick ? [20_000] : [1_000_000]),
    shapesSizes: list('shapes-sizes', values['shapes-sizes'], quick ? [20_000] : [1_000_000]),
    distinct: { seconds: duration ?? (quick ? 2 : 6), connections: positiveInt('connections', values.connections, 50) },
    http: {
      durationSeconds: duration ?? (quick ? 1 : 5),
      warmupSeconds: quick ? 1 : 2,
      rounds: positiveInt('rounds', values.rounds, quick ? 2 : 3),
      connections: positiveInt('connections', values.connections, 50),
    },
    search: { samples: quick ? 300 : 2_000, scanSamples: quick ? 20 : 50 },
    paging: { samples: quick ? 100 : 500, limit: 20 },
    stream: {
      subscribers: list('subscribers', values.subscribers, quick ? [10, 100, 500] : [10, 1_000, 5_000]),
      rates: list('rates', values.rates, [10, 100]),
      durationSeconds: duration ?? (quick ? 3 : 10),
      // The 10,000 × 10/s scale scenario joins the full run's default grid (not --quick, not an explicit grid).
      scale: !quick && values.subscribers === undefined && values.rates === undefined,
    },
    importVariants: positiveInt('import-variants', values['import-variants'], quick ? 50_000 : 1_000_000),
  };
}

type Flags = ReturnType<typeof parseFlags>;

/** Runs a standalone bench script (progress on stderr) and keeps the table it prints. */
async function runScript(script: string, args: readonly string[]): Promise<ScriptTable> {
  const run = await runCli(join(BENCH_DIR, script), args, { echo: true, timeoutMs: 3_600_000 });
  return parseScriptTable(run.stdout);
}

interface Catalog {
  dbFile: string;
  proKey: string;
}

/** A storefront-only SQLite catalog of `size` products in bench/.cache, seeded once. */
async function prepareStorefrontCatalog(flags: Flags, size: number): Promise<string> {
  const cache = join(BENCH_DIR, '.cache');
  mkdirSync(cache, { recursive: true });
  const dbFile = join(cache, `storefront-${size}.db`);
  if (!existsSync(`${dbFile}.ready`)) {
    rmSync(dbFile, { force: true });
    await runCli(flags.cli, ['seed', '--db', `sqlite:${dbFile}`, '--storefront-products', String(size)], { echo: true, timeoutMs: 6 * 3_600_000 });
    writeFileSync(`${dbFile}.ready`, new Date().toISOString());
  }
  return dbFile;
}

/** The same catalog in a PostgreSQL database of its own, seeded once (marked by a table of the bench's). */
async function preparePostgresStorefront(flags: Flags, size: number): Promise<string> {
  const name = `bench_storefront_${size}`;
  const admin = new pg.Client({ connectionString: `${flags.postgresUrl!}/postgres` });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = `${flags.postgresUrl!}/${name}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const ready = await client.query("SELECT 1 FROM pg_tables WHERE tablename = 'bench_seeded'");
    if (ready.rowCount === 0) {
      await runCli(flags.cli, ['seed', '--db', url, '--storefront-products', String(size)], { echo: true, timeoutMs: 6 * 3_600_000 });
      await client.query('CREATE TABLE bench_seeded (at timestamptz NOT NULL DEFAULT now())');
    }
  } finally {
    await client.end();
  }
  return url;
}

/** Seeds once per (size, seed, CLI) into bench/.cache and reuses it: seeding is deterministic. */
async function prepareCatalog(flags: Flags): Promise<Catalog> {
  const cache = join(BENCH_DIR, '.cache');
  mkdirSync(cache, { recursive: true });
  const dbFile = join(cache, `catalog-${flags.products}-seed-${flags.seed ?? 'default'}.db`);
  const marker = `${dbFile}.ready`;
  const seededBy = existsSync(marker) ? (JSON.parse(readFileSync(marker, 'utf8')) as { cli?: string }).cli : undefined;
  if (seededBy !== flags.cli) {
    for (const suffix of ['.ready', '', '-wal', '-shm']) rmSync(`${dbFile}${suffix}`, { force: true });
    progress(`seeding ${flags.products} products into ${dbFile}`);
    const run = await runCli(flags.cli, ['seed', '--db', `sqlite:${dbFile}`, '--products', String(flags.products), ...(flags.seed === undefined ? [] : ['--seed', flags.seed])], { echo: true });
    writeFileSync(marker, `${JSON.stringify({ products: flags.products, seed: flags.seed ?? null, cli: flags.cli, seconds: run.ms / 1000 })}\n`);
    progress(`seeded in ${(run.ms / 1000).toFixed(1)} s`);
  } else {
    progress(`reusing ${dbFile} (delete ${marker} to reseed)`);
  }
  const keys = await runCli(flags.cli, ['keys', 'create', '--db', `sqlite:${dbFile}`, '--plan', 'pro']);
  const proKey = keys.stdout.trim().split('\n').at(-1)?.trim();
  if (proKey === undefined || proKey === '') throw new Error('keys create printed no key');
  return { dbFile, proKey };
}

/** Creates database `name` on the PostgreSQL server unless it exists. */
async function ensureDatabase(serverUrl: string, name: string, drop = false): Promise<string> {
  const client = new pg.Client({ connectionString: `${serverUrl}/postgres` });
  await client.connect();
  try {
    // `name` is built by this file from digits, letters and underscores: identifiers cannot be bound.
    if (drop) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    const { rows } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rows.length === 0) await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return `${serverUrl}/${name}`;
}

/** The bench catalog in PostgreSQL, seeded like the SQLite one, once per (size, seed, CLI). */
async function preparePostgresCatalog(flags: Flags, serverUrl: string): Promise<string> {
  const name = `catalog_bench_${flags.products}_${(flags.seed ?? 'default').replace(/\W/gu, '_')}`;
  const marker = join(BENCH_DIR, '.cache', `${name}.postgres.ready`);
  const seededBy = existsSync(marker) ? (JSON.parse(readFileSync(marker, 'utf8')) as { cli?: string; url?: string }) : undefined;
  if (seededBy?.cli === flags.cli && seededBy.url === serverUrl) {
    progress(`reusing PostgreSQL database ${name} (delete ${marker} to reseed)`);
    return `${serverUrl}/${name}`;
  }
  const url = await ensureDatabase(serverUrl, name, true);
  progress(`seeding ${flags.products} products into PostgreSQL database ${name}`);
  const run = await runCli(flags.cli, ['seed', '--db', url, '--products', String(flags.products), ...(flags.seed === undefined ? [] : ['--seed', flags.seed])], { echo: true });
  mkdirSync(join(BENCH_DIR, '.cache'), { recursive: true });
  writeFileSync(marker, `${JSON.stringify({ products: flags.products, seed: flags.seed ?? null, cli: flags.cli, url: serverUrl, seconds: run.ms / 1000 })}\n`);
  return url;
}

interface VariantList {
  data: CatalogVariant[];
  meta: { total: number };
}

/** The benchmarked URLs, with ids of a real product from the middle of the catalog. */
async function discoverOperations(apiUrl: string, key: string): Promise<HttpOperation[]> {
  const auth = { authorization: key };
  const first = await getJson<VariantList>(`${apiUrl}/v2/variants?limit=1`, auth);
  const middle = await getJson<VariantList>(`${apiUrl}/v2/variants?limit=1&page=${Math.max(1, Math.floor(first.meta.total / 2))}`, auth);
  const variant = middle.data[0] ?? first.data[0];
  if (variant === undefined) throw new Error('the catalog has no variants');
  return operations(variant.product_id, variant.sku, variant.gtin.slice(-8), key);
}

function operations(productId: string, sku: string, gtinFragment: string, key: string): HttpOperation[] {
  const auth = { authorization: key };
  return [
    { name: 'getProduct', path: `/v2/products/${encodeURIComponent(productId)}`, headers: auth },
    { name: 'searchVariants (gtin)', path: `/v2/variants?gtin=${gtinFragment}`, headers: auth },
    { name: 'searchVariants (sku)', path: `/v2/variants?sku=${encodeURIComponent(sku)}`, headers: auth },
    { name: 'listTopBrands', path: '/v2/brands', headers: auth },
    { name: 'countGtins', path: '/gtin/count', headers: { authorization: `Bearer ${key}` } },
    { name: 'listStorefrontProducts', path: '/v3/storefront/products?limit=20', headers: auth },
  ];
}

/** Puts the latest full run's table into bench/README.md between its markers. */
function updateReadme(markdown: string): void {
  const readme = join(BENCH_DIR, 'README.md');
  if (!existsSync(readme)) return;
  const text = readFileSync(readme, 'utf8');
  const start = '<!-- bench:latest:start -->';
  const end = '<!-- bench:latest:end -->';
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from === -1 || to < from) return;
  const body = markdown.replace(/^# .*\n/, '').replaceAll(/^## /gm, '### ');
  writeFileSync(readme, `${text.slice(0, from + start.length)}\n${body}${text.slice(to)}`);
}

/**
 * A run of some sections (`--only`) keeps the other sections of the same day's file, marked as
 * carried over: every ratio is still from figures measured side by side within one section.
 */
function carryOver(results: BenchResults, measured: ReadonlySet<Section>, file: string): void {
  if (!existsSync(file)) return;
  let earlier: BenchResults;
  try {
    earlier = JSON.parse(readFileSync(file, 'utf8')) as BenchResults;
  } catch {
    return;
  }
  for (const section of SECTIONS) {
    if (measured.has(section) || earlier[section] === undefined) continue;
    Object.assign(results, { [section]: earlier[section] });
    // The section's own notes go with it; one carried over before keeps naming the run that measured it.
    const own = earlier.notes.filter((note) => note.startsWith(`${section}: `));
    if (!own.some((note) => note.startsWith(`${section}: carried over`))) {
      results.notes.push(`${section}: carried over from the run started ${earlier.startedAt} (products ${String(earlier.settings['products'])}).`);
    }
    results.notes.push(...own);
  }
}

async function main(): Promise<number> {
  const flags = parseFlags(process.argv.slice(2));
  if (flags.help) {
    process.stdout.write(usage());
    return 0;
  }
  if (flags.render !== undefined) {
    const results = JSON.parse(readFileSync(flags.render, 'utf8')) as BenchResults;
    const markdown = renderMarkdown(results);
    writeFileSync(flags.render.replace(/\.json$/u, '.md'), markdown);
    if (!results.date.endsWith('-quick')) updateReadme(markdown);
    process.stdout.write(markdown);
    return 0;
  }
  const startedAt = new Date();
  const results: BenchResults = {
    date: startedAt.toISOString().slice(0, 10),
    startedAt: startedAt.toISOString(),
    machine: describeMachine(),
    settings: {
      quick: flags.quick,
      products: flags.products,
      sections: [...flags.only],
      connections: flags.http.connections,
      httpRoundSeconds: flags.http.durationSeconds,
      rounds: flags.http.rounds,
      streamSeconds: flags.stream.durationSeconds,
    },
    notes: [],
  };
  const notes = results.notes;
  const needsCatalog = ['http', 'distinct', 'search', 'paging', 'stream'].some((s) => flags.only.has(s as Section));
  let catalog: Catalog | undefined;
  if (needsCatalog) {
    try {
      catalog = await prepareCatalog(flags);
    } catch (error) {
      notes.push(`catalog: could not seed or create a key (${(error as Error).message}); sections needing the server ran without it.`);
    }
  }
  let server: RunningServer | undefined;
  if (catalog !== undefined && (flags.only.has('http') || flags.only.has('search') || flags.only.has('paging'))) {
    try {
      server = await startServer(flags.cli, ['--db', `sqlite:${catalog.dbFile}`, '--log-level', 'warn']);
      progress(`server listening on ${server.apiUrl} (pid ${server.pid})`);
    } catch (error) {
      notes.push(`server: did not start (${(error as Error).message}).`);
    }
  }
  try {
    if (flags.only.has('http')) {
      progress('section http');
      try {
        const ops = server !== undefined && catalog !== undefined
          ? await discoverOperations(server.apiUrl, catalog.proKey)
          : operations('3f0e9a8c-6f0b-4c55-9d8e-2a1b7c4d5e6f', 'DD1391-100', '5866123', 'bench-key');
        results.http = await runHttpBench({ operations: ops, ...(server === undefined ? {} : { serverUrl: server.apiUrl }), ...flags.http, notes });
      } catch (error) {
        notes.push(`http: failed (${(error as Error).message}).`);
      }
    }
    if (flags.only.has('search')) {
      progress('section search');
      if (catalog === undefined) notes.push('search: skipped, no seeded catalog.');
      else {
        try {
          results.search = await runSearchBench({ dbFile: catalog.dbFile, ...(server === undefined ? {} : { apiUrl: server.apiUrl, key: catalog.proKey }), ...flags.search, notes });
        } catch (error) {
          notes.push(`search: failed (${(error as Error).message}).`);
        }
      }
    }
    if (flags.only.has('paging')) {
      progress('section paging');
      if (server === undefined || catalog === undefined) notes.push('paging: skipped, the server is not running.');
      else {
        try {
          results.paging = await runPagingBench({ apiUrl: server.apiUrl, key: catalog.proKey, ...flags.paging });
        } catch (error) {
          notes.push(`paging: failed (${(error as Error).message}).`);
        }
      }
    }
  } finally {
    closeClient();
    await server?.stop();
  }
  if (flags.only.has('distinct')) {
    progress('section distinct');
    results.distinct = [];
    if (catalog === undefined) notes.push('distinct: SQLite skipped, no seeded catalog.');
    else {
      try {
        results.distinct.push(await runDistinctBench({ db: `sqlite:${catalog.dbFile}`, cli: flags.cli, ...flags.distinct }));
      } catch (error) {
        notes.push(`distinct: SQLite failed (${(error as Error).message}).`);
      }
    }
    if (flags.postgresUrl !== undefined) {
      try {
        const url = await preparePostgresCatalog(flags, flags.postgresUrl);
        results.distinct.push(await runDistinctBench({ db: url, cli: flags.cli, ...flags.distinct }));
      } catch (error) {
        notes.push(`distinct: PostgreSQL failed (${(error as Error).message}).`);
      }
    }
  }
  if (flags.only.has('market')) {
    progress('section market');
    results.market = [];
    for (const size of flags.marketSizes) {
      try {
        const dbs = [`sqlite:${await prepareStorefrontCatalog(flags, size)}`];
        if (flags.postgresUrl !== undefined) dbs.push(await preparePostgresStorefront(flags, size));
        for (const db of dbs) results.market.push(await runMarketBench({ db, cli: flags.cli, requests: flags.quick ? 100 : 500, seconds: flags.distinct.seconds, connections: flags.distinct.connections }));
      } catch (error) {
        notes.push(`market: ${size} failed (${(error as Error).message}).`);
      }
    }
  }
  if (flags.only.has('shapes')) {
    progress('section shapes');
    results.shapes = [];
    for (const size of flags.shapesSizes) {
      try {
        const dbs = [`sqlite:${await prepareStorefrontCatalog(flags, size)}`];
        if (flags.postgresUrl !== undefined) dbs.push(await preparePostgresStorefront(flags, size));
        for (const db of dbs) {
          results.shapes.push(...(await runShapesBench({ db, clis: [flags.cli], requests: flags.quick ? 100 : 300, filters: 20_000, seconds: flags.distinct.seconds, rounds: 2, connections: flags.distinct.connections })));
        }
      } catch (error) {
        notes.push(`shapes: ${size} failed (${(error as Error).message}).`);
      }
    }
  }
  if (flags.only.has('scale')) {
    progress('section scale');
    results.scale = [];
    for (const size of flags.scaleSizes) {
      try {
        results.scale.push(await measureScale(size));
      } catch (error) {
        notes.push(`scale: ${size} failed (${(error as Error).message}).`);
      }
    }
  }
  if (flags.only.has('stream')) {
    progress('section stream');
    const grid = flags.stream.subscribers.flatMap((subscribers) => flags.stream.rates.map((rate) => ({ subscribers, rate })));
    const scale = flags.stream.scale && !grid.some((s) => s.subscribers === SCALE_SCENARIO.subscribers && s.rate === SCALE_SCENARIO.rate);
    const scenarios = scale ? [...grid, SCALE_SCENARIO] : grid;
    try {
      results.stream = await runStreamBench({ cli: flags.cli, ...(catalog === undefined ? {} : { catalog }), redisUrl: flags.redisUrl, scenarios, durationSeconds: flags.stream.durationSeconds, notes });
    } catch (error) {
      notes.push(`stream: failed (${(error as Error).message}).`);
    }
  }
  if (flags.only.has('watch')) {
    progress('section watch');
    try {
      results.watch = await runScript('watch-bench.ts', ['--duration', String(flags.stream.durationSeconds), ...(flags.quick ? ['--scale', '0.05'] : [])]);
    } catch (error) {
      notes.push(`watch: failed (${(error as Error).message}).`);
    }
  }
  if (flags.only.has('prices')) {
    progress('section prices');
    try {
      results.prices = await runScript('product-prices-bench.ts', [
        '--seconds', String(flags.distinct.seconds),
        '--connections', String(flags.distinct.connections),
        '--postgres', flags.postgresUrl ?? 'none',
        ...(flags.quick ? ['--products', '500'] : []),
      ]);
    } catch (error) {
      notes.push(`prices: failed (${(error as Error).message}).`);
    }
  }
  if (flags.only.has('import')) {
    progress('section import');
    try {
      const postgres = flags.postgresUrl === undefined ? undefined : { createDatabase: () => ensureDatabase(flags.postgresUrl!, 'catalog_bench_import', true) };
      results.import = await runImportBench({ cli: flags.cli, variants: flags.importVariants, variantsPerProduct: 10, notes, ...(postgres === undefined ? {} : { postgres }) });
    } catch (error) {
      notes.push(`import: failed (${(error as Error).message}).`);
    }
  }
  results.finishedAt = new Date().toISOString();
  if (flags.quick) results.date = `${results.date}-quick`;
  carryOver(results, flags.only, join(BENCH_DIR, 'results', `${results.date}.json`));
  const written = writeResults(results, join(BENCH_DIR, 'results'));
  const markdown = renderMarkdown(results);
  if (!flags.quick) updateReadme(markdown);
  process.stdout.write(markdown);
  progress(`wrote ${written.json} and ${written.markdown}`);
  return 0;
}

try {
  process.exitCode = await main();
} catch (error) {
  process.stderr.write(`bench: ${(error as Error).message}\n\n${usage()}`);
  process.exitCode = 2;
}
