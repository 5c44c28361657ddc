// The distinct workloads the `distinct` section and bench/listing-bench.ts share: no two requests
// of a run alike, so per-URL caches do not carry the figure, and one autocannon run over them.
import autocannon from 'autocannon';

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  /** Requests sent, and connection errors (timeouts included): a load that mostly failed is not a figure. */
  sent: number;
  errors: number;
  /** How many answers of each status other than 2xx, so a non-2xx count can be told apart (a 503 from a 400). */
  non2xxStatuses: Record<string, number>;
}

/** autocannon over `paths` in turn across all connections (each request the next path). */
export async function load(url: string, paths: readonly string[], headers: Record<string, string>, seconds: number, connections: number): Promise<LoadResult> {
  let next = 0;
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    headers,
    requests: [{ setupRequest: (request) => ({ ...request, path: paths[next++ % paths.length]! }) }],
  });
  const non2xxStatuses = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {})
      .filter(([status, stats]) => !status.startsWith('2') && (stats.count ?? 0) > 0)
      .map(([status, stats]) => [status, stats.count ?? 0]),
  );
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, sent: result.requests.sent, errors: result.errors, non2xxStatuses };
}

/** Storefront filters `price_min >= X AND price_max <= Y AND available = true`, X below Y, so pages are full rather than empty. */
export function distinctFilters(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `price_min >= ${20 + (i % 100)} AND price_max <= ${150 + Math.floor(i / 100) * 5} AND available = true`);
}

/** 4- to 8-digit fragments cut at random (a seeded PRNG) from the GTINs of `sample`. */
export function gtinFragments(sample: readonly { gtin: string }[], count: number): string[] {
  let seed = 7;
  const random = (n: number): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
    return seed % n;
  };
  return Array.from({ length: count }, () => {
    const gtin = sample[random(sample.length)]!.gtin;
    const length = 4 + random(5);
    const start = random(Math.max(1, gtin.length - length + 1));
    return gtin.slice(start, start + length);
  });
}
