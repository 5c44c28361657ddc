// Versioned PostgreSQL schema. Each migration runs once, in its own transaction, and is recorded in
// `schema_migrations`; never edit a released migration, append a new one.
//
// Design notes the SQL cannot say:
// - Documents are stored as `text`, not `jsonb`: jsonb reorders keys and normalises numbers, and
//   what was imported must read back byte-for-byte as it came in.
// - Every string column the filter language or a sort touches is `COLLATE "C"`, so ordering and
//   comparisons are by code point whatever the database's default collation (as in SQLite).
// - Storefront text search is by word, like SQLite's FTS5 unicode61 tokenizer: `search_words` holds
//   the lowercased, diacritic-free words of title, brand, product type and tags (GIN-indexed).
// - Timestamps that filters and sorts use are epoch milliseconds (`double precision`), the unit the
//   filter compiler binds.
// - Storefront cursors come from a sequence: 17_000_000_000_000_000 + n * 1024 is exact as a double
//   for n below ~990 billion, so JSON.parse in JavaScript reads every cursor without loss.
import type pg from 'pg';
import { FRAGMENT_MIN, FragmentTally } from '../../catalog/gtin-fragments.ts';
import { foldText } from '../../catalog/text.ts';

/**
 * The variant search indexes (SKU, GTIN 4-grams, GTIN-14): dropped for a bulk load into an empty
 * catalog and created again after it (PostgresCatalogStore.deferIndexes, optimize), and by
 * `catalog migrate` when a dead load left them dropped. One definition for all three.
 */
export const VARIANT_SEARCH_INDEXES: readonly { name: string; table: string; definition: string }[] = [
  { name: 'catalog_variants_sku', table: 'catalog_variants', definition: 'ON catalog_variants (sku_lower, seq)' },
  // Written in place (no pending list): a search never reads a list of unsorted recent entries.
  { name: 'catalog_variants_gtin_grams', table: 'catalog_variants', definition: 'ON catalog_variants USING gin (gtin_grams(gtin)) WITH (fastupdate = off)' },
  { name: 'catalog_variants_gtin14', table: 'catalog_variants', definition: 'ON catalog_variants (gtin14)' },
];

/**
 * Fills `catalog_gtin_suffixes` from every variant (the caller empties it first). Unsorted: the
 * caller creates the range index afterwards, which sorts once.
 */
async function fillGtinSuffixes(client: pg.PoolClient, options: typeof LONG_STATEMENT): Promise<void> {
  await client.query({
    text: `INSERT INTO catalog_gtin_suffixes (suffix, variant_seq)
     SELECT substr(v.gtin, s.i), v.seq FROM catalog_variants v CROSS JOIN LATERAL generate_series(1, length(v.gtin) - ${FRAGMENT_MIN - 1}) AS s(i)`,
    ...options,
  });
}

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** Runs after `sql`, in the same transaction: data moves that need TypeScript (the text rule). */
  migrateData?: (client: pg.PoolClient) => Promise<void>;
}

