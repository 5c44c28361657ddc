import { describe, expect, it } from 'vitest';
import type { StoredPriceEvent } from '../../src/prices/price-log.ts';
import { parseEventFilter } from '../../src/stream/event-filter.ts';
import { FilteredSubscribers } from '../../src/stream/filtered-subscribers.ts';
import { buildPriceEvent } from '@catalog/contract/testing';

const US = 'price:marketplacea:us';
const NL = 'price:marketplaceb:nl';
const subscriber = (name: string, topics: string[] = [US]) => ({ name, topics: new Set(topics) });
const event = (id: number, fields: Parameters<typeof buildPriceEvent>[0], topic = US): StoredPriceEvent => ({
  id,
  topic,
  data: JSON.stringify(buildPriceEvent({ source: topic === US ? 'marketplacea' : 'marketplaceb', market: topic === US ? 'US' : 'NL', ...fields })),
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

  it('delivers every one of many events to a subscriber found by id', () => {
    const subscribers = new FilteredSubscribers<ReturnType<typeof subscriber>>();
    subscribers.add(subscriber('p1'), parseEventFilter('product_id = p1'));
    let delivered = 0;
    for (let id = 1; id <= 100; id += 1) subscribers.forEachMatch(event(id, { product_id: 'p1' }), () => (delivered += 1));
    expect(delivered).toBe(100);
  });

  it('delivers by the ids an event has, and skips without failing an event whose data is not a JSON object', () => {
    const subscribers = new FilteredSubscribers<ReturnType<typeof subscriber>>();
    subscribers.add(subscriber('p1'), parseEventFilter('product_id = p1 OR sku = S-1'));
    const delivered: number[] = [];
    const deliver = (id: number) => () => delivered.push(id);
    const { sku: _sku, ...withoutSku } = buildPriceEvent({ product_id: 'p1' });
    subscribers.forEachMatch({ id: 1, topic: US, data: JSON.stringify(withoutSku) }, deliver(1));
    for (const data of ['null', '[1]', '7', '"p1"']) subscribers.forEachMatch({ id: 2, topic: US, data }, deliver(2));
    subscribers.forEachMatch(event(3, { product_id: 'p1' }), deliver(3));
    expect(delivered).toEqual([1, 3]);
  });

  it('delivers an event found by two of its ids once also when ids are beyond 32 bits (the logs issue 16-digit ids)', () => {
    const subscribers = new FilteredSubscribers<ReturnType<typeof subscriber>>();
    subscribers.add(subscriber('both'), parseEventFilter('product_id = p1 OR sku = S-1'));
    const delivered: number[] = [];
    for (const id of [1_764_000_000_000_001, 1_764_000_000_000_002]) {
      subscribers.forEachMatch(event(id, { product_id: 'p1', sku: 'S-1' }), () => delivered.push(id));
    }
    expect(delivered).toEqual([1_764_000_000_000_001, 1_764_000_000_000_002]);
  });

  it('delivers by each subscriber’s own topics while subscribers with the same and other topics come and go', () => {
    const subscribers = new FilteredSubscribers<ReturnType<typeof subscriber>>();
    const filter = parseEventFilter('product_id = p1');
    const us = subscriber('us');
    const both = subscriber('both', [NL, US]);
    const nl = subscriber('nl', [NL]);
    for (const s of [us, both, nl]) subscribers.add(s, filter);
    const names = (id: number, topic: string): string[] => {
      const delivered: string[] = [];
      subscribers.forEachMatch(event(id, { product_id: 'p1' }, topic), (to) => delivered.push(to.name));
      return delivered.sort();
    };
    expect(names(1, US)).toEqual(['both', 'us']);
    expect(names(2, NL)).toEqual(['both', 'nl']);
    subscribers.delete(us);
    subscribers.delete(both);
    const us2 = subscriber('us2');
    const both2 = subscriber('both2', [US, NL]);
    subscribers.add(us2, filter);
    subscribers.add(both2, filter);
    expect(names(3, US)).toEqual(['both2', 'us2']);
    expect(names(4, NL)).toEqual(['both2', 'nl']);
  });

  it('evaluates the rest of a filter narrowed by ids, and filters without ids, on the event’s other fields', () => {
    const subscribers = new FilteredSubscribers<ReturnType<typeof subscriber>>();
    subscribers.add(subscriber('cheap p1'), parseEventFilter('product_id = p1 AND price < 100'));
    subscribers.add(subscriber('p1'), parseEventFilter('product_id = p1'));
    subscribers.add(subscriber('cheap'), parseEventFilter('price < 100'));
    const names = (id: number, price: number): string[] => {
      const delivered: string[] = [];
      subscribers.forEachMatch(event(id, { product_id: 'P1', price }), (to) => delivered.push(to.name));
      return delivered.sort();
    };
    expect(names(1, 150)).toEqual(['p1']);
    expect(names(2, 50)).toEqual(['cheap', 'cheap p1', 'p1']);
  });

  it('forgets a subscriber listed between others under the same id, and only it', () => {
    const subscribers = new FilteredSubscribers<ReturnType<typeof subscriber>>();
    const [first, middle, last] = ['first', 'middle', 'last'].map((name) => subscriber(name));
    for (const s of [first!, middle!, last!]) subscribers.add(s, parseEventFilter('product_id IN [p1, p2]'));
    subscribers.delete(middle!);
    for (const [id, product] of [[1, 'p1'], [2, 'p2']] as const) {
      const delivered: string[] = [];
      subscribers.forEachMatch(event(id, { product_id: product }), (to) => delivered.push(to.name));
      expect(delivered.sort()).toEqual(['first', 'last']);
    }
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
