// Versioned schema for the SQLite catalog. Each migration runs once, in order, inside a transaction,
// and is recorded in `schema_migrations`; a database newer than this code is refused rather than
// guessed at. Never edit a released migration: append a new one.
import type { DatabaseSync } from 'node:sqlite';
import { foldText } from '../../catalog/text.ts';
import { GTIN_INDEX_SCHEMA, rebuildGtinIndex } from './sqlite-gtin-index.ts';

interface Migration {
  version: number;
  name: string;
  sql: string;
  /** Runs after `sql`, in the same transaction: data moves that SQL alone does slowly. */
  migrateData?: (db: DatabaseSync) => void;
}

const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'catalog, storefront and keys',
    sql: `
      -- Catalog products keep their whole document (key order included); columns exist for look-ups.
      CREATE TABLE catalog_products (
        pk INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        slug TEXT NOT NULL,
        brand TEXT NOT NULL,
        doc TEXT NOT NULL
      );
      CREATE INDEX catalog_products_slug ON catalog_products (slug);
      CREATE INDEX catalog_products_brand ON catalog_products (brand);

      -- One row per variant; the variant itself is read from its product's document at \`position\`.
      CREATE TABLE catalog_variants (
        pk INTEGER PRIMARY KEY,
        product_pk INTEGER NOT NULL,
        position INTEGER NOT NULL,
        sku TEXT NOT NULL COLLATE NOCASE,
        gtin TEXT NOT NULL,
        gtin14 TEXT NOT NULL
      );
      CREATE INDEX catalog_variants_product ON catalog_variants (product_pk);
      CREATE INDEX catalog_variants_sku ON catalog_variants (sku);
      CREATE INDEX catalog_variants_gtin14 ON catalog_variants (gtin14);
      -- Substring search over stored GTINs: a trigram index, rowid = catalog_variants.pk.
      CREATE VIRTUAL TABLE catalog_variants_gtin USING fts5 (
        gtin, content='', contentless_delete=1, tokenize='trigram'
      );
      -- Approximate number of GTINs containing each trigram (only ever incremented): lets a search
      -- query the index with the query's rarest window instead of its most common trigrams.
      CREATE TABLE gtin_trigrams (
        trigram TEXT PRIMARY KEY,
        docs INTEGER NOT NULL
      ) WITHOUT ROWID;

      -- Storefront products: the cursor is the rowid, so "cursor > N" is a primary-key range.
      CREATE TABLE storefront_products (
        cursor INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        product_id TEXT NOT NULL COLLATE NOCASE,
        shop_name TEXT NOT NULL COLLATE NOCASE,
        brand TEXT NOT NULL COLLATE NOCASE,
        product_type TEXT NOT NULL COLLATE NOCASE,
        title TEXT NOT NULL COLLATE NOCASE,
        slug TEXT NOT NULL COLLATE NOCASE,
        price_min REAL NOT NULL,
        price_max REAL NOT NULL,
        price_display REAL NOT NULL,
        available INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        product_created_at INTEGER NOT NULL,
        product_published_at INTEGER NOT NULL,
        doc TEXT NOT NULL
      );
      CREATE INDEX storefront_products_shop ON storefront_products (shop_name);
      CREATE INDEX storefront_products_brand ON storefront_products (brand);
      CREATE INDEX storefront_products_updated ON storefront_products (updated_at, cursor);
      CREATE INDEX storefront_products_published ON storefront_products (product_published_at, cursor);
      CREATE TABLE storefront_tags (
        tag TEXT NOT NULL COLLATE NOCASE,
        cursor INTEGER NOT NULL,
        PRIMARY KEY (tag, cursor)
      ) WITHOUT ROWID;
      CREATE INDEX storefront_tags_cursor ON storefront_tags (cursor);
      -- Word search over title, brand, product type and tags; rowid = cursor.
      CREATE VIRTUAL TABLE storefront_text USING fts5 (
        title, brand, product_type, tags, content='', contentless_delete=1
      );

      CREATE TABLE api_keys (
        digest BLOB PRIMARY KEY,
        plan TEXT NOT NULL CHECK (plan IN ('free', 'pro')),
        label TEXT,
        created_at TEXT NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'narrow storefront rows for fast counts',
    sql: `
      -- Documents move to their own table: a filtered count then scans ~150-byte rows, not
      -- multi-kilobyte ones. The cursor index makes "cursor > N" counts a dense index range.
      CREATE TABLE storefront_documents (
        cursor INTEGER PRIMARY KEY,
        doc TEXT NOT NULL
      );
      INSERT INTO storefront_documents (cursor, doc) SELECT cursor, doc FROM storefront_products;
      ALTER TABLE storefront_products DROP COLUMN doc;
      CREATE INDEX storefront_products_cursor ON storefront_products (cursor);
      CREATE INDEX storefront_products_available ON storefront_products (available, cursor);
    `,
  },
  {
    version: 3,
    name: 'GTIN suffix index with fragment counts',
    sql: `
      -- The trigram index read tens of thousands of postings for a common fragment and could not
      -- count matches without visiting each (sqlite-gtin-index.ts has the replacement).
      DROP TABLE catalog_variants_gtin;
      DROP TABLE gtin_trigrams;
      ${GTIN_INDEX_SCHEMA}
    `,
    migrateData: rebuildGtinIndex,
  },
  {
    version: 4,
    name: 'storefront change sequence for the in-memory storefront index',
    sql: `
      -- Storefront listings are answered by the in-memory index (catalog/storefront-index.ts),
      -- which follows writes through change_seq: every upsert transaction takes the next value.
      -- The SQL search structures it replaces only slowed writes down.
      ALTER TABLE storefront_products ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0;
      -- The tags as the JSON array of the document, so following changes never parses documents.
      ALTER TABLE storefront_products ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
      UPDATE storefront_products SET tags =
        (SELECT json_extract(d.doc, '$.tags') FROM storefront_documents d WHERE d.cursor = storefront_products.cursor);
      CREATE INDEX storefront_products_change ON storefront_products (change_seq, cursor);
      DROP TABLE storefront_tags;
      DROP TABLE storefront_text;
      DROP INDEX storefront_products_shop;
      DROP INDEX storefront_products_brand;
      DROP INDEX storefront_products_updated;
      DROP INDEX storefront_products_published;
      DROP INDEX storefront_products_cursor;
      DROP INDEX storefront_products_available;
    `,
  },
  {
    version: 5,
    name: 'SKU and slug look-ups by the text rule',
    // The look-up columns (catalog_products.slug, catalog_variants.sku) now hold foldText of the
    // documents' values (catalog/text.ts), as PostgreSQL's do; the documents are unchanged.
    sql: '',
    migrateData: (db) => {
      const setSlug = db.prepare('UPDATE catalog_products SET slug = ? WHERE pk = ?');
      for (const row of db.prepare("SELECT pk, json_extract(doc, '$.slug') AS slug FROM catalog_products").iterate()) {
        const folded = foldText(String(row.slug));
        if (folded !== row.slug) setSlug.run(folded, row.pk as number);
      }
      const setSku = db.prepare('UPDATE catalog_variants SET sku = ? WHERE pk = ?');
      const variants = db.prepare(
        "SELECT v.pk, v.sku AS stored, json_extract(p.doc, '$.variants[' || v.position || '].sku') AS sku FROM catalog_variants v JOIN catalog_products p ON p.pk = v.product_pk",
      );
      for (const row of variants.iterate()) {
        const folded = foldText(String(row.sku));
        if (folded !== row.stored) setSku.run(folded, row.pk as number);
      }
    },
  },
  {
    version: 6,
    name: 'keys: last use and revocation',
    sql: `
      ALTER TABLE api_keys ADD COLUMN last_used_at TEXT;
      ALTER TABLE api_keys ADD COLUMN revoked_at TEXT;
    `,
  },
  {
    version: 7,
    name: 'price monitors and their outbox',
    // Times are epoch milliseconds. `position` is the newest price log id read for the monitor
    // (null until the service first reads for it), `baselines` the last delivered price per
    // variant|source|market (JSON). A monitor has at most one delivery (UNIQUE monitor_id): the
    // next is formed from its oldest changes once that one is delivered.
    sql: `
      CREATE TABLE monitors (
        id TEXT PRIMARY KEY,
        key_digest BLOB NOT NULL,
        url TEXT NOT NULL,
        filter TEXT NOT NULL,
        min_change_percent REAL NOT NULL,
        min_interval_ms INTEGER NOT NULL,
        secret TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        enabled INTEGER NOT NULL DEFAULT 1,
        disabled_reason TEXT,
        position INTEGER,
        baselines TEXT NOT NULL DEFAULT '{}',
        pending_reset INTEGER NOT NULL DEFAULT 0,
        next_delivery_at INTEGER NOT NULL DEFAULT 0,
        last_success_at INTEGER,
        last_failure_at INTEGER,
        last_failure_reason TEXT
      );
      CREATE INDEX monitors_key ON monitors (key_digest);
      CREATE TABLE monitor_changes (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        monitor_id TEXT NOT NULL,
        change TEXT NOT NULL,
        due_at INTEGER NOT NULL
      );
      CREATE INDEX monitor_changes_monitor ON monitor_changes (monitor_id, seq);
      CREATE TABLE monitor_deliveries (
        id TEXT PRIMARY KEY,
        monitor_id TEXT NOT NULL UNIQUE,
        body TEXT NOT NULL,
        changes INTEGER NOT NULL,
        first_due_at INTEGER NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        lease_until INTEGER NOT NULL DEFAULT 0,
        last_error TEXT
      );
      CREATE INDEX monitor_deliveries_due ON monitor_deliveries (next_attempt_at);
    `,
  },
  {
    version: 8,
    name: "monitors' baselines in a table of their own",
    // One row per (monitor, variant|source|market): a change writes its own baseline instead of
    // the monitor's whole set. Removing a monitor removes its rows (SqliteMonitorStore).
    sql: `
      CREATE TABLE monitor_baselines (
        monitor_id TEXT NOT NULL,
        key TEXT NOT NULL,
        price REAL NOT NULL,
        PRIMARY KEY (monitor_id, key)
      ) WITHOUT ROWID;
      INSERT INTO monitor_baselines (monitor_id, key, price) SELECT m.id, b.key, b.value FROM monitors m, json_each(m.baselines) b;
      ALTER TABLE monitors DROP COLUMN baselines;
    `,
  },
  {
    version: 9,
    name: "monitors' filters in a table of their own",
    // A filter is kilobytes (a hundred product ids is about 4 KB) and is read once per monitor by
    // an instance; a monitor's row is written on every round that moves its position and every
    // delivery. SQLite rewrites a whole row, filter included, and its page with it: narrow rows put
    // about seventy monitors in a page instead of three. Removing a monitor removes its filter
    // (SqliteMonitorStore).
    sql: `
      CREATE TABLE monitor_filters (
        monitor_id TEXT PRIMARY KEY,
        filter TEXT NOT NULL
      );
      INSERT INTO monitor_filters (monitor_id, filter) SELECT id, filter FROM monitors;
      ALTER TABLE monitors DROP COLUMN filter;
    `,
  },
  {
    version: 10,
    name: "monitors' baselines written as a log, folded into their table",
    // A round moves the baselines of every monitor its changes reach; upserted one by one, each
    // monitor's rows dirty a page of their own (about a page per monitor), and a commit writes
    // every such page. Appended, a round's baselines fill a few pages at the log's end; they are
    // folded into monitor_baselines, in key order, once the log is long (SqliteMonitorStore).
    // A monitor's baselines are its rows of monitor_baselines overlaid by its log rows, in order.
    sql: `
      CREATE TABLE monitor_baseline_log (
        seq INTEGER PRIMARY KEY,
        monitor_id TEXT NOT NULL,
        key TEXT NOT NULL,
        price REAL NOT NULL
      );
    `,
  },
];

export const LATEST_SCHEMA_VERSION = MIGRATIONS.length;

/** Applies every pending migration; idempotent, safe to call on each start. */
export function migrateSqlite(db: DatabaseSync): { applied: number[] } {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
  )`);
  const applied: number[] = [];
  db.exec('BEGIN IMMEDIATE');
  try {
    const row = db.prepare('SELECT max(version) AS version FROM schema_migrations').get() as
      | { version: number | null }
      | undefined;
    const current = row?.version ?? 0;
    if (current > LATEST_SCHEMA_VERSION) {
      throw new Error(
        `database schema version ${current} is newer than this build understands (${LATEST_SCHEMA_VERSION})`,
      );
    }
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      db.exec(migration.sql);
      migration.migrateData?.(db);
      record.run(migration.version, migration.name, new Date().toISOString());
      applied.push(migration.version);
    }
    db.exec('COMMIT');
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
  return { applied };
}
