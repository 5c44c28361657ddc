// Small data builders for price events and topics.
import type { PriceEvent } from '../../src/catalog/model.ts';

export const TOPICS = ['price:marketplacea:us', 'price:marketplacea:uk', 'price:marketplaceb:us', 'price:marketplaceb:nl'] as const;

let counter = 0;

export function buildPriceEvent(overrides: Partial<PriceEvent> = {}): PriceEvent {
  counter += 1;
  return {
    source: 'marketplacea',
    product_id: '3f0e9a8c-6f0b-4c55-9d8e-2a1b7c4d5e6f',
    variant_id: `variant-${counter}`,
    size: '10.5',
    price: 189.99,
    currency: 'USD',
    market: 'US',
    sku: 'DD1391-100',
    timestamp: '2026-11-23T14:03:07.123456789Z',
    ...overrides,
  };
}

/** A price event on `topic` (`price:<source>:<market>`). */
export function eventOnTopic(topic: string | undefined): PriceEvent {
  const [, source = 'marketplacea', market = 'us'] = (topic ?? TOPICS[0]).split(':');
  return buildPriceEvent({ source: source as PriceEvent['source'], market: market.toUpperCase() });
}
