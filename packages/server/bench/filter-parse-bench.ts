// The filter language's parser alone, in process: a stream `Filter` of about 4 KiB
// (`product_id IN [...]`, issue 26's subscriber filters), the storefront's hostile filters
// (bench/hostile-filter-bench.ts, without HTTP) and, as the same-run reference, JSON.parse of a
// JSON array of the same ids. Reports the fastest of nine samples in microseconds per parse, and
// its ratio to the reference; asserts nothing.
//
//   node bench/filter-parse-bench.ts [--rounds 2000]
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { PRICE_EVENT_FILTER } from '../src/catalog/filter/ast.ts';
import { parseFilter } from '../src/catalog/filter/parse-filter.ts';
import { parseEventFilter } from '../src/stream/event-filter.ts';

const { values } = parseArgs({ options: { rounds: { type: 'string' } } });
const rounds = Number(values.rounds ?? 2000);

const ids = Array.from({ length: 100 }, () => randomUUID());
const streamFilter = `product_id IN [${ids.map((id) => `"${id}"`).join(', ')}]`;
const reference = JSON.stringify(ids);
const tags = Array.from({ length: 150 }, (_, i) => `"t${i}"`).join(',');
const leaves = Array.from({ length: 92 }, (_, i) => `price_min >= ${(i * 7) % 500}`);
const storefront: Record<string, string> = {
  'tags IN [150 strings]': `tags IN [${tags}]`,
  'tags = … OR (90 leaves)': Array.from({ length: 90 }, (_, i) => `tags = "t${i}"`).join(' OR '),
  'NOT (46 OR) OR (46 AND)': `NOT (${leaves.slice(0, 46).join(' OR ')}) OR (${leaves.slice(46).join(' AND ')})`,
};

/** The fastest of 9 samples of `rounds / 9` runs each: the least disturbed by a shared machine. */
function microseconds(run: () => unknown): number {
  const per = Math.max(1, Math.floor(rounds / 9));
  for (let i = 0; i < per; i += 1) run();
  let best = Infinity;
  for (let sample = 0; sample < 9; sample += 1) {
    const started = performance.now();
    for (let i = 0; i < per; i += 1) run();
    best = Math.min(best, ((performance.now() - started) * 1000) / per);
  }
  return best;
}

const base = microseconds(() => JSON.parse(reference));
const rows: [string, number, number][] = [[`JSON.parse of the ids (reference)`, reference.length, base]];
rows.push([`Filter: product_id IN [100 ids], parse`, streamFilter.length, microseconds(() => parseFilter(streamFilter, PRICE_EVENT_FILTER))]);
rows.push([`Filter: product_id IN [100 ids], parse + compile`, streamFilter.length, microseconds(() => parseEventFilter(streamFilter))]);
for (const [name, text] of Object.entries(storefront)) rows.push([`filters: ${name}`, text.length, microseconds(() => parseFilter(text))]);
for (const [name, length, us] of rows) {
  process.stdout.write(`${name.padEnd(52)} ${String(length).padStart(5)} chars  ${us.toFixed(1).padStart(8)} µs  ${(us / base).toFixed(1).padStart(6)}× reference\n`);
}
