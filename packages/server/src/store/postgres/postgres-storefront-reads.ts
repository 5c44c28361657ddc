// The storefront reads of PostgresCatalogStore: the rows the storefront index loads and catches up
// from (storefrontChangesSince, storefrontRowsByCursor), the catalog's identity for the index's
// snapshot, and the documents of listing pages.
//
// Guarantees: rows come in the index's column order (storefrontIndexRow), cursors and change
// numbers as float8 (exact doubles); a page's documents come back in the order of its cursors, one
// flat JSON array joined by the server, a cursor not stored left out.
// Failure modes: engine errors propagate; the store maps outages (PostgresCatalogStore.#run).
import type pg from 'pg';
import type { StorefrontProduct } from '../../catalog/model.ts';
import { storedJson, type RawJson } from '../../catalog/raw-json.ts';
import type { StorefrontIndexRow } from '../../catalog/storefront-index.ts';
import { NO_DOCUMENTS, storefrontIndexRow, type StorefrontChange } from '../catalog-store.ts';

/**
 * The storefront rows the index loads, `where` naming the table `s`. Its ORDER BY must name `s.`'s
 * columns: a bare `cursor` or `change_seq` there is the output column of that name, the float8 cast,
 * which no index orders, and every page then sorted all the rows past its start (a load or a
 * catch-up quadratic in the rows).
 */
export function storefrontRowsSql(where: string): string {
  return `SELECT s.change_seq::float8, s.cursor::float8, s.id, s.product_id, s.shop_name, s.brand, s.product_type, s.title, s.slug,
           s.price_min, s.price_max, s.price_display, s.available, s.created_at_ms, s.updated_at_ms,
           s.product_created_at_ms, s.product_published_at_ms, s.tags
         FROM storefront_products s ${where}`;
}
export const STOREFRONT_CHANGES_WHERE = 'WHERE (s.change_seq, s.cursor) > ($1::bigint, $2::bigint) ORDER BY s.change_seq, s.cursor LIMIT $3';
export const STOREFRONT_BY_CURSOR_WHERE = 'WHERE s.cursor > $1::bigint ORDER BY s.cursor LIMIT $2';

/** Most storefront pages read by one statement, and most such statements in flight. */
export const PAGE_BATCH_MAX = 64;
export const PAGE_READS_MAX = 2;

/** A storefront page waiting for its turn's statement. */
export type PageRead = { cursors: readonly number[]; resolve: (page: RawJson<StorefrontProduct[]>) => void; reject: (error: unknown) => void };

/** The storefront rows `where` (STOREFRONT_CHANGES_WHERE, STOREFRONT_BY_CURSOR_WHERE) selects, as the index loads them. */
export async function readStorefrontRows(pool: pg.Pool, where: string, parameters: (string | number)[]): Promise<(StorefrontIndexRow & StorefrontChange)[]> {
  // Columns in STOREFRONT_INDEX_COLUMNS' order; cursors and changes as float8 (exact: see
  // CURSOR_BASE), so the driver parses numbers rather than making strings to convert.
  const { rows } = await pool.query<unknown[]>({
    text: storefrontRowsSql(where),
    values: parameters,
    rowMode: 'array',
  });
  return rows.map(storefrontIndexRow);
}

/** The catalog's identity (when each migration was applied) and its last storefront change. */
export async function readStorefrontIdentity(pool: pg.Pool): Promise<{ catalog: string; lastChange: number }> {
  // When each migration was applied: set once, as the database was made and upgraded.
  const { rows } = await pool.query<{ at: string | null; n: string }>(
    `SELECT (SELECT string_agg(version || '@' || applied_at::text, ',' ORDER BY version) FROM schema_migrations) AS at,
       (SELECT coalesce(max(change_seq), 0)::text FROM storefront_products) AS n`,
  );
  return { catalog: `postgres:${rows[0]?.at ?? ''}`, lastChange: Number(rows[0]?.n ?? 0) };
}

/**
 * Reads the pages asked for so far with one statement, each joined by the server into one flat
 * string in the order given (no row object nor string per document, no join in JavaScript).
 * At most PAGE_READS_MAX statements are in flight; pages asked for meanwhile wait for the next.
 * Under load the listings share the cost of a statement and hold few of the pool's connections
 * (a statement per listing would exceed the pool's share per table and be refused); alone, a page
 * waits only for the end of the current turn of the event loop.
 */
export async function readStorefrontPages(pool: pg.Pool, batch: PageRead[]): Promise<void> {
  try {
    const cursors: number[] = [];
    const pages: number[] = [];
    batch.forEach((page, index) => {
      for (const cursor of page.cursors) {
        cursors.push(cursor);
        pages.push(index);
      }
    });
    // A named statement is planned once per connection. A page none of whose cursors is stored has no row.
    const { rows } = await pool.query<{ page: number; documents: string }>({
      name: 'storefront-pages',
      text: `SELECT u.page, '[' || string_agg(s.document, ',' ORDER BY u.ord) || ']' AS documents
             FROM unnest($1::bigint[], $2::int[]) WITH ORDINALITY AS u(cursor, page, ord) JOIN storefront_products s ON s.cursor = u.cursor
             GROUP BY u.page`,
      values: [`{${cursors.join(',')}}`, `{${pages.join(',')}}`],
    });
    const documents = new Map(rows.map((row) => [row.page, row.documents]));
    batch.forEach((page, index) => page.resolve(storedJson<StorefrontProduct[]>(documents.get(index) ?? NO_DOCUMENTS)));
  } catch (error) {
    for (const page of batch) page.reject(error);
  }
}
