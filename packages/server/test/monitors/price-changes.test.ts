import { describe, expect, it } from 'vitest';
import { buildPriceEvent } from '@catalog/contract/testing';
import { compileMonitorFilter, parsePriceEvent, priceChangesOf, type ParsedPriceEvent } from '../../src/monitors/price-changes.ts';

let id = 0;
const stored = (overrides: Parameters<typeof buildPriceEvent>[0]): ParsedPriceEvent => {
  const event = buildPriceEvent({ product_id: 'p1', variant_id: 'v1', market: 'US', ...overrides });
  return parsePriceEvent({ id: (id += 1), topic: `price:${event.source}:${event.market.toLowerCase()}`, data: JSON.stringify(event) });
};
const us = compileMonitorFilter('market = "us"');

describe('priceChangesOf', () => {
  it('delivers the first price with no previous one, then only moves of at least the threshold from the last delivered price', () => {
    const events = [stored({ price: 100 }), stored({ price: 104 }), stored({ price: 96 }), stored({ price: 95 }), stored({ price: 90.25 })];
    const { changes, baselines } = priceChangesOf(events, us, 5, {});
    expect(changes.map(({ price, previous_price, change_percent }) => [previous_price, price, change_percent])).toEqual([
      [null, 100, null],
      [100, 95, -5],
      [95, 90.25, -5],
    ]);
    expect(baselines).toEqual({ 'v1|marketplacea|US': 90.25 });
  });

  it('keeps a baseline per variant, source and market, and skips what the filter does not match', () => {
    const events = [stored({ price: 100 }), stored({ source: 'marketplaceb', price: 100 }), stored({ market: 'UK', price: 1 }), stored({ variant_id: 'v2', price: 50 })];
    const before = { 'v1|marketplacea|US': 100, 'v3|marketplacea|US': 7 };
    const { changes, baselines } = priceChangesOf(events, us, 5, before);
    expect(changes.map((change) => [change.variant_id, change.source, change.previous_price])).toEqual([
      ['v1', 'marketplaceb', null],
      ['v2', 'marketplacea', null],
    ]);
    // Only the baselines the changes set; the ones given are left as they were.
    expect(baselines).toEqual({ 'v1|marketplaceb|US': 100, 'v2|marketplacea|US': 50 });
    expect(before).toEqual({ 'v1|marketplacea|US': 100, 'v3|marketplacea|US': 7 });
  });

  it('with 0 %, delivers every change of price but not a repeat of the same price', () => {
    const { changes } = priceChangesOf([stored({ price: 100 }), stored({ price: 100 }), stored({ price: 100.01 })], us, 0, {});
    expect(changes.map((change) => change.price)).toEqual([100, 100.01]);
  });

  it('delivers a move away from 0 with no percent, and nothing for a filter that no longer parses', () => {
    expect(priceChangesOf([stored({ price: 10 })], us, 5, { 'v1|marketplacea|US': 0 }).changes[0]).toMatchObject({ previous_price: 0, change_percent: null });
    expect(priceChangesOf([stored({ price: 10 })], compileMonitorFilter('nonsense ==='), 0, {}).changes).toEqual([]);
  });
});