export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'catalog, storefront and api keys',
    sql: `
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE catalog_products (
  id text COLLATE "C" PRIMARY KEY,
  slug text COLLATE "C" NOT NULL,
  brand text COLLATE "C" NOT NULL,
  document text NOT NULL
);
CREATE INDEX catalog_products_slug ON catalog_products (slug);
CREATE INDEX catalog_products_brand ON catalog_products (brand);

CREATE TABLE catalog_variants (
  seq bigserial NOT NULL UNIQUE,
  id text COLLATE "C" PRIMARY KEY,
  product_id text COLLATE "C" NOT NULL REFERENCES catalog_products (id) ON DELETE CASCADE,
  position integer NOT NULL,
  sku_lower text COLLATE "C" NOT NULL,
  gtin text COLLATE "C" NOT NULL,
  gtin14 text COLLATE "C" NOT NULL,
  document text NOT NULL
);
CREATE INDEX catalog_variants_product ON catalog_variants (product_id, position);
CREATE INDEX catalog_variants_sku ON catalog_variants (sku_lower, seq);
CREATE INDEX catalog_variants_gtin_trgm ON catalog_variants USING gin (gtin gin_trgm_ops);
CREATE INDEX catalog_variants_gtin14 ON catalog_variants (gtin14);

CREATE SEQUENCE storefront_cursor_seq AS bigint MINVALUE 1;
CREATE TABLE storefront_products (
  id text COLLATE "C" PRIMARY KEY,
  cursor bigint NOT NULL UNIQUE,
  product_id text COLLATE "C" NOT NULL,
  shop_name text COLLATE "C" NOT NULL,
  brand text COLLATE "C" NOT NULL,
  product_type text COLLATE "C" NOT NULL,
  title text COLLATE "C" NOT NULL,
  slug text COLLATE "C" NOT NULL,
  price_min double precision NOT NULL,
  price_max double precision NOT NULL,
  price_display double precision NOT NULL,
  available boolean NOT NULL,
  tags_lower text[] COLLATE "C" NOT NULL,
  created_at_ms double precision NOT NULL,
  updated_at_ms double precision NOT NULL,
  product_created_at_ms double precision NOT NULL,
  product_published_at_ms double precision NOT NULL,
  search_words text[] COLLATE "C" NOT NULL,
  document text NOT NULL
);
-- Keyset paging for every sort (ties broken by cursor); cursor:asc/desc use the UNIQUE index.
CREATE INDEX storefront_updated ON storefront_products (updated_at_ms, cursor);
CREATE INDEX storefront_published ON storefront_products (product_published_at_ms, cursor);
CREATE INDEX storefront_shop ON storefront_products (lower(shop_name), cursor);
CREATE INDEX storefront_tags ON storefront_products USING gin (tags_lower);
CREATE INDEX storefront_search ON storefront_products USING gin (search_words);

CREATE TABLE api_keys (
  digest bytea PRIMARY KEY,
  plan text NOT NULL CHECK (plan IN ('free', 'pro')),
  label text,
  created_at timestamptz NOT NULL DEFAULT now()
);
`,
  },
  {
    version: 2,
    name: 'storefront change sequence for the in-memory storefront index',
    sql: `
-- Storefront listings are answered by the in-memory index (catalog/storefront-index.ts), which
-- follows writes through change_seq: every storefront upsert takes the next value while holding
-- the storefront import lock, so changes commit in the order of their numbers. The SQL search
-- structures it replaces only slowed writes down.
ALTER TABLE storefront_products ADD COLUMN change_seq bigint NOT NULL DEFAULT 0;
-- The tags as the JSON array of the document, so following changes never parses documents.
ALTER TABLE storefront_products ADD COLUMN tags text NOT NULL DEFAULT '[]';
UPDATE storefront_products SET tags = (document::json -> 'tags')::text;
CREATE SEQUENCE storefront_change_seq AS bigint MINVALUE 1;
CREATE INDEX storefront_change ON storefront_products (change_seq, cursor);
DROP INDEX storefront_updated;
DROP INDEX storefront_published;
DROP INDEX storefront_shop;
DROP INDEX storefront_tags;
DROP INDEX storefront_search;
ALTER TABLE storefront_products DROP COLUMN tags_lower, DROP COLUMN search_words;
`,
  },
  {
    version: 3,
    name: 'SKU and slug look-ups by the text rule; slugs won by import order',
    sql: `
-- sku_lower and slug now hold foldText of the document's values (catalog/text.ts); seq keeps the
-- import order, which decides which product keeps a slug several products share.
ALTER TABLE catalog_products ADD COLUMN seq bigserial;
-- One row counting committed catalog and storefront writes: readers see a new value only once the
-- write has committed (MVCC), so a cached aggregate is never keyed to data it could not see.
CREATE TABLE catalog_version (n bigint NOT NULL);
INSERT INTO catalog_version VALUES (0);
CREATE INDEX catalog_products_slug_seq ON catalog_products (slug, seq);
DROP INDEX catalog_products_slug;
`,
    migrateData: async (client) => {
      // A data step may take longer than the pool's statement timeout on a large catalog.
      await client.query('SET LOCAL statement_timeout = 0');
      await refold(client, 'catalog_products', 'slug', 'slug');
      await refold(client, 'catalog_variants', 'sku_lower', 'sku');
    },
  },
  {
    version: 4,
    name: 'keys: last use and revocation',
    sql: `
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
ALTER TABLE api_keys ADD COLUMN revoked_at timestamptz;
`,
  },
  {
    version: 5,
    name: 'stored match counts of short GTIN fragments',
    sql: `
-- The rule of catalog/gtin-fragments.ts. Kept current by every catalog write while the state is
-- 'live'; a bulk load into an empty catalog sets it 'deferred' and optimize() takes them again.
CREATE TABLE catalog_gtin_fragments (
  fragment text COLLATE "C" PRIMARY KEY,
  variants bigint NOT NULL
);
CREATE TABLE catalog_index_state (
  name text PRIMARY KEY,
  state text NOT NULL CHECK (state IN ('live', 'deferred'))
);
INSERT INTO catalog_index_state (name, state) VALUES ('gtin_fragments', 'live');
`,
    migrateData: async (client) => {
      await client.query('SET LOCAL statement_timeout = 0');
      await recountGtinFragments(client);
    },
  },
  {
    version: 6,
    name: 'GTIN suffixes instead of trigrams',
    sql: `
-- Every suffix of 4 or more digits of every variant's GTIN: the variants whose GTIN contains a
-- fragment are one B-tree range, the suffixes that start with it (digit trigrams are so few that
-- their posting lists made a trigram search read thousands of entries for any fragment).
-- Maintained with the fragment counts (same state); no primary key: the range index is created
-- after a bulk fill.
CREATE TABLE catalog_gtin_suffixes (
  suffix text COLLATE "C" NOT NULL,
  variant_seq bigint NOT NULL
);
DROP INDEX IF EXISTS catalog_variants_gtin_trgm;
`,
    migrateData: async (client) => {
      await client.query("SET LOCAL statement_timeout = 0; SET LOCAL maintenance_work_mem = '256MB'");
      const { rows } = await client.query<{ state: string }>("SELECT state FROM catalog_index_state WHERE name = 'gtin_fragments'");
      // A bulk load that died leaves the state deferred: optimize() fills the table when it is redone.
      if (rows[0]?.state === 'live') await fillGtinSuffixes(client, LONG_STATEMENT);
      await client.query('CREATE INDEX catalog_gtin_suffixes_range ON catalog_gtin_suffixes (suffix, variant_seq)');
      // Without statistics the planner takes the new table for empty and scans it whole.
      await client.query('ANALYZE catalog_gtin_suffixes');
    },
  },
  {
    version: 7,
    name: 'documents compressed with lz4',
    sql: `
-- Product documents (several KB) are stored compressed; lz4 compresses and decompresses several
-- times faster than the default pglz, at a slightly larger size. Rows written before keep pglz
-- (both read back alike).
ALTER TABLE catalog_products ALTER COLUMN document SET COMPRESSION lz4;
ALTER TABLE storefront_products ALTER COLUMN document SET COMPRESSION lz4;
`,
  },
  {
    version: 8,
    name: 'GTIN 4-grams in a GIN index instead of the suffix table',
    sql: `
-- The distinct 4-digit windows of a GTIN (each as its value, 0 to 9999): a variant whose GTIN
-- contains a fragment of 4 or more digits has every 4-gram of the fragment, so the GIN index
-- on them narrows a search to a few candidates, which strpos then checks. Grams with another
-- character are left out (they never match a query). Far smaller than the suffix table: one
-- compressed posting entry per gram instead of a heap row and an index entry per suffix.
CREATE FUNCTION gtin_grams(gtin text) RETURNS int[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(DISTINCT substr(gtin, i, 4)::int), '{}')
  FROM generate_series(1, length(gtin) - 3) AS i
  WHERE substr(gtin, i, 4) ~ '^[0-9]{4}$'
$$;
DROP TABLE catalog_gtin_suffixes;
`,
    migrateData: async (client) => {
      await client.query("SET LOCAL statement_timeout = 0; SET LOCAL maintenance_work_mem = '256MB'");
      const { rows } = await client.query<{ state: string }>("SELECT state FROM catalog_index_state WHERE name = 'gtin_fragments'");
      // A bulk load that died leaves the state deferred: optimize() creates the index when it is redone.
      const grams = VARIANT_SEARCH_INDEXES.find((index) => index.name === 'catalog_variants_gtin_grams')!;
      if (rows[0]?.state === 'live') await client.query({ text: `CREATE INDEX IF NOT EXISTS ${grams.name} ${grams.definition}`, ...LONG_STATEMENT });
    },
  },
  {
    version: 9,
    name: 'storefront index snapshot in the database',
    sql: `
-- The storefront index snapshot (storefront-snapshot.ts), in parts, so every instance of a
-- deployment loads the one snapshot instead of reading every storefront row. The catalog column
-- is the identity it was taken of; a write replaces every row in one transaction. Stored
-- uncompressed: the arrays compress poorly, and compressing costs time on each load.
CREATE TABLE storefront_index_snapshot (
  catalog text NOT NULL,
  part integer NOT NULL,
  bytes bytea NOT NULL,
  PRIMARY KEY (catalog, part)
);
ALTER TABLE storefront_index_snapshot ALTER COLUMN bytes SET STORAGE EXTERNAL;
`,
  },
  {
    version: 10,
    name: 'price monitors and their outbox',
    sql: `
-- Price monitors (monitors/monitor-store.ts). Times are epoch milliseconds, as in SQLite.
-- position: the newest price log id read for the monitor (null until the service first reads for
-- it); baselines: the last delivered price per variant|source|market (JSON). A monitor has at
-- most one delivery (UNIQUE monitor_id): instances form and claim them under FOR UPDATE SKIP LOCKED.
CREATE TABLE monitors (
  id text PRIMARY KEY,
  key_digest bytea NOT NULL REFERENCES api_keys (digest),
  url text NOT NULL,
  filter text NOT NULL,
  min_change_percent double precision NOT NULL,
  min_interval_ms bigint NOT NULL,
  secret text NOT NULL,
  created_at bigint NOT NULL,
  enabled boolean NOT NULL DEFAULT true,
  disabled_reason text,
  position bigint,
  baselines text NOT NULL DEFAULT '{}',
  pending_reset boolean NOT NULL DEFAULT false,
  next_delivery_at bigint NOT NULL DEFAULT 0,
  last_success_at bigint,
  last_failure_at bigint,
  last_failure_reason text
);
CREATE INDEX monitors_key ON monitors (key_digest);
CREATE TABLE monitor_changes (
  seq bigserial PRIMARY KEY,
  monitor_id text NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
  change text NOT NULL,
  due_at bigint NOT NULL
);
CREATE INDEX monitor_changes_monitor ON monitor_changes (monitor_id, seq);
CREATE TABLE monitor_deliveries (
  id text PRIMARY KEY,
  monitor_id text NOT NULL UNIQUE REFERENCES monitors (id) ON DELETE CASCADE,
  body text NOT NULL,
  changes integer NOT NULL,
  first_due_at bigint NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at bigint NOT NULL,
  lease_until bigint NOT NULL DEFAULT 0,
  last_error text
);
CREATE INDEX monitor_deliveries_due ON monitor_deliveries (next_attempt_at);
`,
  },
  {
    version: 11,
    name: "monitors' baselines in a table of their own",
    sql: `
-- One row per (monitor, variant|source|market): a change writes its own baseline instead of
-- rewriting the monitor's row with the whole set.
CREATE TABLE monitor_baselines (
  monitor_id text NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
  key text NOT NULL,
  price double precision NOT NULL,
  PRIMARY KEY (monitor_id, key)
);
INSERT INTO monitor_baselines (monitor_id, key, price)
  SELECT m.id, b.key, b.value::double precision FROM monitors m, jsonb_each_text(m.baselines::jsonb) b;
ALTER TABLE monitors DROP COLUMN baselines;
`,
  },
  {
    version: 12,
    name: "monitors' baselines written as a log, folded into their table",
    sql: `
-- A round moves the baselines of every monitor its changes reach. Upserted one by one, each is a
-- new row version on a page of its own; appended, a round's fill a few pages at the log's end.
-- The log is folded into monitor_baselines once it is long (PostgresMonitorStore); a monitor's
-- baselines are its rows of monitor_baselines overlaid by its log rows in order.
CREATE TABLE monitor_baseline_log (
  seq bigserial PRIMARY KEY,
  monitor_id text NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
  key text NOT NULL,
  price double precision NOT NULL
);
`,
  },
  {
    version: 13,
    name: "the monitors' outbox rows without foreign keys",
    sql: `
-- A foreign key check looks the monitor up and locks its row (FOR KEY SHARE) for every row
-- inserted: it made an insert into monitor_changes 1.8 times as costly, and the outbox takes a
-- change row and a baseline row per price change. Every write of these rows holds the monitor's
-- row lock already, and removing a monitor deletes them with it (PostgresMonitorStore).
ALTER TABLE monitor_changes DROP CONSTRAINT monitor_changes_monitor_id_fkey;
ALTER TABLE monitor_baseline_log DROP CONSTRAINT monitor_baseline_log_monitor_id_fkey;
ALTER TABLE monitor_baselines DROP CONSTRAINT monitor_baselines_monitor_id_fkey;
ALTER TABLE monitor_deliveries DROP CONSTRAINT monitor_deliveries_monitor_id_fkey;
`,
  },
];

