// The catalog reads of PostgresCatalogStore: variant searches by SKU and GTIN substring, product
// look-ups by id or slug (batched per turn of the event loop), the top brands, the GTIN count, a
// sample of variants and the catalog version.
//
// Guarantees
// - GTIN substring search: the exact total from the stored count of a short fragment
//   (catalog/gtin-fragments.ts, table catalog_gtin_fragments) or else counted over the candidates
//   of the GIN index on the GTINs' 4-grams (migration 8), each checked with strpos; the page from
//   whichever is cheaper, the variants in `seq` order until the page is full (common fragments) or
//   the candidates sorted (rare ones). While a bulk load has the counts deferred, a scan answers.
// - SKU and slug look-ups compare foldText values (catalog/text.ts) stored at write time, so they
//   match exactly as SQLite's do; a slug several products share belongs to the one imported first (seq).
// Failure modes: engine errors propagate; the store maps outages (PostgresCatalogStore.#run).
import type pg from 'pg';
import type { VariantQuery } from '../../catalog/catalog-store.ts';
import { totalFromStored } from '../../catalog/gtin-fragments.ts';
import type { BrandCount, CatalogProductPro, CatalogVariant, Page } from '../../catalog/model.ts';
import { storedJson, type RawJson } from '../../catalog/raw-json.ts';
import { foldText } from '../../catalog/text.ts';
import { DISTINCT_GTINS_SQL } from '../catalog-store.ts';

/**
 * Variants read in `seq` order (filtered by strpos) for the cost of one match found through the
 * 4-gram index and sorted: a page comes from the scan while it reads fewer than this many rows per
 * match.
 */
const SCAN_ROWS_PER_MATCH = 4;
/**
 * Variants whose GTIN contains the fragment $1: candidates from the GIN index on 4-grams
 * (migration 8's gtin_grams, the same function on both sides), checked by strpos.
 */
const GRAM_MATCH = 'gtin_grams(gtin) @> gtin_grams($1) AND strpos(gtin, $1) > 0';
/** Most product look-ups answered by one statement. */
export const LOOKUP_BATCH_MAX = 256;
/** How long the table's size estimate (for that choice only) is reused. */
const SIZE_ESTIMATE_MS = 30_000;

/** A product look-up waiting for its turn's statement. */
export type ProductLookup = { key: string; slug: string; resolve: (document: RawJson<CatalogProductPro> | null) => void; reject: (error: unknown) => void };

/** Variant searches; the table's size estimate (which chooses a GTIN page's path) is kept SIZE_ESTIMATE_MS. */
export class VariantSearch {
  readonly #pool: pg.Pool;
  #sizeEstimate: { value: Promise<number>; at: number } | undefined;

  constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  async search(query: VariantQuery): Promise<Page<RawJson<CatalogVariant>>> {
    if (query.gtin !== undefined && query.sku === undefined) return this.#searchGtin(query.gtin, query.offset, query.limit);
    const params: unknown[] = [];
    const where: string[] = [];
    if (query.sku !== undefined) {
      params.push(foldText(query.sku));
      where.push(`sku_lower = $${params.length}`);
    }
    if (query.gtin !== undefined) {
      params.push(`%${escapeLike(query.gtin)}%`);
      where.push(`gtin LIKE $${params.length}`);
    }
    const whereSql = where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`;
    const [rows, count] = await Promise.all([
      this.#pool.query<{ document: string }>(
        `SELECT document FROM catalog_variants ${whereSql} ORDER BY seq LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        [...params, query.limit, query.offset],
      ),
      this.#pool.query<{ total: number }>(`SELECT count(*) AS total FROM catalog_variants ${whereSql}`, params),
    ]);
    return { items: rows.rows.map((row) => storedJson<CatalogVariant>(row.document)), total: count.rows[0]?.total ?? 0 };
  }

  async #searchGtin(fragment: string, offset: number, limit: number): Promise<Page<RawJson<CatalogVariant>>> {
    const { rows } = await this.#pool.query<{ state: string | null; stored: string | null }>({
      name: 'catalog-gtin-stored-count',
      text: `SELECT (SELECT state FROM catalog_index_state WHERE name = 'gtin_fragments') AS state,
               (SELECT variants::text FROM catalog_gtin_fragments WHERE fragment = $1) AS stored`,
      values: [fragment],
    });
    const { state, stored } = rows[0]!;
    if (state !== 'live') {
      // A bulk load is running (or died): no 4-gram index nor counts, a scan answers.
      const pattern = `%${escapeLike(fragment)}%`;
      const [page, count] = await Promise.all([
        this.#pool.query<{ document: string }>('SELECT document FROM catalog_variants WHERE gtin LIKE $1 ORDER BY seq LIMIT $2 OFFSET $3', [pattern, limit, offset]),
        this.#pool.query<{ total: number }>('SELECT count(*)::int AS total FROM catalog_variants WHERE gtin LIKE $1', [pattern]),
      ]);
      return { items: page.rows.map((row) => storedJson<CatalogVariant>(row.document)), total: count.rows[0]?.total ?? 0 };
    }
    const total =
      totalFromStored(fragment, stored === null ? undefined : Number(stored)) ??
      ((
          await this.#pool.query<{ total: number }>({
            name: 'catalog-gtin-count',
            text: `SELECT count(*)::int AS total FROM catalog_variants WHERE ${GRAM_MATCH}`,
            values: [fragment],
          })
        ).rows[0]?.total ?? 0);
    if (total === 0 || offset >= total) return { items: [], total };
    const scan = ((offset + limit) * (await this.#variantEstimate())) / total < SCAN_ROWS_PER_MATCH * total;
    const page = await this.#pool.query<{ document: string }>(
      scan
        ? { name: 'catalog-gtin-page-scan', text: 'SELECT document FROM catalog_variants WHERE strpos(gtin, $1) > 0 ORDER BY seq LIMIT $2 OFFSET $3', values: [fragment, limit, offset] }
        : {
            name: 'catalog-gtin-page-grams',
            text: `SELECT document FROM catalog_variants WHERE ${GRAM_MATCH} ORDER BY seq LIMIT $2 OFFSET $3`,
            values: [fragment, limit, offset],
          },
    );
    return { items: page.rows.map((row) => storedJson<CatalogVariant>(row.document)), total };
  }

  /** About how many variants there are (the planner's estimate, for choosing a page's path only). */
  #variantEstimate(): Promise<number> {
    const now = performance.now();
    if (this.#sizeEstimate === undefined || now - this.#sizeEstimate.at > SIZE_ESTIMATE_MS) {
      const value = this.#pool
        .query<{ n: number }>("SELECT greatest(reltuples, 0)::float8 AS n FROM pg_class WHERE oid = 'catalog_variants'::regclass")
        .then((result) => Number(result.rows[0]?.n ?? 0));
      value.catch(() => (this.#sizeEstimate = undefined));
      this.#sizeEstimate = { value, at: now };
    }
    return this.#sizeEstimate.value;
  }
}

