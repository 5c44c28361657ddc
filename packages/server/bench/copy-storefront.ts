// Makes a large storefront catalog quickly from a smaller one: copies a SQLite catalog's storefront
// products and documents K times in place, each copy with new cursors (shifted past the last),
// ids (`<id>r<k>`), slugs (`<slug>-r<k>`) and change sequence numbers, its documents rewritten to
// match. The copies repeat the original's values (titles, brands, tags, prices), so the index's
// dictionaries hold the original's vocabulary; everything else grows K + 1 times. Seeding ten
// million products directly takes hours on this machine; a million copied nine times, minutes.
// Then write the index snapshot: `catalog import --db sqlite:FILE --kind storefront <empty file>`.
//
//   node bench/copy-storefront.ts --db sqlite:/tmp/sf.db [--copies 9]
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { progress } from './lib/processes.ts';

const { values } = parseArgs({ options: { db: { type: 'string' }, copies: { type: 'string' } } });
if (values.db?.startsWith('sqlite:') !== true) throw new Error('--db sqlite:FILE: the catalog to grow in place');
const copies = Number(values.copies ?? 9);
const db = new DatabaseSync(values.db.slice('sqlite:'.length), { readBigInts: true });
db.exec('PRAGMA synchronous = OFF');
const { low, high, changes } = db.prepare('SELECT min(cursor) AS low, max(cursor) AS high, max(change_seq) AS changes FROM storefront_products').get() as { low: bigint; high: bigint; changes: bigint };
// Each copy's cursors keep the original's spacing, past the previous copy's.
const span = high - low + (high - low) / BigInt(Math.max(1, Number((db.prepare('SELECT count(*) AS n FROM storefront_products').get() as { n: bigint }).n) - 1));
for (let k = 1; k <= copies; k += 1) {
  const started = performance.now();
  const shift = BigInt(k) * span;
  db.exec('BEGIN');
  db.exec(
    `INSERT INTO storefront_products SELECT cursor + ${shift}, id || 'r${k}', product_id, shop_name, brand, product_type, title, slug || '-r${k}', price_min, price_max, price_display, available, created_at, updated_at, product_created_at, product_published_at, change_seq + ${BigInt(k) * changes}, tags FROM storefront_products WHERE cursor <= ${high}`,
  );
  db.exec(
    `INSERT INTO storefront_documents SELECT cursor + ${shift}, json_set(doc, '$.id', json_extract(doc, '$.id') || 'r${k}', '$.slug', json_extract(doc, '$.slug') || '-r${k}', '$.cursor', cursor + ${shift}) FROM storefront_documents WHERE cursor <= ${high}`,
  );
  db.exec('COMMIT');
  progress(`copy ${k} of ${copies}: ${((performance.now() - started) / 1000).toFixed(0)} s`);
}
db.close();
