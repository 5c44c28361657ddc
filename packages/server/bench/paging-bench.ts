// Cursor paging: page 1 against a full page deep in the catalog (`filters=cursor > <cursor 20
// items from the end>`), alternated request by request so both see the same machine.
import { get, getJson } from './lib/http-client.ts';
import { progress } from './lib/processes.ts';
import { ratio, summarize, type LatencySummary } from './lib/stats.ts';

export interface PagingResult {
  total: number;
  deepCursor: string;
  firstPage: LatencySummary;
  deepPage: LatencySummary;
  /** Deep over first, at p50 and p99. */
  p50Ratio: number;
  p99Ratio: number;
}

interface StorefrontList {
  data: { cursor: number }[];
  meta: { total: number };
}

export async function runPagingBench(options: { apiUrl: string; key: string; samples: number; limit: number }): Promise<PagingResult> {
  const headers = { authorization: options.key };
  const base = `${options.apiUrl}/v3/storefront/products?limit=${options.limit}`;
  // The cursor `limit` items before the end makes the deep query return one full page.
  const tail = await getJson<StorefrontList>(`${options.apiUrl}/v3/storefront/products?limit=${options.limit + 1}&sort=cursor:desc`, headers);
  const anchor = tail.data.at(-1);
  if (anchor === undefined) throw new Error('paging: the catalog has no storefront products');
  const deepCursor = String(anchor.cursor);
  const deepUrl = `${base}&filters=${encodeURIComponent(`cursor > ${deepCursor}`)}`;
  const deep = await getJson<StorefrontList>(deepUrl, headers);
  progress(`paging: ${tail.meta.total} storefront products; deep page after cursor ${deepCursor} holds ${deep.data.length}`);
  const first: number[] = [];
  const deepSamples: number[] = [];
  for (let i = 0; i < options.samples; i++) {
    for (const [url, samples] of [[base, first], [deepUrl, deepSamples]] as const) {
      const start = performance.now();
      const response = await get(url, headers);
      samples.push(performance.now() - start);
      if (response.status !== 200) throw new Error(`paging: ${url} answered ${response.status}`);
    }
  }
  const firstPage = summarize(first);
  const deepPage = summarize(deepSamples);
  return { total: tail.meta.total, deepCursor, firstPage, deepPage, p50Ratio: ratio(deepPage.p50, firstPage.p50), p99Ratio: ratio(deepPage.p99, firstPage.p99) };
}
