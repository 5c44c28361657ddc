// PostgresCatalogStore: the catalog on PostgreSQL, for several service instances sharing one
// database. Same observable behaviour as SqliteCatalogStore; the shared conformance suite runs
// against both.
//
// Guarantees
// - Documents are stored as text and read back exactly as imported (key order, number spelling).
// - Storefront cursors are 17_000_000_000_000_000 + n * 1024 (n from a sequence): exact doubles,
//   strictly increasing in import order, kept when a product is re-imported. Storefront imports
//   serialise on an advisory lock, so concurrent importers never give one id two cursors.
// - GTIN substring search: the exact total from the stored count of a short fragment
//   (catalog/gtin-fragments.ts, table catalog_gtin_fragments) or else counted over the candidates
//   of the GIN index on the GTINs' 4-grams (migration 8), each checked with strpos; the page from
//   whichever is cheaper, the variants in `seq` order until the page is full (common fragments) or
//   the candidates sorted (rare ones). Counts change in the same transaction as the variants, and
//   catalog writes serialise on an advisory lock, so each sees the GTINs it replaces. SKU and slug
//   look-ups compare
//   foldText values (catalog/text.ts) stored at write time, so they match exactly as SQLite's do;
//   a slug several products share belongs to the one imported first (seq).
// - Storefront listings are not answered here: the storefront index (catalog/storefront-index.ts,
//   kept current through `storefrontChangesSince`) finds the cursors, this store their documents.
// Failure modes
// - Database unreachable, too busy or a statement over statement_timeout: ServiceUnavailable (the
//   pool reconnects by itself once the database answers again). Other engine errors propagate.
import type pg from 'pg';
import type { BrandCount, CatalogProductPro, CatalogVariant, Page, StorefrontProduct, StorefrontProductInput } from '../../catalog/model.ts';
import type { StorefrontIndexRow } from '../../catalog/storefront-index.ts';
import { foldText } from '../../catalog/text.ts';
import { comparableGtin } from '../../catalog/gtin.ts';
import { storedJson, type RawJson } from '../../catalog/raw-json.ts';
import { cursorAt, epochMs, storefrontDocument } from '../../catalog/storefront-document.ts';
import type { ImportReport, VariantQuery } from '../../catalog/catalog-store.ts';
import { DISTINCT_GTINS_SQL, NO_DOCUMENTS, storefrontIndexRow, type CatalogEngine, type StorefrontChange } from '../catalog-store.ts';
import { ServiceUnavailable } from '../../catalog/errors.ts';
import { copyRows } from './copy-rows.ts';
import { to as copyTo } from 'pg-copy-streams';
import { inTransaction, unavailableOnOutage } from './pg-pool.ts';
import { TurnBatches } from './turn-batches.ts';
import { LONG_STATEMENT, recountGtinFragments, VARIANT_SEARCH_INDEXES } from './migrations.ts';
import { FragmentDeltas, totalFromStored } from '../../catalog/gtin-fragments.ts';
import type { SnapshotPlace } from '../storefront-snapshot.ts';

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

const WHAT = 'catalog database';
const STOREFRONT_IMPORT_LOCK = 'catalog.storefront_import';
const SNAPSHOT_WRITE_LOCK = 'catalog.storefront_snapshot';
/** Bytes per row of storefront_index_snapshot: well under bytea's 1 GB, few rows per snapshot. */
const SNAPSHOT_PART_BYTES = 16 << 20;

/**
 * Copies the one column of every row of a `COPY … TO STDOUT (FORMAT binary)` stream, one row after
 * another, into `target`; returns the bytes copied. Throws when the stream is not that format or
 * holds more than `target` takes.
 */
