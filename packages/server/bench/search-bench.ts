// GTIN substring search: random 4–8 digit fragments of stored GTINs, timed one at a time through
// the API and through the SQLite store in this process (its suffix index: exact total and the
// first page of 20), against the same question asked as a full scan (`gtin LIKE '%…%'`).
import { DatabaseSync } from 'node:sqlite';
import { SqliteCatalogStore } from '../src/store/sqlite/sqlite-catalog-store.ts';
import { SqliteDatabase } from '../src/store/sqlite/sqlite-database.ts';
import { get } from './lib/http-client.ts';
import { progress } from './lib/processes.ts';
import { seededRandom } from '../src/prices/simulator.ts';
import { ratio, summarize, timeEach, type LatencySummary } from './lib/stats.ts';

export interface SearchResult {
  variants: number;
  /** `table.column` of the full scan. */
  variantsTable: string;
  http?: LatencySummary;
  /** SqliteCatalogStore.searchVariants in process: the exact total and the first page. */
  store: LatencySummary;
  fullScan: LatencySummary;
  /** Full-scan p50 over the store's p50, and over the API's p50. */
  storeSpeedup: number;
  httpSpeedup: number;
  /** Fragments where the store's total and the scan's count disagreed. */
  countMismatches: number;
}

export interface SearchBenchOptions {
  dbFile: string;
  apiUrl?: string;
  key?: string;
  samples: number;
  scanSamples: number;
  notes: string[];
}

const quote = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** The plain table holding one row per variant with its GTIN (`gtin`, or a normalised `gtin14`). */
function findVariantsTable(db: DatabaseSync): { table: string; column: string } {
  const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE 'CREATE VIRTUAL%'").all() as { name: string }[];
  const candidates = tables
    .map((t) => t.name)
    .filter((name) => !/_(data|idx|docsize|config|content)$/.test(name))
    .flatMap((name) => {
      const columns = (db.prepare(`PRAGMA table_info(${quote(name)})`).all() as { name: string }[]).map((c) => c.name);
      const column = columns.find((c) => c === 'gtin') ?? columns.find((c) => /^gtin/i.test(c));
      return column === undefined ? [] : [{ table: name, column }];
    });
  const preferred = candidates.find((c) => /variant/i.test(c.table)) ?? candidates[0];
  if (preferred === undefined) throw new Error(`no table with a gtin column among ${tables.map((t) => t.name).join(', ')}`);
  return preferred;
}

/** Random fragments of real GTINs, 4 to 8 digits, from rows picked by a seeded generator. */
function fragments(db: DatabaseSync, { table, column }: { table: string; column: string }, count: number): string[] {
  const random = seededRandom(20261123);
  const { max } = db.prepare(`SELECT max(rowid) AS max FROM ${quote(table)}`).get() as { max: number | null };
  const byRowid = db.prepare(`SELECT ${quote(column)} AS gtin FROM ${quote(table)} WHERE rowid >= ? AND length(${quote(column)}) >= 4 LIMIT 1`);
  const result: string[] = [];
  for (let attempts = 0; result.length < count && attempts < count * 5; attempts++) {
    const row = byRowid.get(Math.floor(random() * (max ?? 0)) + 1) as { gtin: string } | undefined;
    if (row === undefined) continue;
    const length = 4 + Math.floor(random() * 5);
    const size = Math.min(length, row.gtin.length);
    const start = Math.floor(random() * (row.gtin.length - size + 1));
    const fragment = row.gtin.slice(start, start + size);
    // Leading zeros alone match most of the catalog: not a search anyone makes.
    if (!/^0+$/.test(fragment)) result.push(fragment);
  }
  return result;
}

export async function runSearchBench(options: SearchBenchOptions): Promise<SearchResult> {
  const db = new DatabaseSync(options.dbFile, { readOnly: true });
  const store = new SqliteCatalogStore(new SqliteDatabase(options.dbFile));
  try {
    const variants = findVariantsTable(db);
    const table = variants.table;
    const { n } = db.prepare(`SELECT count(*) AS n FROM ${quote(table)}`).get() as { n: number };
    progress(`search: ${n} rows in ${table}.${variants.column}`);
    if (!store.indexesLive()) options.notes.push('search: the GTIN index is deferred (a bulk load did not finish); the store answers by scanning.');
    const picked = fragments(db, variants, options.samples);
    const search = (fragment: string) => store.searchVariantDocuments({ gtin: fragment, offset: 0, limit: 20 });

    let http: LatencySummary | undefined;
    if (options.apiUrl !== undefined && options.key !== undefined) {
      const headers = { authorization: options.key };
      const first = picked[0] ?? '0000';
      const probe = await get(`${options.apiUrl}/v2/variants?gtin=${first}`, headers);
      if (probe.status !== 200) options.notes.push(`search: /v2/variants?gtin=${first} answered ${probe.status}; the API timings measure that.`);
      progress(`search: ${picked.length} fragments through the API`);
      http = summarize(await timeEach(picked.length, (i) => get(`${options.apiUrl}/v2/variants?gtin=${picked[i] ?? first}`, headers)));
    }

    const scan = db.prepare(`SELECT count(*) AS n FROM ${quote(table)} WHERE ${quote(variants.column)} LIKE ?`);
    const scanFragments = picked.slice(0, options.scanSamples);
    progress(`search: ${scanFragments.length} full scans`);
    const fullScan = summarize(await timeEach(scanFragments.length, (i) => scan.get(`%${scanFragments[i] ?? ''}%`)));
    progress(`search: ${picked.length} fragments through the store`);
    const storeSummary = summarize(await timeEach(picked.length, (i) => search(picked[i] ?? '')));
    let countMismatches = 0;
    for (const fragment of scanFragments) {
      if ((scan.get(`%${fragment}%`) as { n: number }).n !== (await search(fragment)).total) countMismatches++;
    }
    if (countMismatches > 0) options.notes.push(`search: the store's total and the full scan disagreed on ${countMismatches} of ${scanFragments.length} fragments.`);
    return {
      variants: n,
      variantsTable: `${table}.${variants.column}`,
      ...(http === undefined ? {} : { http }),
      store: storeSummary,
      fullScan,
      storeSpeedup: ratio(fullScan.p50, storeSummary.p50),
      httpSpeedup: ratio(fullScan.p50, http?.p50),
      countMismatches,
    };
  } finally {
    db.close();
    await store.close();
  }
}
