import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectMatchesSpec } from '../support/spec-validator.ts';
import { startApp, type RunningApp } from './harness.ts';

describe('listTopBrands', () => {
  let app: RunningApp;

  beforeEach(async () => {
    app = await startApp();
    app.store.brands = Array.from({ length: 60 }, (_, i) => ({ brand: `Brand ${String(i).padStart(2, '0')}`, count: 100 - i }));
  });
  afterEach(() => app.close());

  it('returns at most 50 brands in the v2 envelope with null meta', async () => {
    const response = await app.get('/v2/brands');
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: { brand: string; count: number }[]; meta: unknown };
    expectMatchesSpec('listTopBrands', 200, body);
    expect(body.data).toHaveLength(50);
    expect(body.data[0]).toEqual({ brand: 'Brand 00', count: 100 });
    expect(body.meta).toBeNull();
  });
});
