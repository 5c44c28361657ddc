// Fault: a Pro field leaks into a free-plan product. `ProductDetail.data` is a oneOf that the Pro
// shape satisfies, so the free plan is judged against CatalogProductFree itself (no extra property).
import { describe, expect, it } from 'vitest';
import { projections } from '@catalog/contract';
import { validateFreeProduct } from '../support/spec.ts';
import { freeProductBody, proProductBody } from './bodies.ts';

describe('a Pro field on the free plan', () => {
  it('is absent from a conforming free product', () => {
    expect(validateFreeProduct(freeProductBody())).toEqual([]);
  });

  for (const field of projections.CatalogProductFree.withheld) {
    it(`is reported when ${field} leaks`, () => {
      const leaked = freeProductBody() as { data: Record<string, unknown> };
      leaked.data[field] = (proProductBody().data as Record<string, unknown>)[field];
      expect(validateFreeProduct(leaked).join('\n')).toContain(field);
    });
  }

  it('is reported when the whole Pro product is served to a free key', () => {
    expect(validateFreeProduct(proProductBody()).length).toBeGreaterThan(0);
  });
});
