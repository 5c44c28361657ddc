// One run's results: the JSON record and its Markdown rendering, both written to
// bench/results/<YYYY-MM-DD>.{json,md}. A later run on the same day replaces them.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { join } from 'node:path';
import type { HttpOperationResult, TargetResult } from './http-bench.ts';
import type { DistinctResult } from './distinct-bench.ts';
import type { ImportResult } from './import-bench.ts';
import type { ScaleRow } from './storefront-scale-bench.ts';
import { renderMarket, type MarketRow } from './market-bench.ts';
import { renderShapes, type ShapeRow } from './shapes-bench.ts';
import type { PagingResult } from './paging-bench.ts';
import type { SearchResult } from './search-bench.ts';
import type { StreamRun } from './stream-bench.ts';
import type { LatencySummary } from './lib/stats.ts';

export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  node: string;
  kernel: string;
  loadAverageAtStart: number[];
}

export interface BenchResults {
  date: string;
  startedAt: string;
  finishedAt?: string;
  machine: Machine;
  settings: Record<string, unknown>;
  notes: string[];
  http?: HttpOperationResult[];
  distinct?: DistinctResult[];
  scale?: ScaleRow[];
  market?: MarketRow[];
  /** bench/shapes-bench.ts: ten filter shapes, one row per shape, engine and server. */
  shapes?: ShapeRow[];
  search?: SearchResult;
  paging?: PagingResult;
  stream?: StreamRun[];
  import?: ImportResult;
  /** bench/watch-bench.ts's table (filtered streams beside their unfiltered references), as printed. */
  watch?: ScriptTable;
  /** bench/product-prices-bench.ts's table (getProductPrices beside a bare server), as printed. */
  prices?: ScriptTable;
}

/** A Markdown table a standalone bench script printed: its columns and rows of cells by column. */
export interface ScriptTable {
  columns: string[];
  rows: Record<string, string>[];
}

/** The last Markdown table in `text` (a script's stdout). */
export function parseScriptTable(text: string): ScriptTable {
  const cells = (line: string): string[] => line.trim().replace(/^\|/u, '').replace(/\|$/u, '').split('|').map((cell) => cell.trim());
  const lines = text.split('\n').filter((line) => line.trim().startsWith('|'));
  const header = lines.findLastIndex((line, index) => index + 1 < lines.length && cells(lines[index + 1]!).every((cell) => /^:?-+:?$/u.test(cell)));
  if (header === -1) throw new Error('the script printed no Markdown table');
  const columns = cells(lines[header]!);
  const rows = lines.slice(header + 2).map((line) => Object.fromEntries(cells(line).map((cell, index) => [columns[index] ?? String(index), cell])));
  return { columns, rows };
}

const cellNumber = (row: Record<string, string> | undefined, column: string): number => Number.parseFloat(row?.[column] ?? '');

/**
 * Each filtered watch scenario against the unfiltered reference of its kind (`ids …`, `price …`)
 * on the same log, same run: p99 and CPU per delivered event as ratios.
 */
function watchRatios(table: ScriptTable): string[][] {
  const rows = table.rows;
  const kind = (row: Record<string, string>): string => (row['scenario'] ?? '').split(' ')[0] ?? '';
  const isReference = (row: Record<string, string>): boolean => (row['scenario'] ?? '').includes('unfiltered reference');
  const p99 = 'p99 ms';
  // The cell is `total (user only)`: parseFloat reads the total.
  const cpu = 'CPU µs per delivered event (user only)';
  return rows
    .filter((row) => !isReference(row))
    .map((row) => {
      const reference = rows.find((other) => isReference(other) && kind(other) === kind(row) && other['log'] === row['log']);
      return [
        row['scenario'] ?? '',
        row['log'] ?? '',
        `${num(cellNumber(row, p99), 1)} / ${num(cellNumber(reference, p99), 1)}`,
        times(cellNumber(row, p99) / cellNumber(reference, p99)),
        times(cellNumber(row, cpu) / cellNumber(reference, cpu)),
      ];
    });
}