/**
 * Answers every product look-up asked during one turn of the event loop with one statement: under
 * load the database's cost per statement (a round trip, a backend wake-up) is shared by many
 * look-ups; alone, a look-up waits only for the end of the current turn.
 */
export async function lookUpProducts(pool: pg.Pool, batch: ProductLookup[]): Promise<void> {
  try {
    // A named statement is parsed and planned once per connection, not on every look-up.
    const { rows } = await pool.query<{ id: string; slug: string; seq: string; document: string }>({
      name: 'catalog-get-products',
      text: 'SELECT id, slug, seq::text AS seq, document FROM catalog_products WHERE id = ANY($1::text[]) OR slug = ANY($2::text[])',
      values: [[...new Set(batch.map((lookup) => lookup.key))], [...new Set(batch.map((lookup) => lookup.slug))]],
    });
    const byId = new Map<string, string>();
    // A slug several products share belongs to the one imported first.
    const bySlug = new Map<string, { seq: number; document: string }>();
    for (const row of rows) {
      byId.set(row.id, row.document);
      const seq = Number(row.seq);
      const held = bySlug.get(row.slug);
      if (held === undefined || seq < held.seq) bySlug.set(row.slug, { seq, document: row.document });
    }
    for (const lookup of batch) {
      const document = byId.get(lookup.key) ?? bySlug.get(lookup.slug)?.document;
      lookup.resolve(document === undefined ? null : storedJson<CatalogProductPro>(document));
    }
  } catch (error) {
    for (const lookup of batch) lookup.reject(error);
  }
}

export async function topBrands(pool: pg.Pool, limit: number): Promise<BrandCount[]> {
  const { rows } = await pool.query<BrandCount>('SELECT brand, count(*) AS count FROM catalog_products GROUP BY brand ORDER BY count(*) DESC, brand ASC LIMIT $1', [limit]);
  return rows.map((row) => ({ brand: row.brand, count: row.count }));
}

export async function countGtins(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(DISTINCT_GTINS_SQL);
  return rows[0]?.n ?? 0;
}

export async function catalogVersion(pool: pg.Pool): Promise<string> {
  const { rows } = await pool.query<{ n: string }>('SELECT n::text AS n FROM catalog_version');
  return rows[0]?.n ?? '0';
}

/** Every k-th variant by insertion order, so the sample covers the whole catalog. */
export async function sampleVariants(pool: pg.Pool, limit: number): Promise<CatalogVariant[]> {
  const { rows } = await pool.query<{ document: string }>(
    `WITH total AS (SELECT greatest(1, ceil(count(*)::numeric / greatest($1, 1)))::bigint AS step FROM catalog_variants)
     SELECT document FROM (SELECT document, row_number() OVER (ORDER BY seq) - 1 AS rn FROM catalog_variants) AS numbered, total
     WHERE rn % total.step = 0 ORDER BY rn LIMIT $1`,
    [limit],
  );
  return rows.map((row) => JSON.parse(row.document) as CatalogVariant);
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (match) => `\\${match}`);
}
