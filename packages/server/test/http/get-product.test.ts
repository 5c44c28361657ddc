import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCatalogProduct } from '@catalog/contract/testing';
import { expectMatchesSpec } from '../support/spec-validator.ts';
import { FREE_KEY, PRO_KEY, startApp, type RunningApp } from './harness.ts';

describe('getProduct', () => {
  let app: RunningApp;
  const product = buildCatalogProduct({ slug: 'air-jordan-1-retro-high-og-chicago' });

  beforeEach(async () => {
    app = await startApp();
    app.store.catalog.push(product);
  });
  afterEach(() => app.close());

  it('returns the full product to a pro key, by slug and by id', async () => {
    for (const idOrSlug of [product.slug, product.id]) {
      const response = await app.get(`/v2/products/${idOrSlug}`, { key: PRO_KEY });
      expect(response.status).toBe(200);
      const body = (await response.json()) as { data: Record<string, unknown> };
      expectMatchesSpec('getProduct', 200, body);
      expect(body.data).toEqual(product);
    }
  });

  it('withholds retail_prices, release_dates and weekly_orders from a free key', async () => {
    const response = await app.get(`/v2/products/${product.slug}`, { key: FREE_KEY });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: Record<string, unknown> };
    expectMatchesSpec('getProduct', 200, body);
    expect(body.data).not.toHaveProperty('retail_prices');
    expect(body.data).not.toHaveProperty('release_dates');
    expect(body.data).not.toHaveProperty('weekly_orders');
    expect(body.data['title']).toBe(product.title);
  });

  it('accepts the key bare and as a bearer credential', async () => {
    expect((await app.get(`/v2/products/${product.slug}`, { key: PRO_KEY })).status).toBe(200);
    expect((await app.get(`/v2/products/${product.slug}`, { key: `Bearer ${PRO_KEY}` })).status).toBe(200);
  });

  it('returns the v2 envelope with a JSON content type and exact length', async () => {
    const response = await app.get(`/v2/products/${product.slug}`);
    const text = await response.text();
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(text));
    expect(JSON.parse(text)).toMatchObject({ status: 'success', error: '', message: '', query: {}, meta: null });
  });

  it('returns 404 naming the id when no product matches', async () => {
    const response = await app.get('/v2/products/air-jordan-0');
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: string; message: string };
    expectMatchesSpec('getProduct', 404, body);
    expect(body.error).toBe('not_found');
    expect(body.message).toContain('air-jordan-0');
  });

  it('returns a product whose slug has spaces, /, +, ( and non-ASCII letters, percent-encoded as the contract says', async () => {
    const odd = buildCatalogProduct({ slug: 'Stüssy (x) 8+ / 東京 1.0 ~ 👟' });
    app.store.catalog.push(odd);
    const response = await app.get(`/v2/products/${encodeURIComponent(odd.slug)}`, { key: PRO_KEY });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: Record<string, unknown> };
    expectMatchesSpec('getProduct', 200, body);
    expect(body.data).toEqual(odd);
  });

  it('returns 400 when the id is longer than 1000 characters, the longest slug', async () => {
    const response = await app.get(`/v2/products/${'a'.repeat(1001)}`);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { message: string };
    expectMatchesSpec('getProduct', 400, body);
    expect(body.message).toBe('Path parameter "id" must be at most 1000 characters long.');
  });

  it('returns 400 for a query parameter the operation does not take', async () => {
    const response = await app.get(`/v2/products/${product.slug}?fields=all`);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { message: string; query: unknown };
    expectMatchesSpec('getProduct', 400, body);
    expect(body.message).toContain('"fields"');
    expect(body.query).toEqual({ fields: 'all' });
  });

  it('answers HEAD with the headers of GET and no body', async () => {
    const response = await app.get(`/v2/products/${product.slug}`, { method: 'HEAD' });
    expect(response.status).toBe(200);
    expect(Number(response.headers.get('content-length'))).toBeGreaterThan(0);
    expect(await response.text()).toBe('');
  });
});