/** getProductPrices req/s against the bare server's on the same engine, same run. */
function pricesRatios(table: ScriptTable): string[][] {
  const engines = [...new Set(table.rows.map((row) => (row['engine'] ?? '').replace(/ run$/u, '')))].filter((engine) => engine !== '');
  return engines.map((engine) => {
    const ours = table.rows.find((row) => (row['what'] ?? '').startsWith('getProductPrices') && row['engine'] === engine);
    const bare = table.rows.find((row) => (row['what'] ?? '').startsWith('bare') && (row['engine'] ?? '').replace(/ run$/u, '') === engine);
    return [engine, num(cellNumber(ours, 'req/s')), num(cellNumber(bare, 'req/s')), times(cellNumber(ours, 'req/s') / cellNumber(bare, 'req/s'))];
  });
}

const printedTable = (printed: ScriptTable): string => table(printed.columns, printed.rows.map((row) => printed.columns.map((column) => row[column] ?? '')));

export function describeMachine(): Machine {
  const cpuList = cpus();
  return {
    cpu: cpuList[0]?.model.trim() ?? 'unknown',
    cores: cpuList.length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    kernel: release(),
    loadAverageAtStart: loadavg().map((value) => Math.round(value * 100) / 100),
  };
}

const num = (value: number | undefined, digits = 0): string => (value === undefined || !Number.isFinite(value) ? '–' : value.toFixed(digits));
const times = (value: number | undefined): string => (value === undefined || !Number.isFinite(value) ? '–' : `${value.toFixed(2)}×`);
const target = (result: TargetResult | undefined): string[] => [num(result?.rps), num(result?.p50), num(result?.p99)];
const latency = (summary: LatencySummary | undefined): string => (summary === undefined ? '–' : `${num(summary.p50, 2)} / ${num(summary.p99, 2)}`);

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => ' --- ').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');
}

