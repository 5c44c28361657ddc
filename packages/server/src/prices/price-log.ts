// The port every price log engine implements (SqlitePriceLog, RedisPriceLog). One conformance
// suite (test/prices/price-log.suite.ts) runs against each adapter.
//
// Guarantees every adapter gives:
// - ids are integers, strictly increasing across all topics and processes, never reused (also
//   after a crash and restart);
// - an appended event is durable before append() resolves;
// - the newest RETAINED_EVENTS events are readable; older ones are never returned, even when the
//   engine still stores them;
// - the latest event of each (product, variant, source, market) ever appended is kept, written
//   in the same atomic step as the append (so no reader sees one without the other), and read
//   together with the newest id it reflects (latestPrices): the hand-over from that snapshot to
//   a stream resumed after `position` misses and repeats nothing. It is lost only with the log
//   itself (Redis without persistence), after which the stream's `reset` rule applies.
import { InvalidRequest } from '../catalog/errors.ts';
import type { PriceEvent } from '../catalog/model.ts';
import { storedJson, type RawJson } from '../catalog/raw-json.ts';

export { RETAINED_EVENTS } from '@catalog/contract/stream';

export interface StoredPriceEvent {
  id: number;
  /** `price:<source>:<market>`, derived from the payload at append time. */
  topic: string;
  /** The payload exactly as published, as JSON text. */
  data: string;
}

/** Which of a product's latest prices to read: one source, one market (two lowercase letters), or all. */
export interface LatestPricesQuery {
  source?: string;
  market?: string;
}

/** One product's latest prices and the newest id they reflect (see PriceLog.latestPrices). */
export interface LatestPrices {
  /**
   * The latest event of each (variant, source, market) of the product that the query selects,
   * ascending by id: the payloads as published, as one JSON array.
   */
  data: RawJson<PriceEvent[]>;
  /**
   * The newest id in the log when the snapshot was read (0 when the log is empty): every event
   * up to it is reflected, none after it.
   */
  position: number;
}

export interface PriceLog {
  /** Appends in order, assigning ids; resolves with the stored events. */
  append(events: readonly PriceEvent[] | readonly string[]): Promise<StoredPriceEvent[]>;
  /** Retained events with id > afterId, ascending, at most `limit`. */
  readAfter(afterId: number, limit: number): Promise<StoredPriceEvent[]>;
  /** The latest event of each (variant, source, market) of a product, narrowed by `query`, read with its position in one consistent read. */
  latestPrices(productId: string, query?: LatestPricesQuery): Promise<LatestPrices>;
  /** The oldest retained id and the newest id, or null when the log is empty. */
  bounds(): Promise<{ oldestId: number; newestId: number } | null>;
  /**
   * Live tail: yields every event appended after `afterId` (by any process), in id order, until
   * `signal` aborts. Adapters poll or block; delivery latency is adapter-specific.
   */
  follow(afterId: number, signal: AbortSignal): AsyncIterable<StoredPriceEvent>;
  /** Throws ServiceUnavailable when the engine cannot answer; used by /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** The topic of a payload: `price:<source>:<market in lowercase>`. */
export function topicOf(event: Pick<PriceEvent, 'source' | 'market'>): string {
  return `price:${event.source}:${event.market.toLowerCase()}`;
}

/**
 * What an adapter stores for one appended item: a string is kept byte for byte (the payload
 * "exactly as published"), an object is serialised once. Throws InvalidRequest when the payload
 * is not a JSON object with a string `source` and `market`, so no adapter stores an unroutable event.
 */
export interface AppendRecord {
  topic: string;
  data: string;
  /** Where the latest-price store keeps it: the product, and `variant_id|source|market` within it; null without both ids. */
  latest: { productId: string; key: string } | null;
}

export function toAppendRecord(item: PriceEvent | string): AppendRecord {
  const data = typeof item === 'string' ? item : JSON.stringify(item);
  const payload: unknown = typeof item === 'string' ? parseJson(item) : item;
  if (typeof payload !== 'object' || payload === null) throw new InvalidRequest('A price event must be a JSON object.');
  const { source, market } = payload as Record<string, unknown>;
  if (typeof source !== 'string' || typeof market !== 'string' || source === '' || market === '') {
    throw new InvalidRequest('A price event needs a string "source" and "market".');
  }
  const { product_id: productId, variant_id: variantId } = payload as Record<string, unknown>;
  const latest =
    typeof productId === 'string' && typeof variantId === 'string' && productId !== '' && variantId !== ''
      ? { productId, key: `${variantId}|${source}|${market}` }
      : null;
  return { topic: topicOf({ source: source as PriceEvent['source'], market }), data, latest };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidRequest('A price event must be valid JSON.');
  }
}

/**
 * The payloads of `events` (a product's latest, ascending by id) that `query` selects, as one JSON
 * array: for a log that reads the events themselves (Redis). The topic
 * (`price:<source>:<market in lowercase>`) answers both without a parse of the payload.
 */
export function latestPricesJson(events: readonly StoredPriceEvent[], query: LatestPricesQuery = {}): RawJson<PriceEvent[]> {
  const data: string[] = [];
  for (const event of events) {
    const [, source, market] = event.topic.split(':');
    if ((query.source === undefined || source === query.source) && (query.market === undefined || market === query.market)) data.push(event.data);
  }
  return storedJson<PriceEvent[]>(`[${data.join(',')}]`);
}

/**
 * Where a reader of the log resumes after `requestedId` (a stream's Last-Event-ID, a price
 * monitor's position): right after it, unless the events after it are gone. An id above every id
 * the log holds was issued by a log that lost its data (a new log's ids start above every earlier
 * one): resume after the newest event. An id older than the retained window: resume at the oldest
 * event. Either way `resetOldestId` is the first id delivered again (the stream's `reset`).
 */
export function resumePoint(requestedId: number, bounds: { oldestId: number; newestId: number } | null): { cursor: number; resetOldestId: number | null } {
  const newestId = bounds?.newestId ?? 0;
  if (requestedId > newestId) return { cursor: newestId, resetOldestId: newestId + 1 };
  if (bounds !== null && requestedId < bounds.oldestId - 1) return { cursor: bounds.oldestId - 1, resetOldestId: bounds.oldestId };
  return { cursor: requestedId, resetOldestId: null };
}
