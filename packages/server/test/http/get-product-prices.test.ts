import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCatalogProduct, buildPriceEvent } from '@catalog/contract/testing';
import { SqlitePriceLog } from '../../src/prices/sqlite/sqlite-price-log.ts';
import { expectMatchesSpec } from '../support/spec-validator.ts';
import { FREE_KEY, startApp, type RunningApp } from './harness.ts';

describe('getProductPrices', () => {
  let app: RunningApp;
  let log: SqlitePriceLog;
  const product = buildCatalogProduct({ slug: 'nike-dunk-low-panda' });
  const other = buildCatalogProduct({ slug: 'other-product' });
  const priced = (overrides: Parameters<typeof buildPriceEvent>[0]) => buildPriceEvent({ product_id: product.id, ...overrides });

  beforeEach(async () => {
    log = new SqlitePriceLog(':memory:');
    app = await startApp({ priceLog: log });
    app.store.catalog.push(product, other);
  });
  afterEach(async () => {
    await app.close();
    await log.close();
  });

  it('returns the latest event of each variant, source and market, and the stream position, by slug and by id', async () => {
    const stored = await log.append([
      priced({ variant_id: 'v1', source: 'marketplacea', market: 'US', price: 100 }),
      priced({ variant_id: 'v1', source: 'marketplaceb', market: 'US', price: 104 }),
      buildPriceEvent({ product_id: other.id, variant_id: 'v9', price: 1 }),
      priced({ variant_id: 'v1', source: 'marketplacea', market: 'US', price: 99.5 }),
      priced({ variant_id: 'v2', source: 'marketplacea', market: 'UK', currency: 'GBP', price: 80 }),
    ]);
    for (const idOrSlug of [product.slug, product.id]) {
      const response = await app.get(`/v2/products/${idOrSlug}/prices`);
      expect(response.status).toBe(200);
      const body = (await response.json()) as { data: { variant_id: string; price: number }[]; meta: { stream_position: number } };
      expectMatchesSpec('getProductPrices', 200, body);
      expect(body.data.map(({ variant_id, price }) => [variant_id, price])).toEqual([
        ['v1', 104],
        ['v1', 99.5],
        ['v2', 80],
      ]);
      expect(body.meta).toEqual({ stream_position: stored.at(-1)?.id });
    }
  });

  it('sends each event byte for byte as it was published, in the v2 envelope', async () => {
    const text = `{"source":"marketplaceb","product_id":"${product.id}","variant_id":"v1","size":"10.5","price":189.90,"currency":"EUR","market":"NL","sku":"Ünïcödé","timestamp":"2026-11-23T14:03:07.123456789Z"}`;
    const [stored] = await log.append([text]);
    const response = await app.get(`/v2/products/${product.slug}/prices`);
    expect(await response.text()).toBe(
      `{"status":"success","error":"","message":"","query":{},"data":[${text}],"meta":{"stream_position":${stored?.id}}}`,
    );
  });

  it('narrows by market (in any case) and by source', async () => {
    await log.append([
      priced({ variant_id: 'v1', source: 'marketplacea', market: 'US' }),
      priced({ variant_id: 'v1', source: 'marketplaceb', market: 'US' }),
      priced({ variant_id: 'v1', source: 'marketplacea', market: 'UK' }),
    ]);
    const read = async (query: string) =>
      ((await (await app.get(`/v2/products/${product.id}/prices?${query}`)).json()) as { data: { source: string; market: string }[] }).data.map(
        (event) => `${event.source}:${event.market}`,
      );
    expect(await read('market=us')).toEqual(['marketplacea:US', 'marketplaceb:US']);
    expect(await read('source=marketplacea')).toEqual(['marketplacea:US', 'marketplacea:UK']);
    expect(await read('market=UK&source=marketplacea')).toEqual(['marketplacea:UK']);
  });

  it('returns an empty list and position 0 before anything was published', async () => {
    const response = await app.get(`/v2/products/${product.slug}/prices`);
    expect(await response.json()).toMatchObject({ data: [], meta: { stream_position: 0 } });
  });

  it('returns 404 naming the id when no product matches', async () => {
    const response = await app.get('/v2/products/air-jordan-0/prices');
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: string; message: string };
    expectMatchesSpec('getProductPrices', 404, body);
    expect(body.message).toContain('air-jordan-0');
  });

  it('returns 403 when the key is on the free plan', async () => {
    const response = await app.get(`/v2/products/${product.slug}/prices`, { key: FREE_KEY });
    expect(response.status).toBe(403);
    expectMatchesSpec('getProductPrices', 403, await response.json());
  });

  it('returns 400 for a market that is not two letters or an unknown source', async () => {
    for (const query of ['market=USA', 'source=marketplacec']) {
      const response = await app.get(`/v2/products/${product.slug}/prices?${query}`);
      expect(response.status).toBe(400);
      expectMatchesSpec('getProductPrices', 400, await response.json());
    }
  });
});