export function renderMarkdown(results: BenchResults): string {
  const m = results.machine;
  const parts: string[] = [
    `# Benchmark ${results.date}`,
    '',
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB, Node ${m.node}, Linux ${m.kernel}; load average at start ${m.loadAverageAtStart.join(' ')}.`,
    `Settings: ${Object.entries(results.settings).map(([k, v]) => `${k} ${JSON.stringify(v)}`).join(', ')}.`,
    'Benchmarks report; they assert nothing. Ratios compare figures measured side by side in this run.',
  ];
  if (results.http !== undefined) {
    parts.push('', '## HTTP per operation', '', '(a) our server, (b) bare `node:http` with the same bytes, (c) Prism on the same spec. Requests/s and latency (ms) are medians over alternated rounds. Each operation repeats one URL, so (a) answers from its in-memory caches (product documents, result pages, aggregates; kept until the catalog changes); the GTIN section below times 2,000 distinct, mostly uncached queries.', '');
    parts.push(
      table(
        ['operation', 'bytes', 'a req/s', 'a p50', 'a p99', 'b req/s', 'b p50', 'b p99', 'c req/s', 'c p50', 'c p99', 'a/b', 'c/b', 'a/c'],
        results.http.map((r) => [`\`${r.name}\``, String(r.bytes), ...target(r.server), ...target(r.bare), ...target(r.prism), times(r.serverToBare), times(r.prismToBare), times(r.serverToPrism)]),
      ),
    );
  }
  if (results.distinct !== undefined && results.distinct.length > 0) {
    parts.push('', '## Distinct URLs per operation', '', 'No two requests of a workload alike (20,000 product ids, 20,000 SKUs, 5,000 GTIN fragments of 4–8 digits, 5,000 storefront filters), beside the same operation repeating one URL (a cache hit) and a bare `node:http` server sending one product\'s bytes for any path; 50 connections by default, the load generator on the same cores.', '');
    const names = results.distinct[0]!.rows.map((row) => row.name);
    parts.push(
      table(
        ['workload', ...results.distinct.map((run) => `${run.db.split(':')[0] === 'sqlite' ? 'SQLite' : 'PostgreSQL'} req/s, p50 / p99 ms`)],
        names.map((name) => [name, ...results.distinct!.map((run) => { const row = run.rows.find((r) => r.name === name); return row === undefined ? '–' : `${num(row.rps)}, ${num(row.p50)} / ${num(row.p99)}${row.non2xx > 0 ? ` (${row.non2xx} non-2xx)` : ''}`; })]).concat([['getProduct distinct ÷ bare', ...results.distinct.map((run) => times(run.getProductVsBare))]]),
      ),
    );
  }
  if (results.scale !== undefined && results.scale.length > 0) {
    const scale = results.scale;
    parts.push('', '## Storefront index at scale', '', 'The seed\'s storefront products in the storefront index, in process; 2,000 distinct searches per kind one at a time (p50 / p99 ms, mean matches); the rest of a request does not grow with the catalog (see the distinct section).', '');
    parts.push(
      table(
        ['search kind', ...scale.map((row) => `${row.size.toLocaleString('en')} products`)],
        scale[0]!.kinds.map((kind) => [kind.kind, ...scale.map((row) => { const k = row.kinds.find((entry) => entry.kind === kind.kind); return k === undefined ? '–' : `${num(k.p50, 2)} / ${num(k.p99, 2)} (${k.meanTotal})`; })]).concat([['load s, heap + array buffers MiB, RSS MiB', ...scale.map((row) => `${num(row.loadSeconds, 1)}, ${num(row.heapMiB)} + ${num(row.arrayBuffersMiB ?? 0)}, ${num(row.rssMiB ?? 0)}`)]]),
      ),
    );
  }
  if (results.market !== undefined && results.market.length > 0) {
    parts.push('', '## Storefront at market size', '', '`catalog serve` on a storefront-only catalog: seconds from spawn to /readyz 200, RSS once ready, distinct searches one at a time over HTTP (p50 / p99 ms), and distinct 3-leaf filters at 50 connections beside a bare node:http server replaying the same bytes.', '');
    parts.push(renderMarket(results.market));
  }
  if (results.shapes !== undefined && results.shapes.length > 0) {
    parts.push('', '## Filter shapes', '', '`catalog serve` on a storefront-only catalog, ten shapes of filter, each as distinct filters built around products sampled through the API (their shops, brands, product types, tags, prices and instants): one at a time over one connection (p50 / p99 ms, and the same client\'s p99 against a bare `node:http` server replaying the same answers), then other filters of the shape at 50 connections in rounds alternated with that bare server replaying the answers in turn.', '');
    parts.push(renderShapes(results.shapes));
  }
  if (results.search !== undefined) {
    const s = results.search;
    parts.push('', '## GTIN substring search', '', `${s.variants} rows in \`${s.variantsTable}\`; random fragments of 4 to 8 digits from stored GTINs; each answer has the exact total and the first 20 variants. p50 / p99 in ms, one query at a time.`, '');
    parts.push(
      table(
        ['path', 'samples', 'p50 / p99 ms', 'full scan p50 ÷ this p50'],
        [
          ['API `GET /v2/variants?gtin=`', num(s.http?.count), latency(s.http), times(s.httpSpeedup)],
          ['SQLite store in process (suffix index)', num(s.store.count), latency(s.store), times(s.storeSpeedup)],
          [`SQLite full scan (\`${s.variantsTable} LIKE '%…%'\`)`, num(s.fullScan.count), latency(s.fullScan), '1.00×'],
        ],
      ),
    );
  }
  if (results.paging !== undefined) {
    const p = results.paging;
    parts.push('', '## Cursor paging', '', `${p.total} storefront products; deep page: \`cursor > ${p.deepCursor}\`.`, '');
    parts.push(
      table(
        ['page', 'samples', 'p50 / p99 ms'],
        [
          ['page 1', num(p.firstPage.count), latency(p.firstPage)],
          ['deep cursor page', num(p.deepPage.count), latency(p.deepPage)],
          ['deep ÷ page 1', '', `${times(p.p50Ratio)} / ${times(p.p99Ratio)}`],
        ],
      ),
    );
  }
  if (results.stream !== undefined) {
    const runs = results.stream;
    parts.push('', '## Price stream fan-out', '', 'bare: `node:http` broadcaster; sqlite: the server, embedded price log; redis: the server through Redis. Latency is publish-to-receive in ms.', '');
    parts.push(
      table(
        ['subscribers × events/s', 'target', 'connected', 'delivered', 'delivered/s', 'vs bare', 'p50 / p99 ms', 'KiB/conn idle / loaded', 'note'],
        runs.map((run) => {
          const bare = runs.find((r) => r.target === 'bare' && r.subscribers === run.subscribers && r.rate === run.rate);
          return [
            `${run.subscribers} × ${run.rate}`,
            run.target,
            `${run.connected}/${run.subscribers}`,
            `${run.delivered}/${run.expected}`,
            num(run.deliveredPerSecond),
            run.target === 'bare' || bare === undefined ? '' : times(run.deliveredPerSecond / bare.deliveredPerSecond),
            latency(run.latency),
            `${num(run.kibPerConnection, 1)} / ${num(run.kibPerConnectionLoaded, 1)}`,
            run.note ?? (run.closedEarly > 0 ? `${run.closedEarly} closed by the server` : ''),
          ];
        }),
      ),
    );
  }
  if (results.stream !== undefined) {
    const hops = logHops(results.stream);
    if (hops.length > 0) {
      parts.push('', 'The price log\'s hop: p99 of the server through each log minus the bare broadcaster\'s p99 (no log at all), same scenario. With few subscribers the fan-out costs next to nothing, so this is the log\'s own delay; with many, fan-out noise dominates.', '');
      parts.push(table(['subscribers × events/s', 'sqlite − bare p99 ms', 'redis − bare p99 ms', 'redis − sqlite p99 ms'], hops.map((hop) => [`${hop.subscribers} × ${hop.rate}`, signed(hop.sqlite), signed(hop.redis), signed(hop.redis - hop.sqlite)])));
    }
    const slopes = marginalMemory(results.stream);
    if (slopes.length > 0) {
      parts.push('', 'Memory per added connection: the RSS slope between consecutive subscriber counts at one rate, so what every process holds anyway (heap, the price log\'s page cache, events retained for replay) is not charged to connections.', '');
      parts.push(table(['target', 'events/s', 'subscribers', 'KiB per added connection, idle / loaded'], slopes.map((slope) => [slope.target, String(slope.rate), `${slope.from} → ${slope.to}`, `${num(slope.idle, 1)} / ${num(slope.loaded, 1)}`])));
    }
  }
  if (results.import !== undefined) {
    const i = results.import;
    const rows = [['SQLite', String(i.products), String(i.variants), num(i.fileBytes / 1e6), num(i.importSeconds, 1), num(i.variantsPerSecond)]];
    if (i.postgres !== undefined) rows.push(['PostgreSQL', String(i.products), String(i.variants), num(i.fileBytes / 1e6), num(i.postgres.importSeconds, 1), num(i.postgres.variantsPerSecond)]);
    parts.push('', '## Import', '', table(['engine', 'products', 'variants', 'NDJSON MB', 'import s', 'variants/s'], rows), '', `File from ${i.source}; \`catalog import\` said: ${i.summary}${i.postgres === undefined ? '' : `; into PostgreSQL: ${i.postgres.summary}`}`);
  }
  if (results.watch !== undefined) {
    parts.push('', '## Watch products: filtered streams', '', '`bench/watch-bench.ts` as it printed it: each filtered scenario beside the unfiltered reference of its kind, on the same log, in the same run (issue 26: `ids` p99 ≤ 100 ms and CPU per delivered event ≤ 1.2× the reference; `price` p99 ≤ 2× the reference).', '');
    parts.push(printedTable(results.watch), '');
    parts.push(table(['scenario', 'log', 'p99 ms, filtered / reference', 'p99 ÷ reference', 'CPU per delivered ÷ reference'], watchRatios(results.watch)));
  }
  if (results.prices !== undefined) {
    parts.push('', '## Watch products: getProductPrices', '', '`bench/product-prices-bench.ts` as it printed it: distinct products at the bench\'s connections beside a bare `node:http` server sending one answer\'s bytes, per engine, same run (issue 26: ≥ 0.5× bare).', '');
    parts.push(printedTable(results.prices), '');
    parts.push(table(['engine', 'getProductPrices req/s', 'bare req/s', 'ratio'], pricesRatios(results.prices)));
  }
  if (results.notes.length > 0) parts.push('', '## Notes', '', ...results.notes.map((note) => `- ${note}`));
  return `${parts.join('\n')}\n`;
}

