// Fault: a response field is renamed (the server sends `total` where the spec says `count`, …).
// validateResponse, which judges every real-server response, must report it for every operation.
import { describe, expect, it } from 'vitest';
import { validateResponse } from '../support/spec.ts';
import { JSON_HEADERS, okBodies } from './bodies.ts';

type Obj = Record<string, unknown>;

function rename(target: Obj, from: string, to: string): void {
  target[to] = target[from];
  delete target[from];
}

const RENAMES: Record<string, (body: Obj) => void> = {
  listStorefrontProducts: (b) => rename((b['data'] as Obj[])[0] as Obj, 'price_min', 'min_price'),
  searchVariants: (b) => rename((b['data'] as Obj[])[0] as Obj, 'gtin', 'ean'),
  listTopBrands: (b) => rename((b['data'] as Obj[])[0] as Obj, 'count', 'products'),
  getProduct: (b) => rename(b['data'] as Obj, 'slug', 'handle'),
  countGtins: (b) => rename(b, 'count', 'total'),
};

describe('a renamed response field', () => {
  for (const [operationId, body] of Object.entries(okBodies())) {
    it(`is reported on ${operationId}, whose unbroken body conforms`, () => {
      expect(validateResponse(operationId, 200, JSON_HEADERS, body)).toEqual([]);
      const broken = structuredClone(body);
      RENAMES[operationId]?.(broken);
      expect(validateResponse(operationId, 200, JSON_HEADERS, broken).length).toBeGreaterThan(0);
    });
  }

  it('is reported in an error body (message renamed to detail)', () => {
    const body = { status: 'error', error: 'not_found', detail: 'No product.', query: {}, data: null, meta: null };
    expect(validateResponse('getProduct', 404, JSON_HEADERS, body).join('\n')).toMatch(/message|detail/);
  });
});
