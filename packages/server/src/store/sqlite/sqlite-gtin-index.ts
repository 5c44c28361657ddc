// GTIN substring search on SQLite: a suffix table and exact match counts for short fragments.
// Guarantees:
// - `catalog_gtin_suffixes` holds (suffix, variant) for every suffix of 4 or more characters of
//   every stored GTIN, so the variants containing a fragment are one B-tree range: the suffixes
//   that start with it.
// - `catalog_gtin_fragments` holds the stored match counts of short fragments, by the rule of
//   catalog/gtin-fragments.ts (`optimize` after every import retakes them). Other fragments count
//   their suffix range.
// - While the index is `deferred` (a bulk load into an empty catalog is running, or one died),
//   searches answer from a full scan: correct, in time proportional to the catalog. The SKU and
//   GTIN-14 B-tree indexes of `catalog_variants` are dropped for the same time (random inserts
//   into them dirtied most of their pages on every import transaction), so SKU look-ups and the
//   GTIN count scan as well. `rebuildGtinIndex` makes all of them live again.
// Limits: the tables take about 20 bytes per suffix (about 200 MB per million 13-digit GTINs).
// Keeping them up to date row by row costs a random B-tree insert per suffix, which is why bulk
// loads defer the index and rebuild it in one sorted pass over every suffix.
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { COUNTED_FRAGMENT_MAX, FRAGMENT_MIN, FragmentDeltas, FragmentTally, gtinSuffixes, prefixEnd, totalFromStored } from '../../catalog/gtin-fragments.ts';

/**
 * What the index reads and writes through: prepared statements cached by their SQL text, as
 * SqliteDatabase gives them (declared here: sqlite-database.ts loads this module, through its
 * migrations, so this one does not load it back).
 */
export interface SqliteStatements {
  statement(sql: string): StatementSync;
}
/**
 * Variants scanned in `pk` order that cost as much as one suffix-range entry collected and sorted:
 * a search scans when the rows it expects to read cost less than the fragment's whole range.
 */
const SCAN_ROWS_PER_INDEX_ENTRY = 4;

/**
 * A variant's JSON text cut out of its product's document by SQLite (byte for byte what
 * JSON.stringify gives for a document JSON.stringify wrote), over VARIANTS_WITH_PRODUCTS.
 * Only the variants a page needs are rendered, and no JavaScript object is made for them.
 */
export const VARIANT_TEXT = "json_extract(p.doc, '$.variants[' || v.position || ']')";
export const VARIANTS_WITH_PRODUCTS = 'catalog_variants v JOIN catalog_products p ON p.pk = v.product_pk';

/** A page row: one matching variant's JSON text; pages are in ascending variant `pk` order. */
export interface VariantTextRow {
  variant: string;
}

export type GtinIndexState = 'live' | 'deferred';

/** DDL for migration 3 (also used by tests that build a fresh schema). */
export const GTIN_INDEX_SCHEMA = `
  CREATE TABLE catalog_gtin_suffixes (
    suffix TEXT NOT NULL,
    variant_pk INTEGER NOT NULL,
    PRIMARY KEY (suffix, variant_pk)
  ) WITHOUT ROWID;
  CREATE TABLE catalog_gtin_fragments (
    fragment TEXT PRIMARY KEY,
    variants INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE catalog_index_state (
    name TEXT PRIMARY KEY,
    state TEXT NOT NULL CHECK (state IN ('live', 'deferred'))
  );
  INSERT INTO catalog_index_state (name, state) VALUES ('gtin', 'live');
`;


/**
 * Pending changes to the fragment counts of one transaction, applied by `flush`. Kept per
 * transaction so a batch of variants costs one upsert per distinct fragment, not per variant.
 */
export class GtinIndexWriter {
  private readonly database: SqliteStatements;
  private readonly deltas = new FragmentDeltas();
  readonly live: boolean;

  constructor(database: SqliteStatements) {
    this.database = database;
    this.live = readState(database) === 'live';
  }

