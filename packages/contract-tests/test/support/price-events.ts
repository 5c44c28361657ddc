// The price events the stream tests publish. The golden transcripts in specs/streams/ were written
// from these lists once and are compared byte for byte; change one and the other must change too.
import type { PriceEvent } from '@catalog/contract';
import { buildPriceEvent } from '@catalog/contract/testing';
import { DUNK_VARIANT_ID } from './fixtures.ts';

/** Topics the basic session subscribes to; events on other topics must not reach it. */
export const BASIC_TOPICS = 'price:marketplacea:us, price:marketplacea:uk';

/** Published in this order on a fresh price log, so they get ids 1 to 6. */
export const BASIC_EVENTS: PriceEvent[] = [
  buildPriceEvent({ variant_id: DUNK_VARIANT_ID }),
  buildPriceEvent({ variant_id: DUNK_VARIANT_ID, market: 'UK', currency: 'GBP', price: 165, size: '9.5', timestamp: '2026-11-23T14:03:08.000000001Z' }),
  buildPriceEvent({ variant_id: DUNK_VARIANT_ID, source: 'marketplaceb', market: 'NL', currency: 'EUR', price: 172.25, timestamp: '2026-11-23T14:03:09.500000000Z' }),
  buildPriceEvent({ variant_id: DUNK_VARIANT_ID, source: 'marketplaceb', market: 'US', price: 181, timestamp: '2026-11-23T14:03:10.000000000Z' }),
  buildPriceEvent({ variant_id: DUNK_VARIANT_ID, price: 179.5, timestamp: '2026-11-23T14:04:00.999999999Z' }),
  buildPriceEvent({ variant_id: DUNK_VARIANT_ID, market: 'UK', currency: 'GBP', price: 0, size: '9.5', sku: 'DD1391-100', timestamp: '2026-11-23T14:05:00.000000000Z' }),
];

/** Ids the basic session receives: its topics only, in id order. */
export const BASIC_DELIVERED_IDS = [1, 2, 5, 6];

/** More events than the 5,000 the log retains, so a resume from id 1 starts with `reset`. */
export const RESET_EVENT_COUNT = 5010;
export const RETAINED = 5000;
export const RESET_TOPICS = 'price:marketplacea:us';

export function resetEvents(): PriceEvent[] {
  return Array.from({ length: RESET_EVENT_COUNT }, (_, i) =>
    buildPriceEvent({
      price: 100 + i,
      variant_id: `v${i + 1}`,
      timestamp: `2026-11-23T15:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}.${String(i).padStart(9, '0')}Z`,
    }),
  );
}
