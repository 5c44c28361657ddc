// What the storefront snapshot tests of both engines load and ask: one set of listings (each
// search kind the index serves) whose answers must be the same from a snapshot as from a full load.
import { parseFilter } from '../../src/catalog/filter/parse-filter.ts';
import { generateStorefrontProducts } from '../../src/catalog/seed/generate-catalog.ts';
import type { StorefrontQuery } from '../../src/catalog/catalog-store.ts';

export const SNAPSHOT_QUERIES: StorefrontQuery[] = [
  { sort: 'cursor:asc', offset: 0, limit: 50 },
  { sort: 'updated_at:desc', offset: 5, limit: 20, filter: parseFilter('price_min >= 60 AND available = true') },
  { sort: 'published_at:asc', offset: 0, limit: 30, text: 'black' },
  { sort: 'cursor:desc', offset: 0, limit: 30, filter: parseFilter('tags IN [COLOR_BLACK, SEASON_SS24] OR NOT brand = Nike') },
];

/** `count` storefront products generated from `seed` (the same seed gives the same products). */
export const snapshotProducts = (count: number, seed: string) => [...generateStorefrontProducts({ products: 2 * count, seed })];