async function copyBinaryField(stream: AsyncIterable<Buffer>, target: Uint8Array): Promise<number> {
  // The format: an 11-byte signature, flags (4 bytes), an extension's length (4) and the
  // extension; per row a field count (2; -1 ends the data), per field a length (4) and its bytes.
  let state: 'header' | 'row' | 'length' | 'field' | 'end' = 'header';
  let pending: Buffer = Buffer.alloc(0);
  let left = 0;
  let at = 0;
  for await (const chunk of stream) {
    const input = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let i = 0;
    for (let more = true; more; ) {
      const available = input.length - i;
      switch (state) {
        case 'field': {
          const taken = Math.min(left, available);
          target.set(input.subarray(i, i + taken), at);
          at += taken;
          i += taken;
          left -= taken;
          if (left === 0) state = 'row';
          else more = false;
          break;
        }
        case 'header':
          if (available < 19 || available < 19 + input.readInt32BE(i + 15)) {
            more = false;
          } else {
            if (!input.subarray(i, i + 11).equals(COPY_SIGNATURE)) throw new Error('not a binary COPY stream');
            i += 19 + input.readInt32BE(i + 15);
            state = 'row';
          }
          break;
        case 'row':
          if (available < 2) {
            more = false;
          } else {
            const fields = input.readInt16BE(i);
            i += 2;
            if (fields === -1) state = 'end';
            else if (fields !== 1) throw new Error(`binary COPY row of ${fields} fields, expected 1`);
            else state = 'length';
          }
          break;
        case 'length':
          if (available < 4) {
            more = false;
          } else {
            left = input.readInt32BE(i);
            i += 4;
            if (left < 0 || at + left > target.length) throw new Error('binary COPY field is null or larger than announced');
            state = 'field';
          }
          break;
        case 'end':
          more = false;
          break;
      }
    }
    pending = input.subarray(i);
  }
  if (state !== 'end') throw new Error('binary COPY stream ended early');
  return at;
}
const COPY_SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** `parts` regrouped into buffers of `size` bytes (the last one shorter). */
function* slabs(parts: readonly Uint8Array[], size: number): Generator<Buffer> {
  let slab = Buffer.allocUnsafe(size);
  let filled = 0;
  for (const part of parts) {
    for (let at = 0; at < part.length; ) {
      const taken = Math.min(size - filled, part.length - at);
      slab.set(part.subarray(at, at + taken), filled);
      filled += taken;
      at += taken;
      if (filled === size) {
        yield slab;
        slab = Buffer.allocUnsafe(size);
        filled = 0;
      }
    }
  }
  if (filled > 0) yield slab.subarray(0, filled);
}
const CATALOG_IMPORT_LOCK = 'catalog.catalog_import';
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
const LOOKUP_BATCH_MAX = 256;
/** Most storefront pages read by one statement, and most such statements in flight. */
const PAGE_BATCH_MAX = 64;
const PAGE_READS_MAX = 2;
/** How long the table's size estimate (for that choice only) is reused. */
const SIZE_ESTIMATE_MS = 30_000;

/** A product look-up waiting for its turn's statement. */
type ProductLookup = { key: string; slug: string; resolve: (document: RawJson<CatalogProductPro> | null) => void; reject: (error: unknown) => void };
/** A storefront page waiting for its turn's statement. */
type PageRead = { cursors: readonly number[]; resolve: (page: RawJson<StorefrontProduct[]>) => void; reject: (error: unknown) => void };


function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (match) => `\\${match}`);
}


/** Keeps the last occurrence of each id, as an upsert of the lines one by one would. */
function lastById<T extends { id: string }>(items: readonly T[]): T[] {
  const byId = new Map<string, T>();
  for (const item of items) {
    byId.delete(item.id);
    byId.set(item.id, item);
  }
  return [...byId.values()];
}

