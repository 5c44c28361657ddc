// The port every price log engine implements (SqlitePriceLog, RedisPriceLog). One conformance
// suite (test/prices/price-log.suite.ts) runs against each adapter.
//
// Guarantees every adapter gives:
// - ids are integers, strictly increasing across all topics and processes, never reused (also
//   after a crash and restart);
// - an appended event is durable before append() resolves;
// - the newest RETAINED_EVENTS events are readable; older ones are never returned, even when the
//   engine still stores them.
import type { PriceEvent } from '../catalog/model.ts';

export const RETAINED_EVENTS = 5000;

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
