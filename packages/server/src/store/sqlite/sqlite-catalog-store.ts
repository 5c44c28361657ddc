// SqliteCatalogStore: the CatalogStore port on node:sqlite.
// Guarantees:
// - Every product is stored as its JSON document and read back unchanged (fields and key order);
//   the columns beside it only serve look-ups. Variants are read from their product's document.
// - Storefront cursors are the table's rowid: 17_000_000_000_000_000 + n × 1024, strictly
//   increasing, assigned once on first insert and kept on re-import, exact as IEEE-754 doubles.
// - Storefront listings are not answered here: the storefront index (catalog/storefront-index.ts,
//   kept current through `storefrontChangesSince`) finds the cursors, this store their documents
//   (storefront-pages.ts), read by its document reader threads when it was given some.
//   Every storefront upsert transaction stamps its rows with the next change_seq.
// - GTIN substring search goes through a suffix table with stored counts (sqlite-gtin-index.ts);
//   SKU, slug, id, cursor look-ups through B-tree indexes. SKU and slug columns hold foldText of
//   the documents' values (catalog/text.ts); a slug several products share belongs to the one
//   imported first (lowest pk). Totals are exact counts.
// - Nothing is cached here: aggregates, documents and pages are cached by IndexedCatalogStore
//   (read-cache.ts) for both engines, keyed by this store's changeToken (PRAGMA data_version and
//   this connection's commits).
// Failure modes: a closed or unusable database raises ServiceUnavailable from ping() and from
// every query; writes from another process wait up to the busy timeout, then fail.
import { ServiceUnavailable } from '../../catalog/errors.ts';
import { comparableGtin } from '../../catalog/gtin.ts';
import { storedJson, storedJsonBytes, type RawJson, type RawJsonBytes } from '../../catalog/raw-json.ts';
import { CURSOR_BASE, cursorAfter, epochMs, storefrontDocument } from '../../catalog/storefront-document.ts';
import { foldText } from '../../catalog/text.ts';
import type {
  BrandCount,
  CatalogProductPro,
  CatalogVariant,
  Page,
  StorefrontProduct,
  StorefrontProductInput,
} from '../../catalog/model.ts';
import type { StorefrontIndexRow } from '../../catalog/storefront-index.ts';
import type { ImportReport, VariantQuery } from '../../catalog/catalog-store.ts';
import { DISTINCT_GTINS_SQL, NO_DOCUMENTS, storefrontIndexRow, type CatalogEngine, type StorefrontChange } from '../catalog-store.ts';
import { silentLogger, type Logger } from '../../logger.ts';
import { DocumentReaders } from './document-readers.ts';
import type { SqliteDatabase } from './sqlite-database.ts';
import { cursorList, readStorefrontPage, STOREFRONT_PAGE_SQL } from './storefront-pages.ts';
import {
  deferGtinIndex,
  GtinIndexWriter,
  readState,
  rebuildGtinIndex,
  recountGtinFragments,
  searchGtin,
  VARIANT_TEXT,
  VARIANTS_WITH_PRODUCTS,
  type VariantTextRow,
} from './sqlite-gtin-index.ts';

export class SqliteCatalogStore implements CatalogEngine {
  /** Another process's writes are seen through PRAGMA data_version, which costs nothing to read. */
  readonly changePollMs = 0;
  private readonly database: SqliteDatabase;

  readonly #pages: DocumentReaders;

  /** With `documentReaders`, storefront pages' documents are read by that many threads (document-readers.ts). */
  constructor(database: SqliteDatabase, documentReaders: { count: number; logger: Logger } = { count: 0, logger: silentLogger }) {
    this.database = database;
    const count = database.path === ':memory:' ? 0 : documentReaders.count;
    this.#pages = new DocumentReaders(database.path, count, documentReaders.logger, (cursors) => readStorefrontPage(this.database.statement(STOREFRONT_PAGE_SQL), cursors));
  }

  async catalogVersion(): Promise<string> {
    return this.database.version();
  }

  changeToken(): string {
    return this.database.version();
  }

