// Listing kinds no issue's table names (issue 50), one at a time: equalities on ids, slugs,
// titles and prices, listings sorted by the date they are bounded on, text queries, deep pages.
// For each server CLI given (a before and an after in one run, each from a fresh start), each kind
// is sent `--requests` times on one kept-alive connection, every request with values of its own
// drawn from products sampled through the API; p50 and p99 per kind, and the median total.
// Reports; asserts nothing. The one-at-a-time tail is the client's and the machine's as much as
// the server's: shapes-bench.ts measures a bare server's beside it.
//
//   node bench/listing-kinds-bench.ts --db sqlite:/tmp/sf.db|postgres://… [--cli A.ts,B.ts] [--requests 100] [--kinds REGEX]
// The database must hold storefront products; the bench creates its own key.
import type { StorefrontProduct, StorefrontProductList } from '@catalog/contract';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createRandom, type Random } from '../src/catalog/seed/prng.ts';
import { silentLogger } from '../src/logger.ts';
import { openCatalogStores } from '../src/store/open-store.ts';
import { get, getJson } from './lib/http-client.ts';
import { progress, SERVER_DIR } from './lib/processes.ts';
import { percentile } from './lib/stats.ts';
import { startReady } from './shapes-bench.ts';

const SAMPLED_PAGES = 60;
const WARM_UP = 10;

interface Kind {
  name: string;
  /** A listing's query string (after `?`), its values drawn from `products`. */
  query(products: readonly StorefrontProduct[], random: Random): string;
}

