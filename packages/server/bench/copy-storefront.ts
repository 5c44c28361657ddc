// Makes a large storefront catalog quickly from a smaller one: copies a catalog's storefront
// products and documents K times in place, each copy with new cursors (shifted past the last),
// ids (`<id>r<k>`), slugs (`<slug>-r<k>`) and change sequence numbers, its documents rewritten to
// match. The copies repeat the original's values (titles, brands, tags, prices), so the index's
// dictionaries hold the original's vocabulary; everything else grows K + 1 times. Seeding ten
// million products directly takes hours on this machine; a million copied nine times, minutes.
// SQLite or PostgreSQL (where a document is the stored text: its id, slug and cursor are replaced
// in the text, the rest of it byte for byte).
// Then write the index snapshot: `catalog import --db URL --kind storefront <empty file>`.
//
//   node bench/copy-storefront.ts --db sqlite:/tmp/sf.db|postgres://… [--copies 9]
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { CURSOR_BASE, CURSOR_STEP } from '../src/catalog/storefront-document.ts';
import { progress } from './lib/processes.ts';

const { values } = parseArgs({ options: { db: { type: 'string' }, copies: { type: 'string' } } });
const url = values.db ?? '';
if (!url.startsWith('sqlite:') && !url.startsWith('postgres')) throw new Error('--db sqlite:FILE|postgres://…: the catalog to grow in place');
const copies = Number(values.copies ?? 9);

interface Copier {
  /** The lowest and highest cursor, the highest change sequence number and the number of products. */
  extent(): Promise<{ low: bigint; high: bigint; changes: bigint; count: bigint }>;
  /** Copies the products at or below cursor `high` once, shifted by `shift` and named copy `k`. */
  copy(k: number, shift: bigint, high: bigint, changes: bigint): Promise<void>;
  close(): Promise<void>;
}

function sqliteCopier(file: string): Copier {
  const db = new DatabaseSync(file, { readBigInts: true });
  db.exec('PRAGMA synchronous = OFF');
  return {
    extent: async () =>
      db.prepare('SELECT min(cursor) AS low, max(cursor) AS high, max(change_seq) AS changes, count(*) AS count FROM storefront_products').get() as {
        low: bigint;
        high: bigint;
        changes: bigint;
        count: bigint;
      },
    copy: async (k, shift, high, changes) => {
      db.exec('BEGIN');
      db.exec(
        `INSERT INTO storefront_products SELECT cursor + ${shift}, id || 'r${k}', product_id, shop_name, brand, product_type, title, slug || '-r${k}', price_min, price_max, price_display, available, created_at, updated_at, product_created_at, product_published_at, change_seq + ${BigInt(k) * changes}, tags FROM storefront_products WHERE cursor <= ${high}`,
      );
      db.exec(
        `INSERT INTO storefront_documents SELECT cursor + ${shift}, json_set(doc, '$.id', json_extract(doc, '$.id') || 'r${k}', '$.slug', json_extract(doc, '$.slug') || '-r${k}', '$.cursor', cursor + ${shift}) FROM storefront_documents WHERE cursor <= ${high}`,
      );
      db.exec('COMMIT');
    },
    close: async () => db.close(),
  };
}

function postgresCopier(connectionString: string): Copier {
  const client = new pg.Client({ connectionString });
  const connected = client.connect();
  return {
    extent: async () => {
      await connected;
      const { rows } = await client.query<{ low: string; high: string; changes: string; count: string }>(
        'SELECT min(cursor)::text AS low, max(cursor)::text AS high, max(change_seq)::text AS changes, count(*)::text AS count FROM storefront_products',
      );
      const row = rows[0]!;
      return { low: BigInt(row.low), high: BigInt(row.high), changes: BigInt(row.changes), count: BigInt(row.count) };
    },
    copy: async (k, shift, high, changes) => {
      // A document starts with its own id ("{"id":…), then holds one slug and one cursor.
      await client.query(
        `INSERT INTO storefront_products (id, cursor, product_id, shop_name, brand, product_type, title, slug, price_min, price_max, price_display, available,
           created_at_ms, updated_at_ms, product_created_at_ms, product_published_at_ms, document, change_seq, tags)
         SELECT id || 'r${k}', cursor + ${shift}, product_id, shop_name, brand, product_type, title, slug || '-r${k}', price_min, price_max, price_display, available,
           created_at_ms, updated_at_ms, product_created_at_ms, product_published_at_ms,
           regexp_replace(regexp_replace(regexp_replace(document, '^\\{"id":"([^"]*)"', '{"id":"\\1r${k}"'), '"slug":"([^"]*)"', '"slug":"\\1-r${k}"'), '"cursor":-?[0-9]+', '"cursor":' || (cursor + ${shift})::text),
           change_seq + ${BigInt(k) * changes}, tags
         FROM storefront_products WHERE cursor <= ${high}`,
      );
    },
    close: async () => {
      // New products and changes come from sequences: past the copies', or a new product's cursor
      // would fall below theirs and a change would sort before the index's position. Then the
      // planner's statistics, which the copies made stale.
      await client.query("SELECT setval('storefront_change_seq', (SELECT max(change_seq) FROM storefront_products))");
      await client.query(
        `SELECT setval('storefront_cursor_seq', (SELECT ceil((max(cursor) - ${CURSOR_BASE})::numeric / ${CURSOR_STEP})::bigint FROM storefront_products))`,
      );
      await client.query('ANALYZE storefront_products');
      await client.end();
    },
  };
}

const copier = url.startsWith('sqlite:') ? sqliteCopier(url.slice('sqlite:'.length)) : postgresCopier(url);
const { low, high, changes, count } = await copier.extent();
// Each copy's cursors keep the original's spacing, past the previous copy's.
const span = high - low + (high - low) / (count > 1n ? count - 1n : 1n);
for (let k = 1; k <= copies; k += 1) {
  const started = performance.now();
  await copier.copy(k, BigInt(k) * span, high, changes);
  progress(`copy ${k} of ${copies}: ${((performance.now() - started) / 1000).toFixed(0)} s`);
}
await copier.close();
