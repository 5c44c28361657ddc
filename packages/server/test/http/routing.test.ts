// One router serves every form of an operation path: exact, case variants, a trailing slash, percent-encoding.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCatalogProduct } from '@catalog/contract/testing';
import { expectErrorBody, expectMatchesSpec } from '../support/spec-validator.ts';
import { startApp, type RunningApp } from './harness.ts';

describe('routing', () => {
  let app: RunningApp;
  const product = buildCatalogProduct({ slug: 'nike-dunk-low' });

  beforeEach(async () => {
    app = await startApp();
    app.store.catalog.push(product);
    app.store.brands = [{ brand: 'Nike', count: 3 }];
  });
  afterEach(() => app.close());

  it.each(['/v2/brands', '/v2/brands/', '/V2/Brands'])('serves %s like /v2/brands', async (path) => {
    const response = await app.get(path);
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: unknown };
    expectMatchesSpec('listTopBrands', 200, body);
    expect(body.data).toEqual([{ brand: 'Nike', count: 3 }]);
  });

  it.each(['/v2/products/nike-dunk-low', '/v2/products/nike%2Ddunk%2Dlow', '/v2/products/nike-dunk-low/'])('finds the product at %s', async (path) => {
    const response = await app.get(path);
    expect(response.status).toBe(200);
    expectMatchesSpec('getProduct', 200, await response.json());
  });

  it.each(['/v2/products/', '/v2/products/a/b', '/v2', '/'])('returns 404 for %s', async (path) => {
    const response = await app.get(path);
    expect(response.status).toBe(404);
    expectErrorBody(await response.json());
  });

  it('takes an encoded slash inside the id as part of the slug (404 when no slug matches)', async () => {
    const response = await app.get('/v2/products/a%2Fb');
    expect(response.status).toBe(404);
    expectMatchesSpec('getProduct', 404, await response.json());
  });
});
