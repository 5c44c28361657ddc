// allStorefrontProducts against a fake storefront that enforces the contract's paging rules:
// page ≤ 50, total_pages = min(50, ceil(total / limit)), continuation by `cursor > N`.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CatalogApiError, createCatalogClient } from '../src/index.ts';
import type { StorefrontProduct } from '../src/index.ts';
import { FIRST_STOREFRONT_CURSOR, buildStorefrontProduct } from '@catalog/contract/testing';

const CATALOG_SIZE = 2_600;
// Two shops taking turns; cursors 512 apart, in catalog order.
const catalog: StorefrontProduct[] = Array.from({ length: CATALOG_SIZE }, (_, i) =>
  buildStorefrontProduct({ shop_name: i % 2 === 0 ? 'Sneaker Hub' : 'Kicks Corner', cursor: FIRST_STOREFRONT_CURSOR + i * 512 }),
);

interface SeenRequest {
  page: number;
  limit: number;
  filters: string | null;
  authorization: string | undefined;
}
let seen: SeenRequest[] = [];
let failOnRequest: number | undefined;
let ignoreCursor = false;
let server: Server;
let baseUrl: string;

function errorBody(status: number, error: string, message: string) {
  return { status, body: { status: 'error', error, message, query: {}, data: null, meta: null } };
}

/** Understands exactly the filters the walk sends: `cursor > N`, `shop_name = "X"` and `(shop_name = "X") AND cursor > N`. */
function matcher(filters: string | null): ((p: StorefrontProduct) => boolean) | undefined {
  if (filters === null) return () => true;
  const match = /^(?:\(shop_name = "([^"]+)"\)(?: AND )?|shop_name = "([^"]+)")?(?:cursor > ([0-9]+))?$/.exec(filters);
  if (match === null) return undefined;
  const shop = match[1] ?? match[2];
  const after = match[3] === undefined ? undefined : Number(match[3]);
  return (p) => (shop === undefined || p.shop_name === shop) && (after === undefined || p.cursor > after);
}

function answer(url: URL, authorization: string | undefined): { status: number; body: unknown } {
  const page = Number(url.searchParams.get('page') ?? '1');
  const limit = Number(url.searchParams.get('limit') ?? '20');
  const filters = url.searchParams.get('filters');
  seen.push({ page, limit, filters, authorization });
  if (failOnRequest !== undefined && seen.length === failOnRequest) return errorBody(503, 'service_unavailable', 'The catalog store is down.');
  if (url.searchParams.get('sort') !== 'cursor:asc') return errorBody(400, 'invalid_request', 'expected sort=cursor:asc');
  if (page > 50) return errorBody(400, 'page_out_of_range', `page ${page} is beyond the 50-page cap`);
  if (limit > 100) return errorBody(400, 'invalid_request', 'limit must be <= 100');
  const accepts = matcher(ignoreCursor ? (filters?.replace(/^cursor > [0-9]+$/, '') || null) : filters);
  if (accepts === undefined) return errorBody(400, 'invalid_filter', `cannot parse ${filters}`);
  const matching = catalog.filter(accepts);
  const data = matching.slice((page - 1) * limit, page * limit);
  return { status: 200, body: { status: 'success', data, meta: { total: matching.length, total_pages: Math.min(50, Math.ceil(matching.length / limit)) } } };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const { status, body } = answer(new URL(req.url ?? '/', 'http://localhost'), req.headers.authorization);
    res.writeHead(status, { 'Content-Type': 'application/json', 'X-Request-Id': `req-${seen.length}` });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  seen = [];
  failOnRequest = undefined;
  ignoreCursor = false;
});

async function collect(iterable: AsyncIterable<StorefrontProduct>): Promise<StorefrontProduct[]> {
  const out: StorefrontProduct[] = [];
  for await (const product of iterable) out.push(product);
  return out;
}

