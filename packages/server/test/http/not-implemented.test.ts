import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { expectMatchesSpec } from '../support/spec-validator.ts';
import { startApp, type RunningApp } from './harness.ts';

// listTopBrands as `pnpm generate` would have written it before its body existed.
vi.mock('../../src/http/handlers/list-top-brands.ts', async () => {
  const { notImplemented } = await import('../../src/http/handlers/not-implemented.ts');
  return { listTopBrands: () => notImplemented('listTopBrands') };
});

describe('a generated handler stub', () => {
  let app: RunningApp;
  beforeEach(async () => {
    app = await startApp();
  });
  afterEach(() => app.close());

  it('answers the documented 503 naming the operation, with Retry-After', async () => {
    const response = await app.get('/v2/brands');
    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    const body: unknown = await response.json();
    expectMatchesSpec('listTopBrands', 503, body);
    expect(body).toEqual({ status: 'error', error: 'service_unavailable', message: 'listTopBrands is not implemented yet.', query: {}, data: null, meta: null });
  });
});
