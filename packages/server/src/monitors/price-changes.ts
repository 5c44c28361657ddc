// What a monitor delivers of the price events it reads: each event its filter matches whose price
// is at least `minChangePercent` away from the last price delivered to that monitor for the same
// (variant, source, market), its baseline. The first price of a (variant, source, market) is
// delivered with no previous price, so the receiver knows what later changes are measured
// against. Pure: the delivery worker reads the events and stores the result, the baselines its
// changes set included, in one step (monitor-store.ts).
import type { PriceChange } from '@catalog/contract';
import type { StoredPriceEvent } from '../prices/price-log.ts';
import { eventFieldsOfPayload, eventPayloadOf, parseEventFilter, type EventFields, type EventFilter } from '../stream/event-filter.ts';

/** The last delivered price per `variant_id|source|market`. */
export type Baselines = Record<string, number>;

export interface ChangesRead {
  changes: PriceChange[];
  /** The baselines `changes` set (each the last of its key's changes); the others are as they were. */
  baselines: Baselines;
}

/** A monitor's filter, compiled once per reader round; a filter that no longer parses matches nothing. */
export function compileMonitorFilter(text: string): EventFilter | null {
  try {
    return parseEventFilter(text);
  } catch {
    return null;
  }
}

/** A logged event parsed once per reader round, for every monitor that reads it. */
export interface ParsedPriceEvent {
  id: number;
  payload: Readonly<Record<string, unknown>> | null;
  fields: EventFields;
}

export function parsePriceEvent(event: StoredPriceEvent): ParsedPriceEvent {
  const payload = eventPayloadOf(event.data);
  return { id: event.id, payload, fields: eventFieldsOfPayload(payload) };
}

/** The changes of `events` (ascending ids) for one monitor whose baselines are `baselines` (not modified), and the baselines they set. */
export function priceChangesOf(events: readonly ParsedPriceEvent[], filter: EventFilter | null, minChangePercent: number, baselines: Readonly<Baselines>): ChangesRead {
  const set: Baselines = {};
  const changes: PriceChange[] = [];
  if (filter === null) return { changes, baselines: set };
  const previousOf = (key: string): number | undefined => set[key] ?? baselines[key];
  for (const event of events) {
    if (event.payload === null || !filter.matches(event.fields)) continue;
    const change = changeOf(event.id, event.payload, previousOf, minChangePercent);
    if (change === null) continue;
    set[baselineKey(change)] = change.price;
    changes.push(change);
  }
  return { changes, baselines: set };
}

const baselineKey = (change: Pick<PriceChange, 'variant_id' | 'source' | 'market'>): string => `${change.variant_id}|${change.source}|${change.market}`;

function changeOf(streamId: number, payload: Readonly<Record<string, unknown>>, previousOf: (key: string) => number | undefined, minChangePercent: number): PriceChange | null {
  const { product_id, variant_id, sku, size, source, market, currency, price, timestamp } = payload;
  // The log holds what was published; only events of the PriceEvent shape make a change.
  if (typeof price !== 'number' || typeof product_id !== 'string' || typeof variant_id !== 'string' || typeof source !== 'string' || typeof market !== 'string') return null;
  const key = baselineKey({ variant_id, source: source as PriceChange['source'], market });
  const previous = previousOf(key);
  let changePercent: number | null = null;
  if (previous !== undefined) {
    if (price === previous) return null;
    changePercent = previous === 0 ? null : Math.round(((price - previous) / previous) * 10_000) / 100;
    if (changePercent !== null && Math.abs((price - previous) / previous) * 100 < minChangePercent) return null;
  }
  return {
    stream_id: streamId,
    product_id,
    variant_id,
    sku: typeof sku === 'string' ? sku : '',
    size: typeof size === 'string' ? size : '',
    source: source as PriceChange['source'],
    market,
    currency: typeof currency === 'string' ? currency : '',
    previous_price: previous ?? null,
    price,
    change_percent: changePercent,
    timestamp: typeof timestamp === 'string' ? timestamp : '',
  };
}