  add(variantPk: number, gtin: string): void {
    if (!this.live) return;
    const insert = this.database.statement('INSERT OR IGNORE INTO catalog_gtin_suffixes (suffix, variant_pk) VALUES (?, ?)');
    for (const suffix of gtinSuffixes(gtin)) insert.run(suffix, variantPk);
    this.deltas.add(gtin);
  }

  remove(variantPk: number, gtin: string): void {
    if (!this.live) return;
    const remove = this.database.statement('DELETE FROM catalog_gtin_suffixes WHERE suffix = ? AND variant_pk = ?');
    for (const suffix of gtinSuffixes(gtin)) remove.run(suffix, variantPk);
    this.deltas.remove(gtin);
  }

  flush(): void {
    const upsert = this.database.statement(
      `INSERT INTO catalog_gtin_fragments (fragment, variants) VALUES (?, ?)
       ON CONFLICT (fragment) DO UPDATE SET variants = variants + excluded.variants`,
    );
    // Longer fragments keep a stored count only if they have one (see the header).
    const update = this.database.statement('UPDATE catalog_gtin_fragments SET variants = variants + ? WHERE fragment = ?');
    const { always, ifStored } = this.deltas.changes();
    for (const [fragment, delta] of always) upsert.run(fragment, delta);
    for (const [fragment, delta] of ifStored) update.run(delta, fragment);
    this.deltas.clear();
  }
}

export function readState(database: SqliteStatements): GtinIndexState {
  const row = database.statement("SELECT state FROM catalog_index_state WHERE name = 'gtin'").get() as { state: GtinIndexState } | undefined;
  return row?.state ?? 'deferred';
}

/** B-tree indexes of `catalog_variants` dropped while deferred, as migration 1 created them. */
const DEFERRED_INDEXES = [
  'CREATE INDEX IF NOT EXISTS catalog_variants_sku ON catalog_variants (sku)',
  'CREATE INDEX IF NOT EXISTS catalog_variants_gtin14 ON catalog_variants (gtin14)',
];

/** Empties the index, drops DEFERRED_INDEXES and marks it deferred: writes skip them until `rebuildGtinIndex`. */
export function deferGtinIndex(db: DatabaseSync): void {
  db.exec(`DELETE FROM catalog_gtin_suffixes; DELETE FROM catalog_gtin_fragments;
    DROP INDEX IF EXISTS catalog_variants_sku; DROP INDEX IF EXISTS catalog_variants_gtin14;
    UPDATE catalog_index_state SET state = 'deferred' WHERE name = 'gtin'`);
}

/**
 * Fills the index from `catalog_variants` in one sorted pass and marks it live. Runs inside the
 * caller's transaction; the suffixes are inserted in key order, so each B-tree page is written once.
 */
export function rebuildGtinIndex(db: DatabaseSync): void {
  for (const ddl of DEFERRED_INDEXES) db.exec(ddl);
  db.exec('DELETE FROM catalog_gtin_suffixes; DELETE FROM catalog_gtin_fragments');
  const longest = (db.prepare('SELECT max(length(gtin)) AS n FROM catalog_variants').get() as { n: number | null }).n ?? 0;
  const starts = JSON.stringify(Array.from({ length: Math.max(0, longest - FRAGMENT_MIN + 1) }, (_, i) => i + 1));
  // CROSS JOIN keeps the variants as the outer loop: one pass over the table, not one per start.
  db.prepare(`INSERT INTO catalog_gtin_suffixes (suffix, variant_pk)
    WITH starts(i) AS MATERIALIZED (SELECT value FROM json_each(?))
    SELECT substr(v.gtin, starts.i), v.pk FROM catalog_variants v CROSS JOIN starts
    WHERE length(v.gtin) - starts.i + 1 >= ${FRAGMENT_MIN}
    ORDER BY 1, 2`).run(starts);
  recountGtinFragments(db);
  db.exec("UPDATE catalog_index_state SET state = 'live' WHERE name = 'gtin'");
}

/** Variants read per chunk when counting: one `group_concat` string of about 1.5 MB. */
const COUNT_CHUNK = 100_000;

/**
 * Retakes the stored fragment counts from `catalog_variants` (about 2 s per million variants),
 * inside the caller's transaction.
 */