const quote = (text: string): string => `"${text.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
const param = (name: string, value: string): string => `${name}=${encodeURIComponent(value)}`;
const pick = <T>(random: Random, values: readonly T[]): T => random.pick(values);
const price = (random: Random): string => (random.int(0, 30_000) / 100).toFixed(2);
const DAY_MS = 86_400_000;

const KINDS: readonly Kind[] = [
  { name: 'id = X', query: (products, random) => param('filters', `id = ${quote(pick(random, products).id)}`) },
  { name: 'slug = X', query: (products, random) => param('filters', `slug = ${quote(pick(random, products).slug)}`) },
  { name: 'title = X', query: (products, random) => param('filters', `title = ${quote(pick(random, products).title)}`) },
  { name: 'product_id IN [3]', query: (products, random) => param('filters', `product_id IN [${[0, 1, 2].map(() => quote(pick(random, products).product_id)).join(', ')}]`) },
  { name: 'price_display = X (a sampled price)', query: (products, random) => param('filters', `price_display = ${pick(random, products).price_display}`) },
  { name: 'price_min IN [3 prices] AND available = true', query: (products, random) => param('filters', `price_min IN [${[0, 1, 2].map(() => pick(random, products).price_min).join(', ')}] AND available = true`) },
  { name: 'updated_at > D, sorted updated_at:asc', query: (products, random) => `${param('filters', `updated_at > ${quote(pick(random, products).updated_at)}`)}&sort=updated_at:asc` },
  { name: 'updated_at < D, sorted updated_at:desc', query: (products, random) => `${param('filters', `updated_at < ${quote(pick(random, products).updated_at)}`)}&sort=updated_at:desc` },
  {
    name: 'a week of product_published_at, sorted published_at:asc',
    query: (products, random) => {
      const from = Date.parse(pick(random, products).product_published_at);
      return `${param('filters', `product_published_at >= ${quote(new Date(from).toISOString())} AND product_published_at < ${quote(new Date(from + 7 * DAY_MS).toISOString())}`)}&sort=published_at:asc`;
    },
  },
  { name: 'updated_at > D AND price_max < X, sorted updated_at:asc', query: (products, random) => `${param('filters', `updated_at > ${quote(pick(random, products).updated_at)} AND price_max < ${price(random)}`)}&sort=updated_at:asc` },
  { name: 'product_published_at < D AND available = true, sorted published_at:desc', query: (products, random) => `${param('filters', `product_published_at < ${quote(pick(random, products).product_published_at)} AND available = true`)}&sort=published_at:desc` },
  { name: 'query: one title word', query: (products, random) => param('query', pick(random, pick(random, products).title.split(' '))) },
  { name: 'price_display > X, sorted published_at:asc, page 50', query: (_products, random) => `${param('filters', `price_display > ${price(random)}`)}&sort=published_at:asc&page=50` },
  { name: 'cursor > C, limit 100', query: (products, random) => `${param('filters', `cursor > ${pick(random, products).cursor}`)}&limit=100` },
];

interface KindRow {
  kind: string;
  server: string;
  p50: number;
  p99: number;
  medianTotal: number;
  non2xx: number;
}

async function runListingKinds(db: string, clis: readonly string[], requests: number, kinds: RegExp | undefined): Promise<KindRow[]> {
  const stores = await openCatalogStores(db, silentLogger);
  const key = await stores.keys.createKey('pro', 'listing kinds bench');
  await stores.close();
  const headers = { authorization: key };
  const chosen = KINDS.filter((kind) => kinds === undefined || kinds.test(kind.name));
  const rows: KindRow[] = [];
  let products: StorefrontProduct[] | undefined;
  for (const cli of clis) {
    const server = await startReady(cli, db);
    try {
      if (products === undefined) {
        // Pages from cursors spread over the catalog's first and last products.
        const sampler = createRandom('listing-kinds:sample');
        const first = await getJson<StorefrontProductList>(`${server.base}/v3/storefront/products?limit=1`, headers);
        const last = await getJson<StorefrontProductList>(`${server.base}/v3/storefront/products?limit=1&sort=cursor:desc`, headers);
        const [low, high] = [first.data[0]?.cursor ?? 0, last.data[0]?.cursor ?? 0];
        products = [];
        for (let page = 0; page < SAMPLED_PAGES; page += 1) {
          const from = low + Math.floor(sampler.next() * (high - low));
          products.push(...(await getJson<StorefrontProductList>(`${server.base}/v3/storefront/products?${param('filters', `cursor >= ${from}`)}&limit=100`, headers)).data);
        }
        progress(`listing kinds: sampled ${products.length} products`);
      }
      for (const kind of chosen) {
        // The same values for every server: one random sequence per kind.
        const random = createRandom(`listing-kinds:${kind.name}`);
        for (let i = 0; i < WARM_UP; i += 1) await get(`${server.base}/v3/storefront/products?${kind.query(products, random)}`, headers);
        const times: number[] = [];
        const totals: number[] = [];
        let non2xx = 0;
        for (let i = 0; i < requests; i += 1) {
          const url = `${server.base}/v3/storefront/products?${kind.query(products, random)}`;
          const started = performance.now();
          const response = await get(url, headers);
          times.push(performance.now() - started);
          if (response.status === 200) totals.push((JSON.parse(response.body.toString('utf8')) as StorefrontProductList).meta.total);
          else non2xx += 1;
        }
        times.sort((a, b) => a - b);
        totals.sort((a, b) => a - b);
        rows.push({ kind: kind.name, server: cli.replace(/\/packages\/server\/src\/cli\/main\.ts$/u, ''), p50: percentile(times, 50), p99: percentile(times, 99), medianTotal: percentile(totals, 50), non2xx });
        progress(`listing kinds: ${kind.name}: p50 ${percentile(times, 50).toFixed(2)} ms`);
      }
    } finally {
      await server.stop();
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      db: { type: 'string' },
      cli: { type: 'string' },
      requests: { type: 'string', default: '100' },
      kinds: { type: 'string' },
    },
  });
  const rows = await runListingKinds(
    values.db ?? 'sqlite:./data/catalog.db',
    (values.cli ?? join(SERVER_DIR, 'src', 'cli', 'main.ts')).split(','),
    Number(values.requests),
    values.kinds === undefined ? undefined : new RegExp(values.kinds, 'u'),
  );
  const lines = ['| kind | server | p50 / p99 ms | median total | non-2xx |', '| --- | --- | --- | --- | --- |'];
  for (const row of rows) lines.push(`| ${row.kind} | ${row.server} | ${row.p50.toFixed(2)} / ${row.p99.toFixed(2)} | ${row.medianTotal} | ${row.non2xx} |`);
  process.stdout.write(`${lines.join('\n')}\n`);
}
