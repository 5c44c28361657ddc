// Small data builders for price events and topics.
import type { PriceEvent } from '../../src/catalog/model.ts';
import type { PriceLog } from '../../src/prices/price-log.ts';

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

/** An empty price log whose follow() fails soon after it starts, as a disk or a server gone away. */
export function logWhoseFollowFails(): PriceLog {
  return {
    append: async () => [],
    readAfter: async () => [],
    bounds: async () => null,
    follow: async function* () {
      await new Promise((resolve) => setTimeout(resolve, 10));
      yield* [];
      throw new Error('disk gone');
    },
    ping: async () => {},
    close: async () => {},
  };
}
