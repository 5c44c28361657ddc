import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCatalogProduct, buildCatalogVariant } from '@catalog/contract/testing';
import { expectMatchesSpec } from '../support/spec-validator.ts';
import { startApp, type RunningApp } from './harness.ts';

describe('searchVariants', () => {
  let app: RunningApp;

  beforeEach(async () => {
    app = await startApp();
    app.store.catalog.push(
      buildCatalogProduct({
        variants: [
          buildCatalogVariant({ sku: 'DD1391-100', gtin: '00195866123458' }),
          buildCatalogVariant({ sku: 'DD1391-100', gtin: '00195866123465' }),
          buildCatalogVariant({ sku: 'CW2288-111', gtin: '00194272001234' }),
        ],
      }),
    );
  });
  afterEach(() => app.close());

  it('finds variants by exact sku', async () => {
    const response = await app.get('/v2/variants?sku=DD1391-100');
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: { sku: string }[]; meta: unknown };
    expectMatchesSpec('searchVariants', 200, body);
    expect(body.data.map((v) => v.sku)).toEqual(['DD1391-100', 'DD1391-100']);
    expect(body.meta).toEqual({ total: 2, total_pages: 1 });
  });

  it('finds a variant by its gtin without leading zeros', async () => {
    const response = await app.get('/v2/variants?gtin=195866123458');
    const body = (await response.json()) as { data: { gtin: string }[] };
    expectMatchesSpec('searchVariants', 200, body);
    expect(body.data.map((v) => v.gtin)).toEqual(['00195866123458']);
    expect(app.store.variantQueries.at(-1)).toEqual({ gtin: '195866123458', offset: 0, limit: 20 });
  });

  it('pages without the storefront cap', async () => {
    const response = await app.get('/v2/variants?page=3&limit=1');
    const body = (await response.json()) as { data: unknown[]; meta: unknown };
    expectMatchesSpec('searchVariants', 200, body);
    expect(body.data).toHaveLength(1);
    expect(body.meta).toEqual({ total: 3, total_pages: 3 });
    expect((await app.get('/v2/variants?page=51')).status).toBe(200);
  });

  it.each(['abc', '123', '123456789012345', '12a4'])('returns 400 for gtin %s', async (gtin) => {
    const response = await app.get(`/v2/variants?gtin=${gtin}`);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: string; message: string; query: unknown };
    expectMatchesSpec('searchVariants', 400, body);
    expect(body.error).toBe('invalid_request');
    expect(body.message).toContain('"gtin"');
    expect(body.query).toEqual({ gtin });
  });

  it('explains the gtin rule in words when the pattern fails', async () => {
    const body = (await (await app.get('/v2/variants?gtin=12-4')).json()) as { message: string };
    expect(body.message).toBe(
      'Query parameter "gtin" must match the pattern ^[0-9]{4,14}$ (Digits to find inside stored GTINs; at least 4, at most 14), got "12-4".',
    );
  });

  it('returns 400 for limit above 100', async () => {
    const response = await app.get('/v2/variants?limit=101');
    expect(response.status).toBe(400);
    expectMatchesSpec('searchVariants', 400, await response.json());
  });
});
