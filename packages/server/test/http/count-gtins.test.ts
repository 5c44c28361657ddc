import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCatalogProduct, buildCatalogVariant } from '@catalog/contract/testing';
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

  it('returns 401 for a bare key: the contract secures it with the bearer credential only', async () => {
    const response = await app.get('/gtin/count', { headers: { authorization: FREE_KEY } });
    expect(response.status).toBe(401);
    const body = (await response.json()) as { message: string };
    expectMatchesSpec('countGtins', 401, body);
    expect(body.message).toBe('Send your API key as a bearer credential: "Authorization: Bearer <key>".');
  });
});
