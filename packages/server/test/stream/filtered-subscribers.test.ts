import { describe, expect, it } from 'vitest';
import type { StoredPriceEvent } from '../../src/prices/price-log.ts';
import { parseEventFilter } from '../../src/stream/event-filter.ts';
import { FilteredSubscribers } from '../../src/stream/filtered-subscribers.ts';
import { buildPriceEvent } from '@catalog/contract/testing';

const US = 'price:marketplacea:us';
const subscriber = (name: string) => ({ name, topics: new Set([US]) });
const event = (id: number, fields: Parameters<typeof buildPriceEvent>[0]): StoredPriceEvent => ({
  id,
  topic: US,
  data: JSON.stringify(buildPriceEvent({ source: 'marketplacea', market: 'US', ...fields })),
});

describe('FilteredSubscribers', () => {
  it('delivers an event found by two of its ids once', () => {
    const subscribers = new FilteredSubscribers<ReturnType<typeof subscriber>>();
    const both = subscriber('both');
    subscribers.add(both, parseEventFilter('product_id = p1 OR sku = S-1'));
    const delivered: string[] = [];
    subscribers.forEachMatch(event(1, { product_id: 'p1', sku: 'S-1' }), (to) => delivered.push(to.name));
    subscribers.forEachMatch(event(2, { product_id: 'p1', sku: 'S-1' }), (to) => delivered.push(to.name));
    expect(delivered).toEqual(['both', 'both']);
  });

  it('counts its subscribers and forgets the deleted ones', () => {
    const subscribers = new FilteredSubscribers<ReturnType<typeof subscriber>>();
    const indexed = subscriber('indexed');
    const scanned = subscriber('scanned');
    subscribers.add(indexed, parseEventFilter('product_id = p1'));
    subscribers.add(scanned, parseEventFilter('price < 100'));
    expect(subscribers.size).toBe(2);
    subscribers.delete(indexed);
    subscribers.delete(indexed);
    expect(subscribers.size).toBe(1);
    const delivered: string[] = [];
    subscribers.forEachMatch(event(1, { product_id: 'p1', price: 50 }), (to) => delivered.push(to.name));
    expect(delivered).toEqual(['scanned']);
  });
});
