// The port every price log engine implements (SqlitePriceLog, RedisPriceLog). One conformance
// suite (test/prices/price-log.suite.ts) runs against each adapter.
//
// Guarantees every adapter gives:
// - ids are integers, strictly increasing across all topics and processes, never reused (also
//   after a crash and restart);
// - an appended event is durable before append() resolves;
// - the newest RETAINED_EVENTS events are readable; older ones are never returned, even when the
//   engine still stores them.
import { InvalidRequest } from '../catalog/errors.ts';
import type { PriceEvent } from '../catalog/model.ts';

export { RETAINED_EVENTS } from '@catalog/contract/stream';

export interface StoredPriceEvent {
  id: number;
  /** `price:<source>:<market>`, derived from the payload at append time. */
  topic: string;
  /** The payload exactly as published, as JSON text. */
  data: string;
}

export interface PriceLog {
  /** Appends in order, assigning ids; resolves with the stored events. */
  append(events: readonly PriceEvent[] | readonly string[]): Promise<StoredPriceEvent[]>;
  /** Retained events with id > afterId, ascending, at most `limit`. */
  readAfter(afterId: number, limit: number): Promise<StoredPriceEvent[]>;
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
export function toAppendRecord(item: PriceEvent | string): { topic: string; data: string } {
  const data = typeof item === 'string' ? item : JSON.stringify(item);
  const payload: unknown = typeof item === 'string' ? parseJson(item) : item;
  if (typeof payload !== 'object' || payload === null) throw new InvalidRequest('A price event must be a JSON object.');
  const { source, market } = payload as Record<string, unknown>;
  if (typeof source !== 'string' || typeof market !== 'string' || source === '' || market === '') {
    throw new InvalidRequest('A price event needs a string "source" and "market".');
  }
  return { topic: topicOf({ source: source as PriceEvent['source'], market }), data };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new InvalidRequest('A price event must be valid JSON.');
  }
}
