import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCatalogProduct, buildCatalogVariant } from '../support/fake-catalog-store.ts';
import { expectMatchesSpec } from '../support/spec-validator.ts';
import { FREE_KEY, startApp, type RunningApp } from './harness.ts';

describe('countGtins', () => {
  let app: RunningApp;

  beforeEach(async () => {
    app = await startApp();
    app.store.catalog.push(
      buildCatalogProduct({
        variants: [buildCatalogVariant({ gtin: '00195866123458' }), buildCatalogVariant({ gtin: '195866123458' }), buildCatalogVariant({ gtin: '00194272001234' })],
      }),
    );
  });
  afterEach(() => app.close());

  it('returns the count with no envelope', async () => {
    const response = await app.get('/gtin/count', { key: `Bearer ${FREE_KEY}` });
    expect(response.status).toBe(200);
    const body = await response.json();
    expectMatchesSpec('countGtins', 200, body);
    expect(body).toEqual({ count: 2 });
  });

  it('accepts a bare key as well as the documented bearer credential', async () => {
    const response = await app.get('/gtin/count', { key: FREE_KEY });
    expect(response.status).toBe(200);
  });
});
