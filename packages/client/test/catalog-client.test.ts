import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { operations } from '@catalog/contract';
import { createClient } from '@catalog/contract/sdk/client';
import type { CountGtinsResponse } from '@catalog/contract/types';
import { operationMethodsFor } from '../src/catalog-client.ts';
import { CatalogApiError, createCatalogClient, isCatalogProductPro } from '../src/index.ts';
import type { CatalogClient } from '../src/index.ts';
import { startPrism } from './support/prism.ts';
import type { PrismMock } from './support/prism.ts';

let prism: PrismMock;
const seen: Request[] = [];

/** A client whose requests carry Prism's `Prefer` header (to pick an error response) and are recorded. */
function clientFor(prefer?: string): CatalogClient {
  return createCatalogClient({
    baseUrl: prism.baseUrl,
    sseUrl: prism.baseUrl,
    apiKey: 'test-key',
    fetch: (input, init) => {
      const request = new Request(input, init);
      if (prefer !== undefined) request.headers.set('Prefer', prefer);
      seen.push(request.clone());
      return fetch(request);
    },
  });
}

function lastRequest(): Request {
  const request = seen.at(-1);
  if (request === undefined) throw new Error('no request was sent');
  return request;
}

beforeAll(async () => {
  prism = await startPrism();
});

afterAll(async () => {
  await prism?.stop();
});

describe('getProduct', () => {
  it('returns the product detail envelope with the key sent bare', async () => {
    const detail = await clientFor().getProduct('nike-dunk-low-retro-white-black-panda');
    expect(detail.status).toBe('success');
    expect(detail.data.slug).toBe('nike-dunk-low-retro-white-black-panda');
    expect(detail.data.variants.length).toBeGreaterThan(0);
    expect(lastRequest().headers.get('Authorization')).toBe('test-key');
    expect(new URL(lastRequest().url).pathname).toBe('/v2/products/nike-dunk-low-retro-white-black-panda');
  });

  it('narrows the free/Pro union with isCatalogProductPro', async () => {
    // The mock answers with the first shape of the union, the Pro one.
    const { data } = await clientFor().getProduct('nike-dunk-low-retro-white-black-panda');
    expect(isCatalogProductPro(data)).toBe(true);
    if (!isCatalogProductPro(data)) return;
    expect(data.weekly_orders).toEqual(expect.any(Number));
    expect(data.retail_prices[0]).toEqual({ sku: expect.any(String), price: expect.any(Number), currency: expect.any(String), source: expect.any(String) });
    const { retail_prices: _r, release_dates: _d, weekly_orders: _w, ...free } = data;
    expect(isCatalogProductPro(free)).toBe(false);
  });

  it('throws CatalogApiError with code, status, message and request id on 404', async () => {
    const error = await clientFor('code=404').getProduct('air-jordan-0').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CatalogApiError);
    expect(error).toMatchObject({ code: 'not_found', status: 404, requestId: expect.any(String) });
    expect((error as CatalogApiError).message).toMatch(/No product/);
  });

  it('throws CatalogApiError unauthorized on 401', async () => {
    const error = await clientFor('code=401').getProduct('x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CatalogApiError);
    expect(error).toMatchObject({ code: 'unauthorized', status: 401 });
  });
});

describe('searchVariants', () => {
  it('sends sku, gtin, page and limit as query parameters and returns typed variants', async () => {
    const result = await clientFor().searchVariants({ gtin: '195866123458', page: 2, limit: 10 });
    expect(result.meta.total).toBeGreaterThanOrEqual(0);
    expect(result.data[0]?.gtin).toMatch(/^[0-9]+$/);
    const url = new URL(lastRequest().url);
    expect(url.pathname).toBe('/v2/variants');
    expect(Object.fromEntries(url.searchParams)).toEqual({ gtin: '195866123458', page: '2', limit: '10' });
  });

  it('throws CatalogApiError forbidden on 403', async () => {
    const error = await clientFor('code=403').searchVariants({ sku: 'DD1391-100' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CatalogApiError);
    expect(error).toMatchObject({ code: 'forbidden', status: 403 });
  });

  it('surfaces the mock\'s 400 for an invalid gtin as invalid_request', async () => {
    const error = await clientFor().searchVariants({ gtin: '12' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CatalogApiError);
    expect(error).toMatchObject({ status: 400, code: 'invalid_request' });
  });
});

describe('listStorefrontProducts', () => {
  it('returns a page with meta and sends filters verbatim', async () => {
    const page = await clientFor().listStorefrontProducts({ filters: 'shop_name = "Sneaker Hub"', limit: 50 });
    expect(page.status).toBe('success');
    expect(page.meta.total_pages).toBeLessThanOrEqual(50);
    expect(typeof page.data[0]?.cursor).toBe('number');
    const url = new URL(lastRequest().url);
    expect(url.searchParams.get('filters')).toBe('shop_name = "Sneaker Hub"');
    expect(url.searchParams.get('limit')).toBe('50');
  });
});

describe('listTopBrands', () => {
  it('returns brand counts', async () => {
    const brands = await clientFor().listTopBrands();
    expect(brands.data[0]).toEqual({ brand: expect.any(String), count: expect.any(Number) });
    expect(brands.meta).toBeNull();
  });
});

describe('countGtins', () => {
  it('sends the key as a bearer credential and returns the count', async () => {
    const { count } = await clientFor().countGtins();
    expect(count).toBeGreaterThanOrEqual(0);
    expect(lastRequest().headers.get('Authorization')).toBe('Bearer test-key');
  });

  it('rethrows network failures unwrapped', async () => {
    const client = createCatalogClient({ baseUrl: 'http://127.0.0.1:1', sseUrl: 'http://127.0.0.1:1', apiKey: 'k' });
    const error = await client.countGtins().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect(error).not.toBeInstanceOf(CatalogApiError);
  });
});

describe('the client surface', () => {
  it('has a method for every operation of the contract', () => {
    const client = clientFor() as unknown as Record<string, unknown>;
    const methodOf = (operationId: string, listener: string): string => (listener === 'stream' ? 'priceStream' : operationId);
    const missing = Object.entries(operations)
      .map(([operationId, operation]) => methodOf(operationId, operation.listener))
      .filter((method) => typeof client[method] !== 'function');
    expect(
      missing,
      'operations of specs/ without a client method: run pnpm generate (OperationMethods in packages/client/src/catalog-client.ts derives one per SDK call), ' +
        'or give a stream operation its method there',
    ).toEqual([]);
  });

  it('answers every JSON operation through the method derived from its SDK call, path parameters included', async () => {
    const methods = operationMethodsFor(createClient({ baseUrl: prism.baseUrl, auth: 'test-key' }));
    const detail = await methods.getProduct({ path: { id: 'nike-dunk-low-retro-white-black-panda' } });
    expect(detail.data.slug).toBe('nike-dunk-low-retro-white-black-panda');
    const brands = await methods.listTopBrands();
    expect(brands.data.length).toBeGreaterThan(0);
    expectTypeOf(methods.countGtins).returns.resolves.toEqualTypeOf<CountGtinsResponse>();
  });

  it('rejects a refused derived call with CatalogApiError', async () => {
    const methods = operationMethodsFor(createClient({ baseUrl: prism.baseUrl, auth: 'test-key', headers: { Prefer: 'code=403' } }));
    const error = await methods.searchVariants({ query: { sku: 'x' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CatalogApiError);
    expect(error).toMatchObject({ code: 'forbidden', status: 403 });
  });
});