describe('allStorefrontProducts', () => {
  it('walks 2,600 products past the 50-page cap: every product exactly once, in cursor order', async () => {
    const client = createCatalogClient({ baseUrl, sseUrl: baseUrl, apiKey: 'walk-key' });
    const products = await collect(client.allStorefrontProducts({ limit: 20 }));

    expect(products.map((p) => p.id)).toEqual(catalog.map((p) => p.id));
    expect(Math.max(...seen.map((r) => r.page))).toBe(50);
    const legs = seen.filter((r) => r.page === 1).map((r) => r.filters);
    expect(legs).toEqual([null, `cursor > ${catalog[999]?.cursor}`, `cursor > ${catalog[1999]?.cursor}`]);
    expect(seen.every((r) => r.authorization === 'walk-key')).toBe(true);
  });

  it('uses pages of 100 by default', async () => {
    const client = createCatalogClient({ baseUrl, sseUrl: baseUrl, apiKey: 'k' });
    const products = await collect(client.allStorefrontProducts());
    expect(products).toHaveLength(CATALOG_SIZE);
    expect(seen).toHaveLength(26);
    expect(seen.every((r) => r.limit === 100)).toBe(true);
  });

  it('combines the caller filter with the cursor as (filter) AND cursor > N', async () => {
    const client = createCatalogClient({ baseUrl, sseUrl: baseUrl, apiKey: 'k' });
    const products = await collect(client.allStorefrontProducts({ filters: 'shop_name = "Sneaker Hub"', limit: 10 }));

    const expected = catalog.filter((p) => p.shop_name === 'Sneaker Hub');
    expect(products.map((p) => p.id)).toEqual(expected.map((p) => p.id));
    expect(seen.filter((r) => r.page === 1).map((r) => r.filters)).toEqual([
      'shop_name = "Sneaker Hub"',
      `(shop_name = "Sneaker Hub") AND cursor > ${expected[499]?.cursor}`,
      `(shop_name = "Sneaker Hub") AND cursor > ${expected[999]?.cursor}`,
    ]);
  });

  it('treats an empty caller filter as no filter', async () => {
    const client = createCatalogClient({ baseUrl, sseUrl: baseUrl, apiKey: 'k' });
    const products = await collect(client.allStorefrontProducts({ filters: ' ', limit: 100 }));
    expect(products).toHaveLength(CATALOG_SIZE);
    expect(seen.every((r) => r.filters === null)).toBe(true);
  });

  it('ends after one request on an empty result', async () => {
    const client = createCatalogClient({ baseUrl, sseUrl: baseUrl, apiKey: 'k' });
    const products = await collect(client.allStorefrontProducts({ filters: 'shop_name = "Nobody"' }));
    expect(products).toEqual([]);
    expect(seen).toHaveLength(1);
  });

  it('never repeats a product and stops when the server ignores the cursor filter', async () => {
    ignoreCursor = true;
    const client = createCatalogClient({ baseUrl, sseUrl: baseUrl, apiKey: 'k' });
    const products: StorefrontProduct[] = [];
    const error = await (async () => {
      for await (const p of client.allStorefrontProducts({ limit: 10 })) products.push(p);
    })().catch((e: unknown) => e);

    expect(products.map((p) => p.id)).toEqual(catalog.slice(0, 500).map((p) => p.id));
    expect(String(error)).toMatch(/did not advance past cursor/);
  });

  it('stops with CatalogApiError when a page fails, after yielding the pages before it', async () => {
    failOnRequest = 3;
    const client = createCatalogClient({ baseUrl, sseUrl: baseUrl, apiKey: 'k' });
    const products: StorefrontProduct[] = [];
    const error = await (async () => {
      for await (const p of client.allStorefrontProducts({ limit: 100 })) products.push(p);
    })().catch((e: unknown) => e);

    expect(products).toHaveLength(200);
    expect(error).toBeInstanceOf(CatalogApiError);
    expect(error).toMatchObject({ code: 'service_unavailable', status: 503, requestId: 'req-3' });
  });
});
