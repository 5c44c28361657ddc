// The costliest filters the language allows, looped by attackers with a free key, while a prober
// measures getProduct for everyone else: the prober's p99 alone and under attack, in one run, and
// the attack request's own latency. Reports; asserts nothing.
//
//   node bench/hostile-filter-bench.ts --db sqlite:/tmp/x.db [--attackers 4] [--seconds 10]
// The database must hold a seeded catalog (`catalog seed`); the bench creates its own keys.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { createApp } from '../src/app.ts';
import { testAppDeps } from '../test/support/app-deps.ts';
import { silentLogger } from '../src/logger.ts';
import { openCatalogStores } from '../src/store/open-store.ts';
import { percentile } from './lib/stats.ts';

const { values } = parseArgs({ options: { db: { type: 'string' }, attackers: { type: 'string' }, seconds: { type: 'string' } } });
const db = values.db ?? 'sqlite:./data/catalog.db';
const attackers = Number(values.attackers ?? 4);
const seconds = Number(values.seconds ?? 10);

const stores = await openCatalogStores(db, silentLogger);
const free = await stores.keys.createKey('free', 'hostile bench');
const server = http.createServer(createApp(testAppDeps({ catalog: stores.catalog, keys: stores.keys, logger: silentLogger })));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function get(path: string): Promise<{ status: number; ms: number; body: string }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get(base + path, { agent, headers: { authorization: free } }, (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, ms: performance.now() - started, body }));
      })
      .on('error', reject);
  });
}

// Product ids to probe with: one storefront page has no catalog ids, so take slugs from brands.
const storefront = JSON.parse((await get('/v3/storefront/products?limit=100')).body) as { data: { tags: string[] }[] };
const tags = [...new Set(storefront.data.flatMap((product) => product.tags))];
const sample = await stores.catalog.sampleVariants(200);
const productIds = [...new Set(sample.map((variant) => variant.product_id))];
// About 150 quoted strings within the 2,000-character limit: real tags first, then short ones.
const listed: string[] = [];
for (let i = 0; listed.length < 150; i += 1) {
  const candidate = JSON.stringify(i < 40 && tags[i] !== undefined ? tags[i] : `t${i}`);
  if ([...listed, candidate].join(',').length > 1_900) break;
  listed.push(candidate);
}
const quoted = listed.join(',');
// Every attack URL is distinct (the last list value carries a counter), so no cache answers it.
let distinct = 0;
const ATTACKS: (() => string)[] = [
  () => `filters=${encodeURIComponent(`tags IN [${quoted},"u${distinct++}"]`)}&page=50&sort=published_at:desc`,
  () => `filters=${encodeURIComponent(`tags NOT IN [${quoted},"u${distinct++}"]`)}&page=50&sort=updated_at:asc`,
  () => `filters=${encodeURIComponent([...listed.slice(0, 90), `"u${distinct++}"`].map((tag) => `tags = ${tag}`).join(' OR '))}&page=50&sort=published_at:asc`,
  // About as many leaves as 2,000 characters hold, each a full pass over a numeric column, nested.
  () => {
    const leaves = Array.from({ length: 92 }, (_, i) => `price_min >= ${(i * 7 + distinct) % 500}`);
    distinct += 1;
    const filter = `NOT (${leaves.slice(0, 46).join(' OR ')}) OR (${leaves.slice(46).join(' AND ')})`;
    if (filter.length > 2_000) throw new Error(`attack filter of ${filter.length} characters`);
    return `filters=${encodeURIComponent(filter)}&page=50&sort=published_at:desc`;
  },
  // Free text over every word: the most common words of the catalog.
  () => `query=${encodeURIComponent(`nike air ${distinct++ % 10} shoe`)}&page=50&sort=updated_at:asc`,
].map((query) => () => `/v3/storefront/products?${query()}`);

async function probe(until: number): Promise<number[]> {
  const times: number[] = [];
  let i = 0;
  while (performance.now() < until) {
    const id = productIds[i++ % productIds.length]!;
    times.push((await get(`/v2/products/${id}`)).ms);
  }
  return times;
}

const attackTimes: number[] = [];
const aloneTimes: string[] = [];
for (const next of ATTACKS) {
  const times: number[] = [];
  for (let i = 0; i < 5; i += 1) {
    const attack = next();
    const { status, ms } = await get(attack);
    if (status !== 200) throw new Error(`attack answered ${status}: ${attack.slice(0, 200)}`);
    times.push(ms);
  }
  aloneTimes.push(times.sort((a, b) => a - b)[2]!.toFixed(1));
}

const quiet = await probe(performance.now() + (seconds * 1000) / 2);
let attacking = true;
const loops = Array.from({ length: attackers }, async (_, a) => {
  let n = 0;
  while (attacking) attackTimes.push((await get(ATTACKS[(a + n++) % ATTACKS.length]!())).ms);
});
const attacked = await probe(performance.now() + (seconds * 1000) / 2);
attacking = false;
await Promise.all(loops);

const p = (times: number[], q: number) => percentile([...times].sort((a, b) => a - b), q);
const line = (name: string, times: number[]) =>
  `${name.padEnd(28)} n=${String(times.length).padStart(6)}  p50 ${p(times, 50).toFixed(2)} ms  p99 ${p(times, 99).toFixed(2)} ms`;
process.stdout.write(
  [
    `db ${db}; ${attackers} attackers; ${listed.length} values in the IN lists`,
    line('getProduct, quiet', quiet),
    line('getProduct, under attack', attacked),
    `attack kinds alone, median ms: ${aloneTimes.join(', ')}`,
    line('attack requests', attackTimes),
    `p99 under attack / quiet: ${(p(attacked, 99) / p(quiet, 99)).toFixed(2)}x`,
  ].join('\n') + '\n',
);
agent.destroy();
server.close();
await stores.close();
