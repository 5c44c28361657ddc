// The storefront index alone at the size of a real catalog: loaded from the snapshot `catalog
// serve` reads at start (beside a SQLite catalog), prepared as serve prepares it, then the scale
// bench's distinct searches of each kind one at a time, with a turn of the event loop before each
// (as a server has between requests: what the index makes between searches is made there). No
// HTTP, no documents: set beside market-bench.ts's rows, the difference is the rest of a request.
// Reports; asserts nothing.
//
//   node bench/index-snapshot-bench.ts --db sqlite:/data/sf10m.db [--requests 1000]
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import type { FilterExpr } from '../src/catalog/filter/ast.ts';
import { parseFilter } from '../src/catalog/filter/parse-filter.ts';
import { sqlitePath } from '../src/storage-url.ts';
import { snapshotsIn } from '../src/store/indexed-catalog-store.ts';
import { SqliteCatalogStore } from '../src/store/sqlite/sqlite-catalog-store.ts';
import { SqliteDatabase } from '../src/store/sqlite/sqlite-database.ts';
import { readSnapshot } from '../src/store/storefront-snapshot.ts';
import { progress } from './lib/processes.ts';
import { KINDS } from './storefront-scale-bench.ts';

const { values } = parseArgs({ options: { db: { type: 'string' }, requests: { type: 'string' } } });
if (values.db?.startsWith('sqlite:') !== true) throw new Error('--db sqlite:FILE: a catalog whose index snapshot lies beside it (run `catalog import --kind storefront` on an empty file to write one)');
const requests = Number(values.requests ?? 1000);
const path = sqlitePath(values.db);
const engine = new SqliteCatalogStore(new SqliteDatabase(path));
const { catalog, lastChange } = await engine.storefrontIdentity();
await engine.close();
const started = performance.now();
const read = await readSnapshot(snapshotsIn(dirname(path))(catalog), catalog, lastChange);
if (!('index' in read)) throw new Error(`no snapshot to load (${read.rejected}: ${read.reason})`);
const index = read.index;
const loaded = performance.now();
index.prepare();
progress(`index snapshot: ${index.size} products loaded in ${((loaded - started) / 1000).toFixed(1)} s, prepared in ${((performance.now() - loaded) / 1000).toFixed(1)} s`);
const rows: string[] = ['| kind | p50 ms | p99 ms | searches over 8 ms |', '| --- | --- | --- | --- |'];
for (const [kind, make] of Object.entries(KINDS)) {
  const times: number[] = [];
  for (let i = 0; i < requests; i += 1) {
    const spec = make(i);
    const search = {
      sort: spec.sort ?? 'cursor:asc',
      offset: 0,
      limit: 20,
      ...(spec.text === undefined ? {} : { text: spec.text }),
      ...(spec.filter === undefined ? {} : { filter: parseFilter(spec.filter) as FilterExpr }),
    } as const;
    await new Promise((resolve) => setImmediate(resolve));
    const t0 = performance.now();
    await index.search(search);
    times.push(performance.now() - t0);
  }
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p: number): string => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!.toFixed(2);
  const slow = times.filter((time) => time > 8).length;
  progress(`index snapshot: ${kind}: p50 ${at(50)} ms, p99 ${at(99)} ms, ${slow} over 8 ms`);
  rows.push(`| ${kind} | ${at(50)} | ${at(99)} | ${slow} |`);
}
process.stdout.write(`${rows.join('\n')}\n`);