export class PostgresCatalogStore implements CatalogEngine {
  /** Other instances' storefront writes are looked for at most this often. */
  readonly changePollMs = 250;
  readonly #pool: pg.Pool;
  readonly #ownsPool: boolean;
  #closed = false;
  #sizeEstimate: { value: Promise<number>; at: number } | undefined;
  /** Product look-ups, answered a turn of the event loop at a time (see #lookUp). */
  readonly #lookups = new TurnBatches<ProductLookup>(
    (batch) => this.#lookUp(batch),
    { maxBatch: LOOKUP_BATCH_MAX },
  );
  /** Storefront pages, read a turn of the event loop at a time (see #readPages). */
  readonly #pages = new TurnBatches<PageRead>(
    (batch) => this.#readPages(batch),
    { maxBatch: PAGE_BATCH_MAX, maxInFlight: PAGE_READS_MAX },
  );

  /** `ownsPool`: close() also ends the pool. */
  constructor(pool: pg.Pool, options: { ownsPool?: boolean } = {}) {
    this.#pool = pool;
    this.#ownsPool = options.ownsPool ?? false;
  }

  storefrontChangesSince(after: StorefrontChange, limit: number): Promise<(StorefrontIndexRow & StorefrontChange)[]> {
    return this.#storefrontRows(STOREFRONT_CHANGES_WHERE, [String(after.change), String(after.cursor), limit]);
  }

  storefrontRowsByCursor(after: number, limit: number): Promise<(StorefrontIndexRow & StorefrontChange)[]> {
    return this.#storefrontRows(STOREFRONT_BY_CURSOR_WHERE, [String(after), limit]);
  }

  #storefrontRows(where: string, parameters: (string | number)[]): Promise<(StorefrontIndexRow & StorefrontChange)[]> {
    return this.#run(async () => {
      // Columns in STOREFRONT_INDEX_COLUMNS' order; cursors and changes as float8 (exact: see
      // CURSOR_BASE), so the driver parses numbers rather than making strings to convert.
      const { rows } = await this.#pool.query<unknown[]>({
        text: storefrontRowsSql(where),
        values: parameters,
        rowMode: 'array',
      });
      return rows.map(storefrontIndexRow);
    });
  }

  storefrontIdentity(): Promise<{ catalog: string; lastChange: number }> {
    return this.#run(async () => {
      // When each migration was applied: set once, as the database was made and upgraded.
      const { rows } = await this.#pool.query<{ at: string | null; n: string }>(
        `SELECT (SELECT string_agg(version || '@' || applied_at::text, ',' ORDER BY version) FROM schema_migrations) AS at,
           (SELECT coalesce(max(change_seq), 0)::text FROM storefront_products) AS n`,
      );
      return { catalog: `postgres:${rows[0]?.at ?? ''}`, lastChange: Number(rows[0]?.n ?? 0) };
    });
  }

  /**
   * The storefront index snapshot of `catalog`, kept in this database (migration 9) so that every
   * instance loads the one an instance, an import or a seed wrote. A write replaces the snapshot
   * in one transaction (concurrent writers queue on an advisory lock; the last one's stays); a
   * read is one statement, so it sees one snapshot whole.
   */
  storefrontSnapshotPlace(catalog: string): SnapshotPlace {
    return {
      name: 'the storefront_index_snapshot table',
      read: () =>
        this.#run(() =>
          inTransaction(this.#pool, async (client) => {
            // One snapshot of the table for both statements: the size read is the size copied.
            await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
            await client.query('SET LOCAL statement_timeout = 0');
            const { rows } = await client.query<{ bytes: string | null }>('SELECT sum(length(bytes))::text AS bytes FROM storefront_index_snapshot WHERE catalog = $1', [catalog]);
            if (rows[0]?.bytes == null) return undefined;
            const snapshot = new Uint8Array(Number(rows[0].bytes));
            // COPY's binary format brings the bytes as stored, straight into one buffer (a SELECT
            // would bring them as hex text, twice the size, then a copy of each part).
            const copied = await copyBinaryField(
              client.query(copyTo(`COPY (SELECT bytes FROM storefront_index_snapshot WHERE catalog = ${client.escapeLiteral(catalog)} ORDER BY part) TO STDOUT (FORMAT binary)`)),
              snapshot,
            );
            return copied === snapshot.length ? snapshot : snapshot.subarray(0, copied);
          }),
        ),
      write: (parts) =>
        this.#run(() =>
          inTransaction(this.#pool, async (client) => {
            await client.query('SET LOCAL statement_timeout = 0');
            await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [SNAPSHOT_WRITE_LOCK]);
            // Only the latest snapshot is ever read: those of earlier identities go too.
            await client.query('DELETE FROM storefront_index_snapshot');
            let part = 0;
            for (const slab of slabs(parts, SNAPSHOT_PART_BYTES)) {
              await client.query({ text: 'INSERT INTO storefront_index_snapshot (catalog, part, bytes) VALUES ($1, $2, $3)', values: [catalog, part, slab], ...LONG_STATEMENT });
              part += 1;
            }
          }),
        ),
    };
  }

  catalogVersion(): Promise<string> {
    return this.#run(async () => {
      const { rows } = await this.#pool.query<{ n: string }>('SELECT n::text AS n FROM catalog_version');
      return rows[0]?.n ?? '0';
    });
  }

  storefrontDocuments(cursors: readonly number[]): Promise<RawJson<StorefrontProduct[]>> {
    if (cursors.length === 0) return Promise.resolve(NO_DOCUMENTS);
    return this.#run(
      () =>
        new Promise<RawJson<StorefrontProduct[]>>((resolve, reject) => {
          this.#pages.push({ cursors, resolve, reject });
        }),
    );
  }

  /**
   * Reads the pages asked for so far with one statement, each joined by the server into one flat
   * string in the order given (no row object nor string per document, no join in JavaScript).
   * At most PAGE_READS_MAX statements are in flight; pages asked for meanwhile wait for the next.
   * Under load the listings share the cost of a statement and hold few of the pool's connections
   * (a statement per listing would exceed the pool's share per table and be refused); alone, a page
   * waits only for the end of the current turn of the event loop.
   */
  async #readPages(batch: PageRead[]): Promise<void> {
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
      const { rows } = await this.#pool.query<{ page: number; documents: string }>({
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

  searchVariantDocuments(query: VariantQuery): Promise<Page<RawJson<CatalogVariant>>> {
    if (query.gtin !== undefined && query.sku === undefined) return this.#run(() => this.#searchGtin(query.gtin!, query.offset, query.limit));
    return this.#run(async () => {
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
    });
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

  topBrands(limit: number): Promise<BrandCount[]> {
    return this.#run(async () => {
      const { rows } = await this.#pool.query<BrandCount>(
        'SELECT brand, count(*) AS count FROM catalog_products GROUP BY brand ORDER BY count(*) DESC, brand ASC LIMIT $1',
        [limit],
      );
      return rows.map((row) => ({ brand: row.brand, count: row.count }));
    });
  }

  getProductDocument(idOrSlug: string): Promise<RawJson<CatalogProductPro> | null> {
    return this.#run(
      () =>
        new Promise<RawJson<CatalogProductPro> | null>((resolve, reject) => {
          this.#lookups.push({ key: idOrSlug, slug: foldText(idOrSlug), resolve, reject });
        }),
    );
  }

  /**
   * Answers every product look-up asked during one turn of the event loop with one statement: under
   * load the database's cost per statement (a round trip, a backend wake-up) is shared by many
   * look-ups; alone, a look-up waits only for the end of the current turn.
   */
  async #lookUp(batch: ProductLookup[]): Promise<void> {
    try {
      // A named statement is parsed and planned once per connection, not on every look-up.
      const { rows } = await this.#pool.query<{ id: string; slug: string; seq: string; document: string }>({
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

  countGtins(): Promise<number> {
    return this.#run(async () => {
      const { rows } = await this.#pool.query<{ n: number }>(DISTINCT_GTINS_SQL);
      return rows[0]?.n ?? 0;
    });
  }

  upsertCatalogProducts(products: readonly CatalogProductPro[]): Promise<ImportReport> {
    if (products.length === 0) return Promise.resolve({ inserted: 0, updated: 0 });
    return this.#run(() =>
      inTransaction(this.#pool, async (client) => {
        // One catalog writer at a time: the GTIN fragment counts change by the GTINs each write
        // replaces, which a concurrent writer could change underneath.
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [CATALOG_IMPORT_LOCK]);
        const unique = lastById(products);
        const variants = lastById(unique.flatMap((product) => product.variants.map((variant, position) => ({ ...variant, position, parent: product.id }))));
        const counting = (await client.query<{ state: string }>("SELECT state FROM catalog_index_state WHERE name = 'gtin_fragments'")).rows[0]?.state === 'live';
        const deltas = new FragmentDeltas();
        if (counting) {
          const old = await client.query<{ gtin: string }>('SELECT gtin FROM catalog_variants WHERE product_id = ANY($1::text[]) OR id = ANY($2::text[])', [
            unique.map((p) => p.id),
            variants.map((v) => v.id),
          ]);
          for (const row of old.rows) deltas.remove(row.gtin);
          for (const variant of variants) deltas.add(variant.gtin);
        }
        await this.#stagingTables(client);
        await copyRows(
          client,
          'incoming_products',
          ['ord', 'id', 'slug', 'brand', 'document'],
          unique.map((p, ord) => [ord, p.id, foldText(p.slug), p.brand, JSON.stringify(p)]),
        );
        // In the order given: seq records import order, which decides who keeps a shared slug.
        const { rows } = await client.query<{ inserted: boolean }>(
          `INSERT INTO catalog_products (id, slug, brand, document)
           SELECT id, slug, brand, document FROM incoming_products ORDER BY ord
           ON CONFLICT (id) DO UPDATE SET slug = excluded.slug, brand = excluded.brand, document = excluded.document
           RETURNING (xmax = 0) AS inserted`,
        );
        await client.query('DELETE FROM catalog_variants WHERE product_id = ANY($1::text[]) AND NOT (id = ANY($2::text[]))', [
          unique.map((p) => p.id),
          variants.map((v) => v.id),
        ]);
        if (variants.length > 0) {
          await copyRows(
            client,
            'incoming_variants',
            ['ord', 'id', 'product_id', 'position', 'sku_lower', 'gtin', 'gtin14', 'document'],
            variants.map(({ position, parent, ...variant }, ord) => [ord, variant.id, parent, position, foldText(variant.sku), variant.gtin, comparableGtin(variant.gtin), JSON.stringify(variant)]),
          );
          await client.query(
            `INSERT INTO catalog_variants (id, product_id, position, sku_lower, gtin, gtin14, document)
             SELECT id, product_id, position, sku_lower, gtin, gtin14, document FROM incoming_variants ORDER BY ord
             ON CONFLICT (id) DO UPDATE SET product_id = excluded.product_id, position = excluded.position,
               sku_lower = excluded.sku_lower, gtin = excluded.gtin, gtin14 = excluded.gtin14, document = excluded.document`,
          );
        }
        const { always, ifStored } = deltas.changes();
        if (always.length > 0) {
          await client.query(
            `INSERT INTO catalog_gtin_fragments (fragment, variants) SELECT * FROM unnest($1::text[], $2::bigint[])
             ON CONFLICT (fragment) DO UPDATE SET variants = catalog_gtin_fragments.variants + excluded.variants`,
            [always.map(([fragment]) => fragment), always.map(([, delta]) => delta)],
          );
        }
        if (ifStored.length > 0) {
          await client.query(
            `UPDATE catalog_gtin_fragments f SET variants = f.variants + d.delta
             FROM unnest($1::text[], $2::bigint[]) AS d(fragment, delta) WHERE f.fragment = d.fragment`,
            [ifStored.map(([fragment]) => fragment), ifStored.map(([, delta]) => delta)],
          );
        }
        await client.query('UPDATE catalog_version SET n = n + 1');
        const inserted = rows.filter((row) => row.inserted).length;
        return { inserted, updated: products.length - inserted };
      }),
    );
  }

  /**
   * This connection's staging tables for a catalog or storefront write: temporary (no WAL, invisible to other
   * sessions) and emptied at every commit or rollback. Asked for in every write's transaction: a
   * creation rolled back with a failed write must not be taken for done.
   */
  async #stagingTables(client: pg.PoolClient): Promise<void> {
    await client.query(`
      CREATE TEMP TABLE IF NOT EXISTS incoming_products (ord int, id text COLLATE "C", slug text COLLATE "C", brand text COLLATE "C",
        document text COMPRESSION lz4) ON COMMIT DELETE ROWS;
      CREATE TEMP TABLE IF NOT EXISTS incoming_variants (ord int, id text COLLATE "C", product_id text COLLATE "C", position int, sku_lower text COLLATE "C",
        gtin text COLLATE "C", gtin14 text COLLATE "C", document text) ON COMMIT DELETE ROWS;
      CREATE TEMP TABLE IF NOT EXISTS incoming_storefront (ord int, id text COLLATE "C", cursor bigint, product_id text COLLATE "C",
        shop_name text COLLATE "C", brand text COLLATE "C", product_type text COLLATE "C", title text COLLATE "C", slug text COLLATE "C",
        price_min float8, price_max float8, price_display float8, available boolean, created_at_ms float8, updated_at_ms float8,
        product_created_at_ms float8, product_published_at_ms float8, tags text, document text COMPRESSION lz4) ON COMMIT DELETE ROWS`);
  }

  upsertStorefrontProducts(products: readonly StorefrontProductInput[]): Promise<ImportReport> {
    if (products.length === 0) return Promise.resolve({ inserted: 0, updated: 0 });
    return this.#run(() =>
      inTransaction(this.#pool, async (client) => {
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [STOREFRONT_IMPORT_LOCK]);
        const unique = lastById(products);
        const existing = await client.query<{ id: string; cursor: number; document: string }>(
          'SELECT id, cursor, document FROM storefront_products WHERE id = ANY($1::text[])',
          [unique.map((p) => p.id)],
        );
        const known = new Map(existing.rows.map((row) => [row.id, row]));
        const fresh = unique.filter((p) => !known.has(p.id)).length;
        const cursors =
          fresh === 0
            ? []
            : (
                await client.query<{ n: string }>('SELECT nextval(\'storefront_cursor_seq\')::text AS n FROM generate_series(1, $1)', [fresh])
              ).rows.map((row) => Number(cursorAt(BigInt(row.n))));
        const change = (await client.query<{ n: string }>("SELECT nextval('storefront_change_seq')::text AS n")).rows[0]!.n;
        const now = new Date().toISOString();
        let next = 0;
        const documents = unique.map((input) => {
          const previous = known.get(input.id);
          if (previous !== undefined) {
            const old = JSON.parse(previous.document) as StorefrontProduct;
            return storefrontDocument(input, previous.cursor, input.created_at ?? old.created_at, input.updated_at ?? now);
          }
          const cursor = cursors[next++];
          if (cursor === undefined) throw new Error('cursor sequence returned too few values');
          return storefrontDocument(input, cursor, input.created_at ?? now, input.updated_at ?? now);
        });
        await this.#stagingTables(client);
        await copyRows(
          client,
          'incoming_storefront',
          ['ord', 'id', 'cursor', 'product_id', 'shop_name', 'brand', 'product_type', 'title', 'slug', 'price_min', 'price_max', 'price_display',
            'available', 'created_at_ms', 'updated_at_ms', 'product_created_at_ms', 'product_published_at_ms', 'tags', 'document'],
          documents.map((d, ord) => [
            ord, d.id, String(d.cursor), d.product_id, d.shop_name, d.brand, d.product_type, d.title, d.slug, d.price_min, d.price_max,
            d.price_display, d.available ? 'true' : 'false', epochMs(d.created_at), epochMs(d.updated_at), epochMs(d.product_created_at),
            epochMs(d.product_published_at), JSON.stringify(d.tags), JSON.stringify(d),
          ]),
        );
        await client.query(
          `INSERT INTO storefront_products (id, cursor, product_id, shop_name, brand, product_type, title, slug, price_min, price_max,
             price_display, available, created_at_ms, updated_at_ms, product_created_at_ms, product_published_at_ms, change_seq, tags,
             document)
           SELECT id, cursor, product_id, shop_name, brand, product_type, title, slug, price_min, price_max, price_display, available,
             created_at_ms, updated_at_ms, product_created_at_ms, product_published_at_ms, $1::bigint, tags, document
           FROM incoming_storefront ORDER BY ord
           ON CONFLICT (id) DO UPDATE SET product_id = excluded.product_id, shop_name = excluded.shop_name, brand = excluded.brand,
             product_type = excluded.product_type, title = excluded.title, slug = excluded.slug, price_min = excluded.price_min,
             price_max = excluded.price_max, price_display = excluded.price_display, available = excluded.available,
             created_at_ms = excluded.created_at_ms, updated_at_ms = excluded.updated_at_ms,
             product_created_at_ms = excluded.product_created_at_ms, product_published_at_ms = excluded.product_published_at_ms,
             change_seq = excluded.change_seq, tags = excluded.tags, document = excluded.document`,
          [change],
        );
        await client.query('UPDATE catalog_version SET n = n + 1');
        return { inserted: fresh, updated: products.length - fresh };
      }),
    );
  }

  sampleVariants(limit: number): Promise<CatalogVariant[]> {
    return this.#run(async () => {
      // Every k-th variant by insertion order, so the sample covers the whole catalog.
      const { rows } = await this.#pool.query<{ document: string }>(
        `WITH total AS (SELECT greatest(1, ceil(count(*)::numeric / greatest($1, 1)))::bigint AS step FROM catalog_variants)
         SELECT document FROM (SELECT document, row_number() OVER (ORDER BY seq) - 1 AS rn FROM catalog_variants) AS numbered, total
         WHERE rn % total.step = 0 ORDER BY rn LIMIT $1`,
        [limit],
      );
      return rows.map((row) => JSON.parse(row.document) as CatalogVariant);
    });
  }

  /**
   * Before a bulk load into an EMPTY catalog (BulkLoading): drops the variant search
   * indexes (VARIANT_SEARCH_INDEXES) so that each insert skips them, until `optimize` creates them
   * again in one pass. Meanwhile SKU and GTIN searches scan every variant, so a catalog that
   * already has variants keeps them live. Returns whether it deferred.
   */
  deferIndexes(): Promise<boolean> {
    return this.#run(() =>
      inTransaction(this.#pool, async (client) => {
        const { rows } = await client.query('SELECT 1 FROM catalog_variants LIMIT 1');
        if (rows.length > 0) return false;
        for (const index of VARIANT_SEARCH_INDEXES) await client.query(`DROP INDEX IF EXISTS ${index.name}`);
        // The fragment counts too: keeping them current costs an upsert per fragment per batch.
        await client.query("TRUNCATE catalog_gtin_fragments; UPDATE catalog_index_state SET state = 'deferred' WHERE name = 'gtin_fragments'");
        return true;
      }),
    );
  }

  /**
   * After a bulk load (import, seed), and by `catalog migrate`: creates any variant search index a
   * deferred load left missing, takes the GTIN fragment counts it deferred, merges the GIN pending
   * lists, and refreshes planner statistics, so
   * the first searches use the indexes at full speed.
   */
  optimize(): Promise<void> {
    return this.#run(() =>
      inTransaction(this.#pool, async (client) => {
        // Index builds run longer than the pool's statement timeout, and faster with more memory.
        await client.query("SET LOCAL statement_timeout = 0; SET LOCAL maintenance_work_mem = '256MB'");
        const { rows } = await client.query<{ state: string }>("SELECT state FROM catalog_index_state WHERE name = 'gtin_fragments'");
        const deferred = rows[0]?.state !== 'live';
        for (const index of VARIANT_SEARCH_INDEXES) await client.query({ text: `CREATE INDEX IF NOT EXISTS ${index.name} ${index.definition}`, ...LONG_STATEMENT });
        if (deferred) await recountGtinFragments(client);
        await client.query({ text: 'ANALYZE catalog_products, catalog_variants, storefront_products', ...LONG_STATEMENT });
      }),
    );
  }

  ping(): Promise<void> {
    return this.#run(async () => {
      await this.#pool.query('SELECT 1');
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownsPool) await this.#pool.end();
  }

  /** Every public method runs through here: a closed store answers like an unreachable one. */
  #run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#closed) return Promise.reject(new ServiceUnavailable(WHAT, { cause: new Error('store closed') }));
    return unavailableOnOutage(WHAT, work);
  }
}