  async storefrontChangesSince(after: StorefrontChange, limit: number): Promise<(StorefrontIndexRow & StorefrontChange)[]> {
    return this.#storefrontRows('WHERE (p.change_seq, p.cursor) > (?, ?) ORDER BY p.change_seq, p.cursor LIMIT ?', after.change, BigInt(after.cursor), limit);
  }

  async storefrontRowsByCursor(after: number, limit: number): Promise<(StorefrontIndexRow & StorefrontChange)[]> {
    return this.#storefrontRows('WHERE p.cursor > ? ORDER BY p.cursor LIMIT ?', BigInt(after), limit);
  }

  #storefrontRows(where: string, ...parameters: (number | bigint)[]): (StorefrontIndexRow & StorefrontChange)[] {
    // Columns in STOREFRONT_INDEX_COLUMNS' order; cursors as REAL (exact: see CURSOR_BASE), as
    // integers above 2^53 would not be read.
    const statement = this.database.statement(
      `SELECT p.change_seq, CAST(p.cursor AS REAL), p.id, p.product_id, p.shop_name, p.brand, p.product_type,
         p.title, p.slug, p.price_min, p.price_max, p.price_display, p.available, p.created_at, p.updated_at,
         p.product_created_at, p.product_published_at, p.tags
       FROM storefront_products p ${where}`,
    );
    statement.setReturnArrays(true);
    return (statement.all(...parameters) as unknown as unknown[][]).map(storefrontIndexRow);
  }

  async storefrontIdentity(): Promise<{ catalog: string; lastChange: number }> {
    // When each migration was applied: set once, as the database was made and upgraded.
    const created = this.database.statement("SELECT group_concat(version || '@' || applied_at, ',') AS at FROM (SELECT version, applied_at FROM schema_migrations ORDER BY version)").get() as { at: string | null };
    const last = this.database.statement('SELECT coalesce(max(change_seq), 0) AS n FROM storefront_products').get() as { n: number };
    return { catalog: `sqlite:${created.at ?? ''}`, lastChange: Number(last.n) };
  }

  async storefrontDocuments(cursors: readonly number[]): Promise<RawJsonBytes<StorefrontProduct[]> | RawJson<StorefrontProduct[]>> {
    if (cursors.length === 0) return NO_DOCUMENTS;
    return storedJsonBytes(await this.#pages.read(cursorList(cursors)));
  }

  async searchVariantDocuments(query: VariantQuery): Promise<Page<RawJson<CatalogVariant>>> {
    return this.readVariantPage(query);
  }

  private readVariantPage(query: VariantQuery): Page<RawJson<CatalogVariant>> {
    if (query.gtin !== undefined && query.sku === undefined) {
      const { rows, total } = searchGtin(this.database, this.indexesLive(), query.gtin, query.offset, query.limit);
      return { items: rows.map((row) => storedJson<CatalogVariant>(row.variant)), total };
    }
    const params: (string | number)[] = [];
    const where: string[] = [];
    if (query.sku !== undefined) {
      params.push(foldText(query.sku));
      where.push(`v.sku = ?${params.length}`);
    }
    if (query.gtin !== undefined) {
      // Behind the SKU index: a SKU has a handful of variants to check.
      params.push(query.gtin);
      where.push(`instr(v.gtin, ?${params.length}) > 0`);
    }
    const whereSql = where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`;
    const rows = this.database
      .statement(
        `SELECT ${VARIANT_TEXT} AS variant FROM ${VARIANTS_WITH_PRODUCTS} ${whereSql} ORDER BY v.pk LIMIT ?${params.length + 1} OFFSET ?${params.length + 2}`,
      )
      .all(...params, query.limit, query.offset) as unknown as VariantTextRow[];
    const total =
      knownTotal(query.offset, query.limit, rows.length) ??
      (where.length === 0
        ? (this.database.statement('SELECT count(*) AS n FROM catalog_variants').get() as { n: number }).n
        : (this.database.statement(`SELECT count(*) AS n FROM catalog_variants v ${whereSql}`).get(...params) as { n: number }).n);
    return { items: rows.map((row) => storedJson<CatalogVariant>(row.variant)), total };
  }

  async topBrands(limit: number): Promise<BrandCount[]> {
    return this.database
      .statement('SELECT brand, count(*) AS count FROM catalog_products GROUP BY brand ORDER BY count DESC, brand ASC LIMIT ?')
      .all(limit)
      .map((row) => ({ brand: row.brand as string, count: row.count as number }));
  }

  async getProductDocument(idOrSlug: string): Promise<RawJson<CatalogProductPro> | null> {
    const row = (this.database.statement('SELECT doc FROM catalog_products WHERE id = ?').get(idOrSlug) ??
      this.database.statement('SELECT doc FROM catalog_products WHERE slug = ? ORDER BY pk LIMIT 1').get(foldText(idOrSlug))) as
      | { doc: string }
      | undefined;
    return row === undefined ? null : storedJson<CatalogProductPro>(row.doc);
  }

  async countGtins(): Promise<number> {
    return (this.database.statement(DISTINCT_GTINS_SQL).get() as { n: number }).n;
  }

  async upsertCatalogProducts(products: readonly CatalogProductPro[]): Promise<ImportReport> {
    const db = this.database;
    const report = db.transaction(() => {
      const findProduct = db.statement('SELECT pk FROM catalog_products WHERE id = ?');
      const insertProduct = db.statement('INSERT INTO catalog_products (id, slug, brand, doc) VALUES (?, ?, ?, ?)');
      const updateProduct = db.statement('UPDATE catalog_products SET slug = ?, brand = ?, doc = ? WHERE pk = ?');
      const oldVariants = db.statement('SELECT pk, gtin FROM catalog_variants WHERE product_pk = ?');
      const deleteVariants = db.statement('DELETE FROM catalog_variants WHERE product_pk = ?');
      const gtinIndex = new GtinIndexWriter(db);
      const insertVariant = db.statement(
        'INSERT INTO catalog_variants (product_pk, position, sku, gtin, gtin14) VALUES (?, ?, ?, ?, ?)',
      );
      let inserted = 0;
      let updated = 0;
      for (const product of products) {
        const doc = JSON.stringify(product);
        const existing = findProduct.get(product.id) as { pk: number } | undefined;
        let productPk: number;
        if (existing === undefined) {
          productPk = Number(insertProduct.run(product.id, foldText(product.slug), product.brand, doc).lastInsertRowid);
          inserted += 1;
        } else {
          productPk = existing.pk;
          updateProduct.run(foldText(product.slug), product.brand, doc, productPk);
          for (const old of oldVariants.all(productPk)) gtinIndex.remove(old.pk as number, old.gtin as string);
          deleteVariants.run(productPk);
          updated += 1;
        }
        product.variants.forEach((variant, position) => {
          const variantPk = insertVariant.run(
            productPk,
            position,
            foldText(variant.sku),
            variant.gtin,
            comparableGtin(variant.gtin),
          ).lastInsertRowid;
          gtinIndex.add(Number(variantPk), variant.gtin);
        });
      }
      gtinIndex.flush();
      return { inserted, updated };
    });
    return report;
  }

  async upsertStorefrontProducts(products: readonly StorefrontProductInput[]): Promise<ImportReport> {
    const db = this.database;
    const report = db.transaction(() => {
      const find = db.statement(
        `SELECT CAST(p.cursor AS TEXT) AS cursor, json_extract(d.doc, '$.created_at') AS created_at
         FROM storefront_products p JOIN storefront_documents d ON d.cursor = p.cursor WHERE p.id = ?`,
      );
      const maxCursor = db.statement('SELECT CAST(max(cursor) AS TEXT) AS cursor FROM storefront_products').get() as {
        cursor: string | null;
      };
      let last = maxCursor.cursor === null ? CURSOR_BASE : BigInt(maxCursor.cursor);
      const change = (db.statement('SELECT coalesce(max(change_seq), 0) + 1 AS n FROM storefront_products').get() as { n: number }).n;
      const upsert = db.statement(`INSERT OR REPLACE INTO storefront_products (
          cursor, id, product_id, shop_name, brand, product_type, title, slug, price_min, price_max,
          price_display, available, created_at, updated_at, product_created_at, product_published_at, change_seq, tags
        ) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
      const upsertDocument = db.statement('INSERT OR REPLACE INTO storefront_documents (cursor, doc) VALUES (?, ?)');
      let inserted = 0;
      let updated = 0;
      const now = new Date().toISOString();
      for (const input of products) {
        const existing = find.get(input.id) as { cursor: string; created_at: string | null } | undefined;
        let cursor: bigint;
        if (existing === undefined) {
          last = cursorAfter(last);
          cursor = last;
          inserted += 1;
        } else {
          cursor = BigInt(existing.cursor);
          updated += 1;
        }
        const createdAt = input.created_at ?? existing?.created_at ?? now;
        const updatedAt = input.updated_at ?? now;
        const product = storefrontDocument(input, Number(cursor), createdAt, updatedAt);
        upsert.run(
          cursor,
          product.id,
          product.product_id,
          product.shop_name,
          product.brand,
          product.product_type,
          product.title,
          product.slug,
          product.price_min,
          product.price_max,
          product.price_display,
          product.available ? 1 : 0,
          epochMs(product.created_at),
          epochMs(product.updated_at),
          epochMs(product.product_created_at),
          epochMs(product.product_published_at),
          change,
          JSON.stringify(product.tags),
        );
        upsertDocument.run(cursor, JSON.stringify(product));
      }
      return { inserted, updated };
    });
    return report;
  }

  async sampleVariants(limit: number): Promise<CatalogVariant[]> {
    const bounds = this.database.statement('SELECT min(pk) AS lo, max(pk) AS hi FROM catalog_variants').get() as {
      lo: number | null;
      hi: number | null;
    };
    if (bounds.lo === null || bounds.hi === null || limit <= 0) return [];
    const at = this.database.statement(`SELECT v.pk AS pk, ${VARIANT_TEXT} AS variant FROM ${VARIANTS_WITH_PRODUCTS} WHERE v.pk >= ? ORDER BY v.pk LIMIT 1`);
    const step = Math.max(1, (bounds.hi - bounds.lo + 1) / limit);
    const seen = new Set<number>();
    const variants: CatalogVariant[] = [];
    for (let i = 0; i < limit; i += 1) {
      const row = at.get(Math.floor(bounds.lo + i * step)) as (VariantTextRow & { pk: number }) | undefined;
      if (row === undefined || seen.has(row.pk)) continue;
      seen.add(row.pk);
      variants.push(JSON.parse(row.variant) as CatalogVariant);
    }
    return variants;
  }

  /**
   * Before a bulk load into an EMPTY catalog (BulkLoading): drops the GTIN, SKU and
   * GTIN-14 indexes so that writes skip them, until `optimize` rebuilds them. Meanwhile those
   * searches scan every variant, blocking a serving process for a time proportional to the
   * catalog, so a catalog that already has variants keeps its indexes live (a slower load, no
   * stalls).
   * Returns whether it deferred.
   */
  async deferIndexes(): Promise<boolean> {
    return this.database.transaction(() => {
      if (this.database.statement('SELECT 1 FROM catalog_variants LIMIT 1').get() !== undefined) return false;
      deferGtinIndex(this.database.connection());
      return true;
    });
  }

  /** Whether GTIN searches use their index; false between `deferIndexes` and `optimize`. */
  indexesLive(): boolean {
    return readState(this.database) === 'live';
  }

  /**
   * After an import (BulkLoading): rebuilds a deferred GTIN index (one sorted pass over every
   * suffix) or retakes its fragment counts (one pass over the variants).
   */
  async optimize(): Promise<void> {
    const db = this.database.connection();
    this.database.transaction(() => (this.indexesLive() ? recountGtinFragments(db) : rebuildGtinIndex(db)));
  }

  async ping(): Promise<void> {
    try {
      this.database.statement('SELECT 1').get();
    } catch (error) {
      throw error instanceof ServiceUnavailable ? error : new ServiceUnavailable('catalog database', { cause: error });
    }
  }

  async close(): Promise<void> {
    await this.#pages.close();
    this.database.close();
  }
}

/**
 * The total implied by a page without counting: a page shorter than the limit is the last one,
 * unless it is empty past the first page (the offset may then overshoot the matches).
 */
function knownTotal(offset: number, limit: number, received: number): number | undefined {
  if (received < limit && (received > 0 || offset === 0)) return offset + received;
  return undefined;
}