export function recountGtinFragments(db: DatabaseSync): void {
  const tally = new FragmentTally();
  const chunk = db.prepare("SELECT group_concat(gtin, ',') AS gtins, max(pk) AS last FROM (SELECT pk, gtin FROM catalog_variants WHERE pk > ? ORDER BY pk LIMIT ?)");
  for (let after = 0; ; ) {
    const { gtins, last } = chunk.get(after, COUNT_CHUNK) as { gtins: string | null; last: number | null };
    if (gtins === null || last === null) break;
    after = last;
    tally.addJoined(gtins);
  }
  db.exec('DELETE FROM catalog_gtin_fragments');
  const insert = db.prepare('INSERT INTO catalog_gtin_fragments (fragment, variants) VALUES (?, ?)');
  for (const [fragment, variants] of tally.stored()) insert.run(fragment, variants);
}

/**
 * The exact number of variants whose GTIN contains `fragment` (4 to 14 digits), and a page of
 * them in `pk` order. The page reads whichever is cheaper: the suffix range (all matches, then
 * the page) or `catalog_variants` in `pk` order until the page is full (about (offset + limit) ×
 * variants ÷ matches rows, so short for common fragments).
 */
export function searchGtin(
  database: SqliteStatements,
  /** Whether the index is live (readState); when deferred, the answer comes from a full scan. */
  live: boolean,
  fragment: string,
  offset: number,
  limit: number,
): { rows: VariantTextRow[]; total: number } {
  if (!live) {
    const total = (database.statement('SELECT count(*) AS n FROM catalog_variants WHERE instr(gtin, ?) > 0').get(fragment) as { n: number }).n;
    return { rows: scanPage(database, fragment, offset, limit), total };
  }
  const total = countMatches(database, fragment);
  if (total === 0 || offset >= total) return { rows: [], total };
  const scanRows = ((offset + limit) * variantEstimate(database)) / total;
  if (scanRows < SCAN_ROWS_PER_INDEX_ENTRY * total) return { rows: scanPage(database, fragment, offset, limit), total };
  const rows = database
    .statement(
      `SELECT ${VARIANT_TEXT} AS variant FROM ${VARIANTS_WITH_PRODUCTS}
       WHERE v.pk IN (SELECT variant_pk FROM catalog_gtin_suffixes WHERE suffix >= ?1 AND suffix < ?2)
       ORDER BY v.pk LIMIT ?3 OFFSET ?4`,
    )
    .all(fragment, prefixEnd(fragment), limit, offset) as unknown as VariantTextRow[];
  return { rows, total };
}

/**
 * About how many variants there are, for choosing a page's path only: the largest `pk` (one
 * B-tree descent). Above the count by the variants deleted since, which only makes the scan look
 * dearer than it is.
 */
function variantEstimate(database: SqliteStatements): number {
  return (database.statement('SELECT coalesce(max(pk), 0) AS n FROM catalog_variants').get() as { n: number }).n;
}

function countMatches(database: SqliteStatements, fragment: string): number {
  const stored =
    fragment.length > COUNTED_FRAGMENT_MAX
      ? undefined
      : (database.statement('SELECT variants FROM catalog_gtin_fragments WHERE fragment = ?').get(fragment) as { variants: number } | undefined);
  const total = totalFromStored(fragment, stored?.variants);
  if (total !== undefined) return total;
  // A GTIN can hold a long fragment twice ("12121212" holds "121212" at 0 and 2): count variants.
  const row = database
    .statement('SELECT count(DISTINCT variant_pk) AS n FROM catalog_gtin_suffixes WHERE suffix >= ? AND suffix < ?')
    .get(fragment, prefixEnd(fragment)) as { n: number };
  return row.n;
}

function scanPage(database: SqliteStatements, fragment: string, offset: number, limit: number): VariantTextRow[] {
  return database
    .statement(`SELECT ${VARIANT_TEXT} AS variant FROM ${VARIANTS_WITH_PRODUCTS} WHERE instr(v.gtin, ?) > 0 ORDER BY v.pk LIMIT ? OFFSET ?`)
    .all(fragment, limit, offset) as unknown as VariantTextRow[];
}
