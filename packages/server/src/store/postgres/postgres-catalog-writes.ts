// The writers of PostgresCatalogStore: catalog and storefront imports (upserts through per-connection
// staging tables filled by COPY), and the bulk-load steps around them (deferIndexes, optimize).
//
// Guarantees
// - Storefront cursors are 17_000_000_000_000_000 + n * 1024 (n from a sequence): exact doubles,
//   strictly increasing in import order, kept when a product is re-imported. Storefront imports
//   serialise on an advisory lock, so concurrent importers never give one id two cursors; each
//   import is one storefront change (change_seq), which the storefront index catches up from.
// - Catalog writes serialise on an advisory lock, and the GTIN fragment counts change in the same
//   transaction as the variants, so each write sees the GTINs it replaces.
// - Within one call, the last line of an id wins, as upserting the lines one by one would.
// Failure modes: every write is one transaction, rolled back whole on any error; engine errors
// propagate; the store maps outages (PostgresCatalogStore.#run).
import type pg from 'pg';
import type { ImportReport } from '../../catalog/catalog-store.ts';
import { comparableGtin } from '../../catalog/gtin.ts';
import { FragmentDeltas } from '../../catalog/gtin-fragments.ts';
import type { CatalogProductPro, StorefrontProduct, StorefrontProductInput } from '../../catalog/model.ts';
import { cursorAt, epochMs, storefrontDocument } from '../../catalog/storefront-document.ts';
import { foldText } from '../../catalog/text.ts';
import { copyRows } from './copy-rows.ts';
import { LONG_STATEMENT, recountGtinFragments, VARIANT_SEARCH_INDEXES } from './migrations.ts';
import { inTransaction } from './pg-pool.ts';

const STOREFRONT_IMPORT_LOCK = 'catalog.storefront_import';
const CATALOG_IMPORT_LOCK = 'catalog.catalog_import';

export function upsertCatalogProducts(pool: pg.Pool, products: readonly CatalogProductPro[]): Promise<ImportReport> {
  return inTransaction(pool, async (client) => {
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
    await stagingTables(client);
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
  });
}

export function upsertStorefrontProducts(pool: pg.Pool, products: readonly StorefrontProductInput[]): Promise<ImportReport> {
  return inTransaction(pool, async (client) => {
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
    await stagingTables(client);
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
  });
}

/**
 * Before a bulk load into an EMPTY catalog (BulkLoading): drops the variant search
 * indexes (VARIANT_SEARCH_INDEXES) so that each insert skips them, until `optimize` creates them
 * again in one pass. Meanwhile SKU and GTIN searches scan every variant, so a catalog that
 * already has variants keeps them live. Returns whether it deferred.
 */
export function deferIndexes(pool: pg.Pool): Promise<boolean> {
  return inTransaction(pool, async (client) => {
    const { rows } = await client.query('SELECT 1 FROM catalog_variants LIMIT 1');
    if (rows.length > 0) return false;
    for (const index of VARIANT_SEARCH_INDEXES) await client.query(`DROP INDEX IF EXISTS ${index.name}`);
    // The fragment counts too: keeping them current costs an upsert per fragment per batch.
    await client.query("TRUNCATE catalog_gtin_fragments; UPDATE catalog_index_state SET state = 'deferred' WHERE name = 'gtin_fragments'");
    return true;
  });
}

/**
 * After a bulk load (import, seed), and by `catalog migrate`: creates any variant search index a
 * deferred load left missing, takes the GTIN fragment counts it deferred, merges the GIN pending
 * lists, and refreshes planner statistics, so
 * the first searches use the indexes at full speed.
 */
export function optimize(pool: pg.Pool): Promise<void> {
  return inTransaction(pool, async (client) => {
    // Index builds run longer than the pool's statement timeout, and faster with more memory.
    await client.query("SET LOCAL statement_timeout = 0; SET LOCAL maintenance_work_mem = '256MB'");
    const { rows } = await client.query<{ state: string }>("SELECT state FROM catalog_index_state WHERE name = 'gtin_fragments'");
    const deferred = rows[0]?.state !== 'live';
    for (const index of VARIANT_SEARCH_INDEXES) await client.query({ text: `CREATE INDEX IF NOT EXISTS ${index.name} ${index.definition}`, ...LONG_STATEMENT });
    if (deferred) await recountGtinFragments(client);
    await client.query({ text: 'ANALYZE catalog_products, catalog_variants, storefront_products', ...LONG_STATEMENT });
  });
}

/**
 * This connection's staging tables for a catalog or storefront write: temporary (no WAL, invisible to other
 * sessions) and emptied at every commit or rollback. Asked for in every write's transaction: a
 * creation rolled back with a failed write must not be taken for done.
 */
async function stagingTables(client: pg.PoolClient): Promise<void> {
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

/** Keeps the last occurrence of each id, as an upsert of the lines one by one would. */
function lastById<T extends { id: string }>(items: readonly T[]): T[] {
  const byId = new Map<string, T>();
  for (const item of items) {
    byId.delete(item.id);
    byId.set(item.id, item);
  }
  return [...byId.values()];
}
