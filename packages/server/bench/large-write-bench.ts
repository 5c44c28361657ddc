// A large write while the storefront is read: this process serves distinct searches one at a time
// through IndexedCatalogStore (index and documents, no HTTP) while `catalog import --kind
// storefront` in another process rewrites a share of the products with new prices. Reports the
// seconds from the import's end until a listing shows every rewritten price, and the searches'
// p50/p99/max before and during the write. Reports; asserts nothing.
//
//   node bench/large-write-bench.ts --db sqlite:/tmp/sf.db|postgres://… [--share 0.01] [--from-db] [--marker 12345.67]
// The catalog must hold storefront products of `catalog seed --storefront-products N` (default seed):
// the rewrite is made of the seed's products again. With --from-db it is made of the
// stored documents of every (1/share)-th product instead, for a catalog the seed did not make
// alone (the ten-million catalog copied from a million by SQL, bench/README.md), where generating
// twice the catalog's products to find the rewrite's would take hours.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { parseArgs } from 'node:util';
import { parseFilter } from '../src/catalog/filter/parse-filter.ts';
import { generateStorefrontProducts } from '../src/catalog/seed/generate-catalog.ts';
import { silentLogger } from '../src/logger.ts';
import { openCatalogStores } from '../src/store/open-store.ts';
import { progress, SERVER_DIR } from './lib/processes.ts';
import { KINDS } from './storefront-scale-bench.ts';

const { values } = parseArgs({ options: { db: { type: 'string' }, share: { type: 'string' }, seed: { type: 'string' }, 'from-db': { type: 'boolean' }, marker: { type: 'string' } } });
const db = values.db ?? 'sqlite:./data/catalog.db';
const stores = await openCatalogStores(db, silentLogger, { indexSnapshotDir: 'default' });
const catalog = stores.catalog;
await catalog.warm!();
const size = (await catalog.listStorefrontDocuments({ sort: 'cursor:asc', offset: 0, limit: 1 })).total;
const rewritten = Math.round(size * Number(values.share ?? 0.01));
// A price no seeded product has, so one filter counts the rewritten products (another for a run
// again on a catalog an earlier run rewrote).
const marker = Number(values.marker ?? 12_345.67);
const file = join(mkdtempSync(join(tmpdir(), 'large-write-')), 'rewrite.ndjson');
const lines: string[] = [];
if (values['from-db'] === true) {
  const every = Math.floor(size / rewritten);
  // The cursors first (a narrow index), then those documents: numbering the documents themselves read every one.
  const picked = `SELECT cursor FROM (SELECT cursor, row_number() OVER (ORDER BY cursor) AS n FROM storefront_products) AS numbered WHERE n % ${every} = 0 LIMIT ${rewritten}`;
  const documents: string[] = [];
  if (db.startsWith('sqlite:')) {
    const file = new DatabaseSync(db.slice('sqlite:'.length), { readOnly: true });
    for (const row of file.prepare(`SELECT doc FROM storefront_documents WHERE cursor IN (${picked})`).iterate()) documents.push(row['doc'] as string);
    file.close();
  } else {
    const client = new pg.Client({ connectionString: db });
    await client.connect();
    for (const row of (await client.query<{ document: string }>(`SELECT document FROM storefront_products WHERE cursor IN (${picked})`)).rows) documents.push(row.document);
    await client.end();
  }
  for (const document of documents) lines.push(JSON.stringify({ ...(JSON.parse(document) as object), price_min: marker }));
} else {
  let i = 0;
  for (const product of generateStorefrontProducts({ products: 2 * size, seed: values.seed ?? 'catalog' })) {
    if (i++ % Math.floor(size / rewritten) === 0 && lines.length < rewritten) lines.push(JSON.stringify({ ...product, price_min: marker }));
  }
}
writeFileSync(file, `${lines.join('\n')}\n`);
progress(`large write: ${size} products, rewriting ${lines.length}`);

const kinds = Object.values(KINDS);
const before: number[] = [];
const during: number[] = [];
let phase: number[] = before;
let reading = true;
let n = 0;
const reader = (async () => {
  while (reading) {
    const spec = kinds[n % kinds.length]!(n);
    n += 1;
    const t0 = performance.now();
    await catalog.listStorefrontDocuments({ sort: spec.sort ?? 'cursor:asc', offset: 0, limit: 20, ...(spec.text === undefined ? {} : { text: spec.text }), ...(spec.filter === undefined ? {} : { filter: parseFilter(spec.filter) }) });
    phase.push(performance.now() - t0);
    await new Promise((resolve) => setImmediate(resolve));
  }
})();
await new Promise((resolve) => setTimeout(resolve, 3_000));
phase = during;
const importStarted = performance.now();
const importer = spawn(process.execPath, [join(SERVER_DIR, 'src/cli/main.ts'), 'import', '--db', db, '--kind', 'storefront', file], { stdio: 'ignore' });
await new Promise((resolve) => importer.on('exit', resolve));
const imported = performance.now();
const marked = parseFilter(`price_min = ${marker}`);
for (;;) {
  const { total } = await catalog.listStorefrontDocuments({ sort: 'cursor:asc', offset: 0, limit: 1, filter: marked });
  if (total >= lines.length) break;
  await new Promise((resolve) => setTimeout(resolve, 20));
}
const visible = performance.now();
await new Promise((resolve) => setTimeout(resolve, 1_000));
reading = false;
await reader;
await stores.close();
const stats = (times: number[]): string => {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (p: number): string => (sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN).toFixed(1);
  return `${sorted.length} searches, p50 ${at(0.5)} / p99 ${at(0.99)} / max ${at(1)} ms`;
};
process.stdout.write(
  `| ${db.split(':')[0]} | ${size.toLocaleString('en')} | ${lines.length.toLocaleString('en')} | ${((imported - importStarted) / 1000).toFixed(1)} | ${((visible - imported) / 1000).toFixed(1)} | ${stats(before)} | ${stats(during)} |\n`,
);
