import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { operations, type ApiOperationId } from '@catalog/contract';
import { operationsOf } from '../../src/http/operation-router.ts';
import { buildCatalogProduct } from '@catalog/contract/testing';
import { expectMatchesSpec } from '../support/spec-validator.ts';
import { FREE_KEY, PRO_KEY, startApp, type RunningApp } from './harness.ts';

const product = buildCatalogProduct({ slug: 'nike-dunk-low' });
const PATHS: Record<ApiOperationId, string> = {
  listStorefrontProducts: '/v3/storefront/products',
  searchVariants: '/v2/variants',
  listTopBrands: '/v2/brands',
  getProduct: `/v2/products/${product.slug}`,
  getProductPrices: `/v2/products/${product.slug}/prices`,
  countGtins: '/gtin/count',
};

describe.each(operationsOf('api'))('%s', (operationId) => {
  let app: RunningApp;
  const path = PATHS[operationId];
  const plans: readonly string[] = operations[operationId].plans;

  beforeEach(async () => {
    app = await startApp();
    app.store.catalog.push(product);
  });
  afterEach(() => app.close());

  it('returns 401 with a Bearer challenge when no key is sent', async () => {
    const response = await app.get(path, { key: null });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="catalog"');
    const body = (await response.json()) as { error: string; message: string };
    expectMatchesSpec(operationId, 401, body);
    expect(body.error).toBe('unauthorized');
    expect(body.message).toContain('Authorization');
  });

  it.each(['ck_unknown', 'Bearer ck_unknown', 'Bearer', 'Basic dXNlcjpwYXNz'])('returns 401 for the credential "%s"', async (credential) => {
    const response = await app.get(path, { key: credential });
    expect(response.status).toBe(401);
    expectMatchesSpec(operationId, 401, await response.json());
  });

  it('answers a pro key', async () => {
    const response = await app.get(path, { key: `Bearer ${PRO_KEY}` });
    expect(response.status).toBe(200);
    expectMatchesSpec(operationId, 200, await response.json());
  });

  if (plans.includes('free')) {
    it('answers a free key', async () => {
      const response = await app.get(path, { key: FREE_KEY });
      expect(response.status).toBe(200);
      expectMatchesSpec(operationId, 200, await response.json());
    });
  } else {
    it('returns 403 naming the plan needed when the key is on the free plan', async () => {
      const response = await app.get(path, { key: FREE_KEY });
      expect(response.status).toBe(403);
      const body = (await response.json()) as { error: string; message: string };
      expectMatchesSpec(operationId, 403, body);
      expect(body).toMatchObject({ error: 'forbidden', message: 'This operation needs the pro plan; your key is on the free plan.' });
    });
  }
});

describe('API key look-up', () => {
  let app: RunningApp;
  beforeEach(async () => {
    app = await startApp();
  });
  afterEach(() => app.close());

  it('accepts a key created after a failed attempt with it, at once', async () => {
    expect((await app.get('/gtin/count', { key: 'ck_created_1' })).status).toBe(401);
    const key = await app.keys.createKey('free');
    expect(key).toBe('ck_created_1');
    expect((await app.get('/gtin/count', { key })).status).toBe(200);
  });

  it('caches a known key instead of looking it up on every request', async () => {
    for (let i = 0; i < 5; i++) expect((await app.get('/gtin/count', { key: PRO_KEY })).status).toBe(200);
    expect(app.keys.lookups).toBe(1);
  });
});