/** p99 through each price log minus the bare broadcaster's, per scenario where all three ran. */
function logHops(runs: readonly StreamRun[]): { subscribers: number; rate: number; sqlite: number; redis: number }[] {
  const p99 = (target: string, subscribers: number, rate: number): number | undefined => {
    const run = runs.find((r) => r.target === target && r.subscribers === subscribers && r.rate === rate && r.connected > 0);
    return run === undefined || !Number.isFinite(run.latency.p99) ? undefined : run.latency.p99;
  };
  const hops: { subscribers: number; rate: number; sqlite: number; redis: number }[] = [];
  for (const run of runs) {
    if (run.target !== 'bare') continue;
    const bare = p99('bare', run.subscribers, run.rate);
    const sqlite = p99('sqlite', run.subscribers, run.rate);
    const redis = p99('redis', run.subscribers, run.rate);
    if (bare === undefined || sqlite === undefined || redis === undefined) continue;
    hops.push({ subscribers: run.subscribers, rate: run.rate, sqlite: sqlite - bare, redis: redis - bare });
  }
  return hops;
}

function signed(value: number): string {
  return `${value >= 0 ? '+' : '−'}${Math.abs(value).toFixed(1)}`;
}

/** RSS growth per added subscriber between consecutive subscriber counts, per target and rate. */
function marginalMemory(runs: readonly StreamRun[]): { target: string; rate: number; from: number; to: number; idle: number; loaded: number }[] {
  const slopes: { target: string; rate: number; from: number; to: number; idle: number; loaded: number }[] = [];
  const groups = new Map<string, StreamRun[]>();
  for (const run of runs) {
    if (run.connected === 0) continue;
    const key = `${run.target}\u0000${run.rate}`;
    groups.set(key, [...(groups.get(key) ?? []), run]);
  }
  for (const group of groups.values()) {
    if (group.length < 2) continue;
    const sorted = [...group].sort((a, b) => a.connected - b.connected);
    for (let i = 1; i < sorted.length; i += 1) {
      const low = sorted[i - 1]!;
      const high = sorted[i]!;
      const added = high.connected - low.connected;
      if (added <= 0) continue;
      slopes.push({
        target: low.target,
        rate: low.rate,
        from: low.connected,
        to: high.connected,
        idle: (high.rssAfterKib - low.rssAfterKib) / added,
        loaded: (high.rssLoadedKib - low.rssLoadedKib) / added,
      });
    }
  }
  return slopes;
}

export function writeResults(results: BenchResults, directory: string): { json: string; markdown: string } {
  mkdirSync(directory, { recursive: true });
  const json = join(directory, `${results.date}.json`);
  const markdown = join(directory, `${results.date}.md`);
  writeFileSync(json, `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(markdown, renderMarkdown(results));
  return { json, markdown };
}
