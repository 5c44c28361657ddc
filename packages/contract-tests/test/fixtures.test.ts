// The data the real-server tests import must itself be what the API documents, or a failure there
// would blame the server for the fixtures. Runs without a server.
import { describe, expect, it } from 'vitest';
import { CATALOG, STOREFRONT } from './support/fixtures.ts';
import { BASIC_EVENTS, RESET_EVENT_COUNT, resetEvents } from './support/price-events.ts';
import { ResponseValidator } from './support/spec.ts';

const spec = new ResponseValidator();

describe('fixture builders', () => {
  it('build catalog products that are valid CatalogProductPro', () => {
    for (const product of Object.values(CATALOG)) expect(spec.validateComponent('CatalogProductPro', product), product.slug).toEqual([]);
  });

  it('build storefront products that are valid StorefrontProduct once the server adds a cursor', () => {
    for (const product of STOREFRONT) expect(spec.validateComponent('StorefrontProduct', { ...product, cursor: 17000000000001536 }), product.id).toEqual([]);
    for (const product of STOREFRONT) expect(product).not.toHaveProperty('cursor');
  });

  it('build price events that are valid PriceEvent', () => {
    const events = [...BASIC_EVENTS, ...resetEvents()];
    expect(events).toHaveLength(BASIC_EVENTS.length + RESET_EVENT_COUNT);
    for (const event of events) {
      const violations = spec.validateComponent('PriceEvent', event);
      if (violations.length > 0) expect(violations, JSON.stringify(event)).toEqual([]);
    }
  });
});