/**
 * Query options for statements that may run for minutes (index builds, recounts over every
 * variant): no client-side read timeout (the pool's is for requests); the caller lifts the
 * server's statement_timeout in its transaction.
 */
export const LONG_STATEMENT = { query_timeout: 2 ** 31 - 1 } as const;

/** Variants read per chunk when counting: one `string_agg` text of about 1.5 MB. */
const COUNT_CHUNK = 100_000;
/** Stored counts written per statement. */
const WRITE_CHUNK = 20_000;

/**
 * Takes the stored fragment counts from scratch over every variant, inside the caller's
 * transaction: one pass over the variants' GTINs, COUNT_CHUNK at a time.
 */
export async function recountGtinFragments(client: pg.PoolClient): Promise<void> {
  const tally = new FragmentTally();
  for (let after = '0'; ; ) {
    const { rows } = await client.query<{ gtins: string | null; last: string | null }>(
      `SELECT string_agg(gtin, ',' ORDER BY seq) AS gtins, max(seq)::text AS last
       FROM (SELECT seq, gtin FROM catalog_variants WHERE seq > $1::bigint ORDER BY seq LIMIT $2) chunk`,
      [after, COUNT_CHUNK],
    );
    const { gtins, last } = rows[0]!;
    if (gtins === null || last === null) break;
    after = last;
    tally.addJoined(gtins);
  }
  await client.query('DELETE FROM catalog_gtin_fragments');
  let chunk: [string, number][] = [];
  const write = async (): Promise<void> => {
    await client.query('INSERT INTO catalog_gtin_fragments (fragment, variants) SELECT * FROM unnest($1::text[], $2::bigint[])', [
      chunk.map(([fragment]) => fragment),
      chunk.map(([, variants]) => variants),
    ]);
    chunk = [];
  };
  for (const entry of tally.stored()) {
    chunk.push(entry);
    if (chunk.length === WRITE_CHUNK) await write();
  }
  if (chunk.length > 0) await write();
  await client.query("UPDATE catalog_index_state SET state = 'live' WHERE name = 'gtin_fragments'");
}

/**
 * Sets `column` of every row of `table` to foldText of its document's `key`, writing only the rows
 * whose stored value differs. Table and column names come from this file, never from input.
 */
async function refold(client: pg.PoolClient, table: string, column: string, key: string): Promise<void> {
  const { rows } = await client.query<{ id: string; value: string; stored: string }>(
    `SELECT id, document::json ->> $1 AS value, ${column} AS stored FROM ${table}`,
    [key],
  );
  const changed = rows.map((row) => ({ id: row.id, folded: foldText(row.value), stored: row.stored })).filter((row) => row.folded !== row.stored);
  await client.query(`UPDATE ${table} t SET ${column} = f.value FROM unnest($1::text[], $2::text[]) AS f(id, value) WHERE t.id = f.id`, [
    changed.map((row) => row.id),
    changed.map((row) => row.folded),
  ]);
}
